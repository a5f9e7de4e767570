#include "storage/memberof_chain.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "storage/db_impl.h"
#include "storage/idset.h"
#include "storage/db_fault.h"
#include "storage/memberof.h"

void memberof_chain_free(struct memberof_chain_scratch *s)
{
	buf_free(&s->key);
	buf_free(&s->step);
}

/* Sets s->step to the IDs one step from id: its members (ix, down) or its groups (up),
 * through cur, the walk's cursor on eq.memberof or memberof. */
static int step(const struct db *db, MDB_txn *txn, const struct db_index *ix, MDB_cursor *cur,
                entry_id id, struct memberof_chain_scratch *s)
{
	s->step.off = s->step.len = 0;
	if (!ix) {
		MDB_val k = {sizeof(id), &id};
		return memberof_cursor_ids(cur, k, &s->step);
	}
	int rc = memberof_group_key(db, db_read_of(txn), ix, id, &s->key);
	if (rc == MDB_NOTFOUND)
		return 0; /* a stale link: nothing below it */
	if (rc || s->key.len == 0)
		return rc;
	MDB_val k = {db_index_keylen(s->key.len), s->key.data};
	return memberof_cursor_ids(cur, k, &s->step);
}

static int id_cmp(const void *a, const void *b)
{
	entry_id x, y;
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return (x > y) - (x < y);
}

int memberof_chain(const struct db *db, struct db_read *rd, entry_id start,
                   enum memberof_chain_way way, size_t max, struct buf *ids,
                   struct memberof_chain_scratch *s)
{
	MDB_txn *txn = db_read_txn(rd);
	const struct db_index *ix = NULL;
	ids->off = ids->len = 0;
	if (way == MEMBEROF_CHAIN_MEMBERS && !(ix = db_index_find(db, "memberOf", 8)))
		return MDB_NOTFOUND;
	struct idset seen = {0};
	bool added;
	MDB_cursor *cur;
	int rc = db_cursor_open(txn, ix ? ix->dbi : db->memberof, &cur);
	if (rc)
		return rc;
	/* ids is the walk's queue too: ids[next..] are reached and not yet followed. start is
	 * followed first, and once more never (reached again through a cycle, it is only
	 * listed). */
	rc = step(db, txn, ix, cur, start, s);
	for (size_t next = 0; rc == 0;) {
		for (size_t i = 0; rc == 0 && i < ids_count(&s->step); i++) {
			entry_id id = ids_at(&s->step, i);
			if ((rc = idset_add(&seen, id, &added)) != 0 || !added)
				continue;
			if (buf_append(ids, &id, sizeof(id)) < 0)
				rc = ENOMEM;
			else if (ids_count(ids) > max)
				rc = E2BIG;
		}
		while (rc == 0 && next < ids_count(ids) && ids_at(ids, next) == start)
			next++;
		if (rc || next == ids_count(ids))
			break;
		rc = step(db, txn, ix, cur, ids_at(ids, next++), s);
	}
	db_cursor_close(cur);
	idset_free(&seen);
	if (rc == 0 && ids_count(ids) > 1) /* none: ids->data may be NULL */
		qsort(ids->data, ids_count(ids), sizeof(entry_id), id_cmp);
	return rc;
}
