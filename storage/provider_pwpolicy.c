/* A 389-ds provider's global password policy in meta: see provider_pwpolicy.h. */
#include "storage/provider_pwpolicy.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "storage/db_impl.h"

static const char meta_key[] = "ds389_pwpolicy";

void provider_pwpolicy_defaults(struct provider_pwpolicy *p)
{
	*p = (struct provider_pwpolicy){.known = true, .warning = 86400};
}

int provider_pwpolicy_get(const struct db *db, struct db_read *rd, struct provider_pwpolicy *p)
{
	*p = (struct provider_pwpolicy){0};
	MDB_val k = {sizeof(meta_key) - 1, (void *)meta_key}, v;
	int rc = mdb_get(db_read_txn(rd), db->meta, &k, &v);
	if (rc)
		return rc == MDB_NOTFOUND ? 0 : rc;
	char text[160];
	if (v.mv_size >= sizeof(text))
		return 0;
	memcpy(text, v.mv_data, v.mv_size);
	text[v.mv_size] = '\0';
	int exp, must, local;
	if (sscanf(text, "exp=%d must_change=%d local=%d grace_limit=%" SCNd64 " warning=%" SCNd64,
	           &exp, &must, &local, &p->grace_limit, &p->warning) != 5)
		return 0;
	p->exp = exp != 0;
	p->must_change = must != 0;
	p->local = local != 0;
	p->known = true;
	return 0;
}

int provider_pwpolicy_put(const struct db *db, struct db_write *wr,
                          const struct provider_pwpolicy *p)
{
	char text[160];
	int n = snprintf(text, sizeof(text),
	                 "exp=%d must_change=%d local=%d grace_limit=%" PRId64 " warning=%" PRId64,
	                 p->exp, p->must_change, p->local, p->grace_limit, p->warning);
	MDB_val k = {sizeof(meta_key) - 1, (void *)meta_key}, v = {(size_t)n, text};
	return mdb_put(db_write_txn(wr), db->meta, &k, &v, 0);
}
