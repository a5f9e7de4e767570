#include "storage/entry_index.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol/schema.h"

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

int entry_index_keys(const struct db *db, const struct entry_view *e, entry_index_fn *fn, void *arg,
                     struct buf *scratch, char *err, size_t errlen)
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

int entry_index_write(const struct db *db, MDB_txn *txn, entry_id id, const struct entry_view *e,
                      bool add, struct buf *scratch, char *err, size_t errlen)
{
	struct put p = {txn, id, add, err, errlen};
	return entry_index_keys(db, e, put_id, &p, scratch, err, errlen);
}
