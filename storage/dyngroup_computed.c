#include "storage/dyngroup_computed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/array.h"
#include "storage/db_impl.h"

static int dn_cmp(const struct berval *a, const struct berval *b)
{
	if (a->bv_len != b->bv_len)
		return a->bv_len < b->bv_len ? -1 : 1;
	return memcmp(a->bv_val, b->bv_val, a->bv_len);
}

static int dn_cmp_qsort(const void *a, const void *b)
{
	return dn_cmp(a, b);
}

int dyngroup_computed_load(const struct db *db, struct db_read *rd, entry_id group,
                           struct dyngroup_computed *c)
{
	MDB_txn *txn = db_read_txn(rd);
	c->n = 0;
	if (!db->has_dynmembers)
		return 0;
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn, db->dynmembers, &cur);
	if (rc)
		return rc;
	MDB_val k = {sizeof(group), &group}, v;
	for (int op = MDB_SET; (rc = mdb_cursor_get(cur, &k, &v, op)) == 0; op = MDB_NEXT_DUP) {
		entry_id member;
		struct entry_view e;
		if (v.mv_size != sizeof(member)) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(&member, v.mv_data, sizeof(member));
		if (member == 0)
			continue; /* the mark of a dynamic group, not a member */
		if ((rc = db_get_entry(db, rd, member, &e)) == MDB_NOTFOUND)
			continue; /* no entry: no value names it */
		if (rc)
			break;
		if (!ARRAY_ROOM_FOR(c->dn, c->cap, c->n, 64)) {
			rc = ENOMEM;
			break;
		}
		c->dn[c->n++] = (struct berval){e.dnlen, (char *)e.dn};
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return rc;
	free(c->taken);
	if (!(c->taken = calloc(c->n + 1, sizeof(*c->taken))))
		return ENOMEM;
	qsort(c->dn, c->n, sizeof(*c->dn), dn_cmp_qsort);
	return 0;
}

bool dyngroup_computed_take(struct dyngroup_computed *c, const struct berval *v)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) { /* the first not below v */
		size_t mid = lo + (hi - lo) / 2;
		if (dn_cmp(&c->dn[mid], v) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->n && dn_cmp(&c->dn[lo], v) == 0; lo++)
		if (!c->taken[lo])
			return c->taken[lo] = true;
	return false;
}

void dyngroup_computed_free(struct dyngroup_computed *c)
{
	free(c->dn);
	free(c->taken);
	*c = (struct dyngroup_computed){0};
}
