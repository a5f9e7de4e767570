#include "storage/entry_index.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol/schema.h"
#include "protocol/tlv.h"
#include "storage/db_impl.h"

struct writer {
	const struct db *db;
	entry_index_fn *fn;
	void *arg;
	struct buf *val;
	const unsigned char *type; /* as the record names it, for messages */
	size_t tlen;
	char *err;
	size_t errlen;
};

/* Hands fn the normal form of v[0..len) in index ix. */
static int put_key(struct writer *w, const struct db_index *ix, const char *v, size_t len)
{
	w->val->off = w->val->len = 0;
	if (match_normalize(ix->rule, v, len, w->val) < 0) {
		snprintf(w->err, w->errlen, "value of %.*s is not valid: \"%.*s\"", (int)w->tlen,
		         (const char *)w->type, (int)len, v);
		return ENTRY_INDEX_BAD_VALUE;
	}
	if (w->val->len == 0)
		return 0;
	return w->fn(w->arg, ix, w->val->data, db_index_keylen(w->val->len));
}

/* The keys of one value: itself and, for a class, its superclasses. */
static int put_value(struct writer *w, const struct db_index *ix, bool classes, const char *v,
                     size_t len)
{
	int rc = put_key(w, ix, v, len);
	const struct schema_oc *oc = classes && !rc ? schema_oc_find(v, len) : NULL;
	for (size_t k = 0; oc && oc->superclasses[k] && !rc; k++)
		rc = put_key(w, ix, oc->superclasses[k]->oid, strlen(oc->superclasses[k]->oid));
	return rc;
}

/* An entry_index_fn that files each key in the memo, then hands it on. */
struct recorder {
	entry_index_fn *fn;
	void *arg;
	struct buf *keys;
	bool failed; /* out of memory: the memo is not to be kept */
};

static int record_key(void *arg, const struct db_index *ix, const void *key, size_t len)
{
	struct recorder *r = arg;
	uint16_t n = (uint16_t)len; /* at most DB_MAX_INDEX_KEY */
	if (buf_append(r->keys, &n, sizeof(n)) < 0 || buf_append(r->keys, key, len) < 0)
		r->failed = true;
	return r->fn(r->arg, ix, key, len);
}

/* The keys of the objectClass values vals[0..vlen) in ix: replayed from memo when it has
 * them, else made (put_value) and remembered. */
static int class_keys(struct writer *w, const struct db_index *ix, struct entry_index_memo *memo,
                      const unsigned char *vals, size_t vlen)
{
	const unsigned char *v;
	size_t len;
	int rc = 0;
	if (memo->ix == ix && memo->vals.len == vlen && memcmp(memo->vals.data, vals, vlen) == 0) {
		const unsigned char *p = memo->keys.data, *end = p + memo->keys.len;
		while (rc == 0 && p < end) {
			uint16_t n;
			memcpy(&n, p, sizeof(n));
			rc = w->fn(w->arg, ix, p + sizeof(n), n);
			p += sizeof(n) + n;
		}
		return rc;
	}
	memo->ix = NULL;
	memo->vals.off = memo->vals.len = memo->keys.off = memo->keys.len = 0;
	struct recorder r = {w->fn, w->arg, &memo->keys, false};
	struct writer rw = *w;
	rw.fn = record_key;
	rw.arg = &r;
	for (const unsigned char *q = vals; rc == 0 && entry_next_value(&q, vals + vlen, &v, &len);)
		rc = put_value(&rw, ix, true, (const char *)v, len);
	if (rc == 0 && !r.failed && buf_append(&memo->vals, vals, vlen) == 0)
		memo->ix = ix;
	return rc;
}

int entry_index_keys(const struct db *db, const struct entry_view *e, entry_index_fn *fn, void *arg,
                     struct buf *scratch, char *err, size_t errlen)
{
	return entry_index_keys_memo(db, e, fn, arg, NULL, scratch, err, errlen);
}

void entry_index_memo_free(struct entry_index_memo *memo)
{
	buf_free(&memo->vals);
	buf_free(&memo->keys);
	memset(memo, 0, sizeof(*memo));
}

int entry_index_keys_memo(const struct db *db, const struct entry_view *e, entry_index_fn *fn,
                          void *arg, struct entry_index_memo *memo, struct buf *scratch, char *err,
                          size_t errlen)
{
	struct writer w = {db, fn, arg, scratch, NULL, 0, err, errlen};
	const unsigned char *p = e->attrs, *end = e->attrs + e->attrslen, *seq, *t, *vals, *v;
	size_t slen, tlen, vlen, len;
	unsigned char tag;
	int rc = 0;
	while (rc == 0 && p < end && tlv_read(&p, end, &tag, &seq, &slen)) {
		const unsigned char *q = seq;
		if (!tlv_read(&q, seq + slen, &tag, &t, &tlen) ||
		    !tlv_read(&q, seq + slen, &tag, &vals, &vlen))
			break;
		const struct db_index *ix = db_index_find(db, (const char *)t, tlen);
		if (!ix)
			continue;
		w.type = t;
		w.tlen = tlen;
		bool classes = tlen == 11 && strncasecmp((const char *)t, "objectClass", 11) == 0;
		if (classes && memo) {
			rc = class_keys(&w, ix, memo, vals, vlen);
			continue;
		}
		for (const unsigned char *r = vals;
		     rc == 0 && entry_next_value(&r, vals + vlen, &v, &len);)
			rc = put_value(&w, ix, classes, (const char *)v, len);
	}
	const struct db_index *uix = db_index_find(db, "entryUUID", 9);
	static const unsigned char none[16];
	if (rc == 0 && uix && memcmp(e->uuid, none, 16) != 0) {
		char text[37];
		entry_uuid_format(e->uuid, text);
		w.type = (const unsigned char *)"entryUUID";
		w.tlen = 9;
		rc = put_key(&w, uix, text, 36);
	}
	return rc;
}

/* entry_index_write's state: where the keys go, and its message. */
struct put {
	MDB_txn *txn;
	entry_id id;
	bool add;
	char *err;
	size_t errlen;
};

/* An entry_index_fn adding or removing the entry under one key. */
static int put_id(void *arg, const struct db_index *ix, const void *key, size_t len)
{
	struct put *p = arg;
	MDB_val k = {len, (void *)key}, d = {sizeof(p->id), &p->id};
	int rc = p->add ? mdb_put(p->txn, ix->dbi, &k, &d, MDB_NODUPDATA)
	                : mdb_del(p->txn, ix->dbi, &k, &d);
	if (rc == MDB_KEYEXIST || rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		snprintf(p->err, p->errlen, "index %s: %s", ix->attr, mdb_strerror(rc));
	return rc;
}

int entry_index_write(const struct db *db, struct db_write *wr, entry_id id,
                      const struct entry_view *e, bool add, struct buf *scratch, char *err,
                      size_t errlen)
{
	MDB_txn *txn = db_write_txn(wr);
	struct put p = {txn, id, add, err, errlen};
	return entry_index_keys(db, e, put_id, &p, scratch, err, errlen);
}
