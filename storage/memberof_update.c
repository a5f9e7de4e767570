#include "storage/memberof_update.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "storage/db_impl.h"
#include "storage/idset.h"
#include "storage/memberof.h"

void memberof_scratch_free(struct memberof_scratch *s)
{
	buf_free(&s->key);
	buf_free(&s->gdn);
	buf_free(&s->ids);
	buf_free(&s->rec);
	buf_free(&s->up);
	buf_free(&s->work);
}

static const struct db_index *memberof_index(const struct db *db)
{
	return db_index_find(db, "memberOf", 8);
}

/* Sets ids to the IDs stored under key k of the sorted-duplicates table dbi. */
static int collect_ids(MDB_txn *txn, MDB_dbi dbi, MDB_val k, struct buf *ids)
{
	ids->off = ids->len = 0;
	return memberof_append_ids(txn, dbi, k, ids);
}

int memberof_copy_record(struct entry_view *e, struct buf *rec)
{
	const unsigned char *start = e->key - ENTRY_HEADER_BYTES;
	size_t len = (size_t)(e->op + e->oplen - start);
	rec->off = rec->len = 0;
	if (buf_append(rec, start, len) < 0)
		return ENOMEM;
	return entry_parse(rec->data, rec->len, e) < 0 ? MDB_CORRUPTED : 0;
}

static int del(MDB_txn *txn, MDB_dbi dbi, MDB_val k, MDB_val v)
{
	int rc = mdb_del(txn, dbi, &k, &v);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int put(MDB_txn *txn, MDB_dbi dbi, MDB_val k, MDB_val v)
{
	int rc = mdb_put(txn, dbi, &k, &v, MDB_NODUPDATA);
	return rc == MDB_KEYEXIST ? 0 : rc;
}

/* Links member to group, whose eq.memberof key is gdn. */
static int link(const struct db *db, MDB_txn *txn, const struct db_index *ix, entry_id member,
                entry_id group, const struct buf *gdn)
{
	MDB_val mk = {sizeof(member), &member}, gv = {sizeof(group), &group};
	MDB_val gk = {db_index_keylen(gdn->len), gdn->data};
	int rc = put(txn, db->memberof, mk, gv);
	return rc ? rc : put(txn, ix->dbi, gk, mk);
}

/* Whether another group of member than group has the (truncated) eq.memberof key gk. */
static int key_shared(const struct db *db, MDB_txn *txn, const struct db_index *ix, entry_id member,
                      entry_id group, MDB_val gk, struct buf *scratch, bool *shared)
{
	struct buf others = {0};
	MDB_val mk = {sizeof(member), &member};
	int rc = collect_ids(txn, db->memberof, mk, &others);
	*shared = false;
	for (size_t i = 0; rc == 0 && !*shared && i < others.len / sizeof(entry_id); i++) {
		entry_id g = ids_at(&others, i);
		if (g != group &&
		    (rc = memberof_group_key(db, db_read_of(txn), ix, g, scratch)) == 0)
			*shared = db_index_keylen(scratch->len) == gk.mv_size &&
			          memcmp(scratch->data, gk.mv_data, gk.mv_size) == 0;
	}
	buf_free(&others);
	return rc;
}

/* Takes id apart from the groups it is a member of. */
static int unlink_member(const struct db *db, MDB_txn *txn, const struct db_index *ix, entry_id id,
                         struct memberof_scratch *s)
{
	MDB_val mk = {sizeof(id), &id};
	int rc = collect_ids(txn, db->memberof, mk, &s->ids);
	for (size_t i = 0; rc == 0 && i < s->ids.len / sizeof(entry_id); i++) {
		entry_id g = ids_at(&s->ids, i);
		if ((rc = memberof_group_key(db, db_read_of(txn), ix, g, &s->gdn)) != 0)
			break;
		MDB_val gk = {db_index_keylen(s->gdn.len), s->gdn.data};
		rc = del(txn, ix->dbi, gk, mk);
	}
	if (rc == 0 && (rc = mdb_del(txn, db->memberof, &mk, NULL)) == MDB_NOTFOUND)
		rc = 0;
	return rc;
}

/* Takes group id apart from its members. */
static int unlink_group(const struct db *db, MDB_txn *txn, const struct db_index *ix, entry_id id,
                        struct memberof_scratch *s)
{
	int rc = memberof_group_key(db, db_read_of(txn), ix, id, &s->gdn);
	MDB_val gk = {db_index_keylen(s->gdn.len), s->gdn.data}, gv = {sizeof(id), &id};
	if (rc == 0)
		rc = collect_ids(txn, ix->dbi, gk, &s->ids);
	/* Truncated keys of two groups may meet: then a member of both keeps its key. */
	bool truncated = s->gdn.len >= DB_MAX_INDEX_KEY;
	for (size_t i = 0; rc == 0 && i < s->ids.len / sizeof(entry_id); i++) {
		entry_id m = ids_at(&s->ids, i);
		MDB_val mk = {sizeof(m), &m};
		rc = mdb_del(txn, db->memberof, &mk, &gv);
		if (rc == MDB_NOTFOUND) {
			rc = 0; /* a member of another group under the same truncated key */
			continue;
		}
		bool shared = false;
		if (rc == 0 && truncated)
			rc = key_shared(db, txn, ix, m, id, gk, &s->key, &shared);
		if (rc == 0 && !shared)
			rc = del(txn, ix->dbi, gk, mk);
	}
	return rc;
}

int memberof_unlink_member(const struct db *db, struct db_write *wr, entry_id id,
                           struct memberof_scratch *s)
{
	MDB_txn *txn = db_write_txn(wr);
	const struct db_index *ix = memberof_index(db);
	return ix ? unlink_member(db, txn, ix, id, s) : MDB_NOTFOUND;
}

int memberof_link_one(const struct db *db, struct db_write *wr, entry_id member, entry_id group,
                      struct memberof_scratch *s)
{
	MDB_txn *txn = db_write_txn(wr);
	const struct db_index *ix = memberof_index(db);
	int rc = ix ? memberof_group_key(db, db_read_of(txn), ix, group, &s->gdn) : MDB_NOTFOUND;
	return rc ? rc : link(db, txn, ix, member, group, &s->gdn);
}

int memberof_unlink(const struct db *db, struct db_write *wr, entry_id id,
                    struct memberof_scratch *s)
{
	MDB_txn *txn = db_write_txn(wr);
	const struct db_index *ix = memberof_index(db);
	if (!ix)
		return MDB_NOTFOUND;
	int rc = unlink_member(db, txn, ix, id, s);
	return rc ? rc : unlink_group(db, txn, ix, id, s);
}

/* Calls fn on the reversed key of each member value of e; stops at an error. */
static int foreach_member_key(const struct entry_view *e, struct buf *key,
                              int (*fn)(const struct buf *key, void *arg), void *arg)
{
	static const char *const types[] = {"member", "uniqueMember"};
	int rc = 0;
	for (int t = 0; t < 2 && rc == 0; t++) {
		const unsigned char *vals, *v;
		size_t vlen, len;
		if (!entry_find_attr(e, types[t], strlen(types[t]), &vals, &vlen))
			continue;
		for (const unsigned char *r = vals;
		     rc == 0 && entry_next_value(&r, vals + vlen, &v, &len);) {
			struct berval bv = {len, (char *)v};
			key->off = key->len = 0;
			if (memberof_value_key(&bv, t == 1, key) == 0 && key->len)
				rc = fn(key, arg);
		}
	}
	return rc;
}

struct group_ctx {
	const struct db *db;
	MDB_txn *txn;
	const struct db_index *ix;
	entry_id group;
	const struct buf *gdn;
	bool add;
};

static int link_value(const struct buf *key, void *arg)
{
	struct group_ctx *g = arg;
	entry_id m;
	int rc = db_dn2id(g->db, db_read_of(g->txn), key->data, key->len, &m);
	if (rc == MDB_NOTFOUND)
		return 0; /* names no entry: ignored, as import does */
	return rc ? rc : link(g->db, g->txn, g->ix, m, g->group, g->gdn);
}

int memberof_link(const struct db *db, struct db_write *wr, entry_id id, struct memberof_scratch *s)
{
	MDB_txn *txn = db_write_txn(wr);
	const struct db_index *ix = memberof_index(db);
	struct entry_view e;
	if (!ix)
		return MDB_NOTFOUND;
	int rc = db_get_entry(db, db_read_of(txn), id, &e);
	/* A copy: the writes below may move the pages e points into. */
	if (rc == 0)
		rc = memberof_copy_record(&e, &s->rec);
	/* As a group: the entries its values name. */
	if (rc == 0)
		rc = memberof_group_key(db, db_read_of(txn), ix, id, &s->gdn);
	struct group_ctx g = {db, txn, ix, id, &s->gdn, true};
	if (rc == 0)
		rc = foreach_member_key(&e, &s->key, link_value, &g);
	/* As a member: the groups naming its DN. */
	if (rc == 0 && e.keylen <= (size_t)mdb_env_get_maxkeysize(db->env)) {
		MDB_val k = {e.keylen, (void *)e.key};
		rc = collect_ids(txn, db->memberdn, k, &s->ids);
	}
	for (size_t i = 0; rc == 0 && i < s->ids.len / sizeof(entry_id); i++) {
		entry_id grp = ids_at(&s->ids, i);
		if ((rc = memberof_group_key(db, db_read_of(txn), ix, grp, &s->gdn)) == 0)
			rc = link(db, txn, ix, id, grp, &s->gdn);
	}
	return rc;
}

static int write_dn(const struct buf *key, void *arg)
{
	struct group_ctx *g = arg;
	if (g->add)
		return memberof_put_dn(g->db, db_write_of(g->txn), key->data, key->len, g->group);
	MDB_val k = {key->len, key->data}, v = {sizeof(g->group), &g->group};
	if (key->len > (size_t)mdb_env_get_maxkeysize(g->db->env))
		return 0;
	return del(g->txn, g->db->memberdn, k, v);
}

int memberof_write_dns(const struct db *db, struct db_write *wr, entry_id group,
                       const struct entry_view *e, bool add, struct memberof_scratch *s)
{
	MDB_txn *txn = db_write_txn(wr);
	struct group_ctx g = {db, txn, NULL, group, NULL, add};
	return foreach_member_key(e, &s->key, write_dn, &g);
}
