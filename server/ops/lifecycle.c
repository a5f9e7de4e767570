/*
 * The operations room's life cycle (ops.h): what server/ops/ keeps from start-up to
 * shut-down (its part of the server, ops_impl.h: the compiled access rules, the root DSE
 * and cn=Subschema records) and in each worker (the access rules' decisions, the computed
 * attributes' buffer, the last search base). Start-up calls these, never the files that own the
 * state; and, once at start-up, the warning about a rootpw that is the examples' password.
 */
#include "server/ops/access.h"
#include "server/ops/authz_map.h"
#include "server/ops/sasl_pool.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"

#include <stdlib.h>
#include <string.h>

#include "conf/key_line.h"
#include "server/log.h"
#include "password/password.h"

struct ops_shared *ops_shared_new(void)
{
	struct ops_shared *s = calloc(1, sizeof(*s));
	if (s)
		pthread_mutex_init(&s->lock, NULL);
	return s;
}

void ops_shared_free(struct ops_shared *s)
{
	if (!s)
		return;
	access_rules_release(s->access); /* the last reference: every worker has let go */
	buf_free(&s->rootdse);
	buf_free(&s->subschema);
	authz_map_free(s->authz);
	sasl_pool_stop(s->sasl_pool); /* the workers have stopped: nobody waits for a step */
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int ops_start(struct server *srv)
{
	if (!srv->ops && !(srv->ops = ops_shared_new())) {
		log_error("access rules: out of memory");
		return -1;
	}
	struct access_rules *rules = access_compile(&srv->cfg, srv->cfg.threads);
	if (!rules)
		return -1;
	access_publish(srv, rules);
	if (authz_map_compile(&srv->cfg, &srv->ops->authz) < 0)
		return -1;
	/* The SASL threads, where GSSAPI is offered (sasl_setup ran before) */
	return srv->sasl && !srv->ops->sasl_pool ? sasl_pool_start(&srv->ops->sasl_pool) : 0;
}

void ops_reload_access(struct server *srv, struct config *n)
{
	if (!access_rules_differ(ops_shared(srv)->access, n))
		return;
	struct access_rules *rules = access_compile(n, srv->cfg.threads);
	if (!rules) {
		log_error("SIGHUP: access: the running rules are kept");
		return;
	}
	int count = access_rules_count(rules);
	access_publish(srv, rules);
	log_info("SIGHUP: access rules replaced (%d rules; for operations that start from now "
	         "on)",
	         count);
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
	ops_shared_free(srv->ops);
	srv->ops = NULL;
}

/* The password examples/minidir.conf, the man pages and docs/ give the rootdn. */
#define EXAMPLE_PASSWORD "secret"

bool ops_rootpw_is_example(const struct server *srv)
{
	const char *pw = srv->cfg.rootpw;
	/* The check minidir binds with, so that any form that lets "secret" in is caught:
	 * plaintext, {SSHA} with any salt, {CRYPT}, {ARGON2}, ... */
	if (!pw[0] || !password_check(pw, strlen(pw), EXAMPLE_PASSWORD, strlen(EXAMPLE_PASSWORD)))
		return false;
	char where[CONFIG_KEY_WHERE];
	log_warning("%s: rootpw is the examples' password (\"%s\"): whoever has read them can "
	            "bind as %s and read every attribute, password hashes included; set rootpw "
	            "to a hash of your own password (minidir-passwd prints one)",
	            config_key_where(srv->cfg.path, "rootpw", where), EXAMPLE_PASSWORD,
	            srv->cfg.rootdn);
	return true;
}
