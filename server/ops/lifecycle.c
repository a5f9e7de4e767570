/*
 * The operations room's life cycle (ops.h): what server/ops/ keeps from start-up to
 * shut-down (the compiled access rules, the root DSE and cn=Subschema records in struct
 * server) and in each worker (the access rules' decisions, the computed attributes'
 * buffer, the last search base). Start-up calls these, never the files that own the state.
 */
#include "server/ops/access.h"
#include "server/ops/ops.h"

int ops_start(struct server *srv)
{
	return access_compile(srv);
}

void ops_worker_free(struct worker *w)
{
	access_worker_free(w);
	buf_free(&ops_worker(w)->extra);
	buf_free(&ops_worker(w)->base_dn);
	buf_free(&ops_worker(w)->base_key);
}

void ops_stop(struct server *srv)
{
	access_free(srv);
	buf_free(&srv->rootdse);
	buf_free(&srv->subschema);
}
