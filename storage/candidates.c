#include "storage/candidates.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "storage/db_fault.h"
#include "storage/db_impl.h"
#include "storage/memo_counts.h"

void cand_init_one(struct candidates *c, entry_id id)
{
	memset(c, 0, sizeof(*c));
	c->kind = CAND_ONE;
	c->last = id;
}

void cand_init_children(struct candidates *c, const struct db *db, entry_id parent)
{
	memset(c, 0, sizeof(*c));
	c->kind = CAND_CHILDREN;
	c->dbi = db->children;
	c->parent = parent;
}

void cand_init_subtree(struct candidates *c, const struct db *db, const void *key, size_t keylen)
{
	memset(c, 0, sizeof(*c));
	c->kind = CAND_SUBTREE;
	c->dbi = db->dn2id;
	c->key = key;
	c->keylen = keylen;
}

void cand_init_index(struct candidates *c, const struct db *db, const struct db_index *ix,
                     const void *value, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->kind = CAND_INDEX;
	c->memo = db->index_memo.slot ? &db->index_memo : NULL;
	c->dbi = ix->dbi;
	c->key = value;
	c->keylen = db_index_keylen(len);
}

void cand_init_list(struct candidates *c, const entry_id *ids, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->kind = CAND_LIST;
	c->list = ids;
	c->keylen = n;
}

static MDB_val key_of(const struct candidates *c)
{
	if (c->kind == CAND_CHILDREN)
		return (MDB_val){sizeof(c->parent), (void *)&c->parent};
	MDB_val k = {c->keylen, (void *)c->key};
	if (k.mv_size == 0)
		k.mv_data = (void *)"";
	return k;
}

size_t cand_count(struct candidates *c, struct db_read *rd)
{
	MDB_txn *txn = db_read_txn(rd);
	if (c->kind == CAND_ONE)
		return 1;
	if (c->kind == CAND_SUBTREE)
		return SIZE_MAX;
	if (c->kind == CAND_LIST)
		return c->keylen;
	MDB_cursor *cur;
	if (db_cursor_open(txn, c->dbi, &cur) != 0)
		return SIZE_MAX;
	MDB_val k = key_of(c), v;
	size_t n = 0;
	if (k.mv_size > 0 && mdb_cursor_get(cur, &k, &v, MDB_SET) == 0 &&
	    mdb_cursor_count(cur, &n) != 0)
		n = SIZE_MAX;
	db_cursor_close(cur);
	return n;
}

void cand_begin(struct candidates *c, struct db_read *rd, struct cursor_pool *pool)
{
	MDB_txn *txn = db_read_txn(rd);
	c->positioned = false; /* a renewed cursor (or a new one) sits nowhere */
	c->txn = txn;
	c->pool = pool;
}

static int take_cursor(struct candidates *c)
{
	return c->cursor ? 0 : cursor_pool_take(c->pool, c->txn, c->dbi, &c->cursor);
}

void cand_end(struct candidates *c, struct cursor_pool *pool)
{
	if (c->cursor) {
		cursor_pool_give(pool, c->cursor);
		c->cursor = NULL;
	}
	c->txn = NULL;
	c->pool = NULL;
}

void cand_free(struct candidates *c)
{
	cand_end(c, NULL);
	buf_free(&c->pos);
}

void cand_where(const struct candidates *c, const struct db *db, char *out, size_t cap)
{
	char key[80];
	const char *at = c->started ? "after" : "before the first";
	switch (c->kind) {
	case CAND_ONE:
	case CAND_LIST:
		snprintf(out, cap, "entry ID %lu", (unsigned long)c->last);
		break;
	case CAND_SUBTREE:
		if (c->started)
			db_key_printable(c->pos.data, c->pos.len, key, sizeof(key));
		else
			db_key_printable(c->key, c->keylen, key, sizeof(key));
		snprintf(out, cap, "table dn2id, %s key \"%s\"", c->started ? "after" : "from",
		         key);
		break;
	case CAND_CHILDREN:
		snprintf(out, cap, "table children, parent ID %lu, %s ID %lu",
		         (unsigned long)c->parent, at, (unsigned long)c->last);
		break;
	case CAND_INDEX: {
		const char *attr = "?";
		for (int i = 0; i < db->nindex; i++)
			if (db->index[i].dbi == c->dbi)
				attr = db->index[i].attr;
		db_key_printable(c->key, c->keylen, key, sizeof(key));
		snprintf(out, cap, "table eq.%s, key \"%s\", %s ID %lu", attr, key, at,
		         (unsigned long)c->last);
		break;
	}
	}
}

/* The first ID under key k (positioning the cursor, unless the file's memo has the key: an
 * index key found to hold one ID goes into it). Returns 0, MDB_NOTFOUND or an LMDB error. */
static inline __attribute__((always_inline)) int first_dup(struct candidates *c, MDB_val *k,
                                                           entry_id *id)
{
	if (c->memo && key_memo_get(c->memo, c->dbi, k->mv_data, k->mv_size, id)) {
		c->single = true;
		if (db_memo_counts)
			db_memo_count(&db_memo_counts->key_hits);
		return 0;
	}
	MDB_val v;
	int rc = take_cursor(c);
	if (rc == 0)
		rc = mdb_cursor_get(c->cursor, k, &v, MDB_SET_KEY);
	if (rc == 0 && v.mv_size != sizeof(*id))
		rc = MDB_CORRUPTED;
	c->positioned = rc == 0;
	if (rc)
		return rc;
	memcpy(id, v.mv_data, sizeof(*id));
	size_t n;
	if (c->memo && mdb_cursor_count(c->cursor, &n) == 0 && n == 1) {
		c->single = true;
		key_memo_put(c->memo, c->dbi, k->mv_data, k->mv_size, *id);
		if (db_memo_counts)
			db_memo_count(&db_memo_counts->key_misses);
	}
	return 0;
}

/* Next duplicate ID after c->last under c->key (children and index sets). */
static inline __attribute__((always_inline)) int next_dup(struct candidates *c, entry_id *id)
{
	MDB_val k = key_of(c), v;
	int rc;
	if (k.mv_size == 0) /* an empty index value never has candidates */
		return MDB_NOTFOUND;
	if (!c->started)
		return first_dup(c, &k, id);
	if (c->single)
		return MDB_NOTFOUND;
	if ((rc = take_cursor(c)) != 0)
		return rc;
	if (c->positioned) { /* the same transaction: step, no descent */
		rc = mdb_cursor_get(c->cursor, &k, &v, MDB_NEXT_DUP);
	} else {
		entry_id after = c->last + 1;
		if (after == 0)
			return MDB_NOTFOUND;
		v.mv_size = sizeof(after);
		v.mv_data = &after;
		rc = mdb_cursor_get(c->cursor, &k, &v, MDB_GET_BOTH_RANGE);
	}
	c->positioned = rc == 0;
	if (rc)
		return rc;
	memcpy(id, v.mv_data, sizeof(*id));
	return 0;
}

static inline __attribute__((always_inline)) int next_subtree(struct candidates *c, entry_id *id)
{
	MDB_val k, v;
	int rc;
	if ((rc = take_cursor(c)) != 0)
		return rc;
	if (!c->started) {
		k = key_of(c);
		rc = mdb_cursor_get(c->cursor, &k, &v, MDB_SET_RANGE);
	} else {
		k.mv_size = c->pos.len;
		k.mv_data = c->pos.data;
		rc = mdb_cursor_get(c->cursor, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && k.mv_size == c->pos.len &&
		    memcmp(k.mv_data, c->pos.data, k.mv_size) == 0)
			rc = mdb_cursor_get(c->cursor, &k, &v, MDB_NEXT);
	}
	if (rc)
		return rc;
	if (k.mv_size < c->keylen || (c->keylen && memcmp(k.mv_data, c->key, c->keylen) != 0))
		return MDB_NOTFOUND;
	if (v.mv_size != sizeof(*id))
		return MDB_CORRUPTED;
	c->pos.off = c->pos.len = 0;
	if (buf_append(&c->pos, k.mv_data, k.mv_size) < 0)
		return ENOMEM;
	memcpy(id, v.mv_data, sizeof(*id));
	return 0;
}

/* Always inlined (with LTO) into the search loop: once authz_url.c became a second caller,
 * GCC stopped inlining it there, +49 instructions an entry of a 100-entry search. */
__attribute__((always_inline)) inline int cand_next(struct candidates *c, entry_id *id)
{
	if (c->done)
		return MDB_NOTFOUND;
	int rc;
	switch (c->kind) {
	case CAND_ONE:
		rc = c->started ? MDB_NOTFOUND : 0;
		*id = c->last;
		break;
	case CAND_SUBTREE:
		rc = next_subtree(c, id);
		break;
	case CAND_LIST:
		rc = c->at < c->keylen ? 0 : MDB_NOTFOUND;
		if (rc == 0)
			*id = c->list[c->at++];
		break;
	default:
		rc = next_dup(c, id);
		break;
	}
	if (rc == 0) {
		c->started = true;
		c->last = *id;
	} else if (rc == MDB_NOTFOUND) {
		c->done = true;
	}
	return rc;
}
