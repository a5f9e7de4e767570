#include "storage/memberof_nested.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db_impl.h"
#include "storage/idset.h"
#include "storage/memberof.h"

static const char meta_key[] = "memberof_nested";

int memberof_nested_get(const struct db *db, struct db_read *rd, bool *on)
{
	return db_meta_flag_get(db, rd, meta_key, on);
}

int memberof_nested_set(const struct db *db, struct db_write *wr, bool on)
{
	return db_meta_flag_set(db, wr, meta_key, on);
}

/* Sets ids to the groups whose member values name entry id's DN (memberdn). */
static int direct_groups(const struct db *db, MDB_txn *txn, entry_id id, struct buf *ids)
{
	struct entry_view e;
	ids->off = ids->len = 0;
	int rc = db_get_entry(db, db_read_of(txn), id, &e);
	if (rc || e.keylen > (size_t)mdb_env_get_maxkeysize(db->env))
		return rc;
	MDB_val k = {e.keylen, (void *)e.key};
	return memberof_append_ids(txn, db->memberdn, k, ids);
}

int memberof_nested_closure(const struct db *db, struct db_read *rd, entry_id id,
                            struct buf *groups, struct buf *ids, bool *cut, struct buf *cut_dn)
{
	MDB_txn *txn = db_read_txn(rd);
	struct idset seen = {0};
	bool added;
	groups->off = groups->len = 0;
	*cut = false;
	/* id is not seen first: a group in a cycle reaches itself and is its own group, as
	 * slapd's dynlist lists it (tests/conformance/nested). */
	int rc = direct_groups(db, txn, id, ids);
	for (size_t i = 0; rc == 0 && i < ids_count(ids); i++)
		if ((rc = idset_add(&seen, ids_at(ids, i), &added)) == 0 && added &&
		    buf_append(groups, ids->data + i * sizeof(entry_id), sizeof(entry_id)) < 0)
			rc = ENOMEM;
	/* groups[start, end) are the groups of level depth; their groups are the next. */
	size_t start = 0;
	for (int depth = 1; rc == 0 && start < ids_count(groups); depth++) {
		size_t end = ids_count(groups);
		for (size_t g = start; rc == 0 && g < end; g++) {
			entry_id grp = ids_at(groups, g);
			if ((rc = direct_groups(db, txn, grp, ids)) != 0)
				break;
			for (size_t i = 0; rc == 0 && i < ids_count(ids); i++) {
				entry_id up = ids_at(ids, i);
				if ((rc = idset_add(&seen, up, &added)) != 0 || !added)
					continue;
				if (depth >= MEMBEROF_NESTED_DEPTH) {
					struct entry_view e;
					*cut = true;
					cut_dn->off = cut_dn->len = 0;
					if ((rc = db_get_entry(db, rd, grp, &e)) == 0 &&
					    buf_append(cut_dn, e.dn, e.dnlen) < 0)
						rc = ENOMEM;
					continue;
				}
				if (buf_append(groups, &up, sizeof(up)) < 0)
					rc = ENOMEM;
			}
		}
		start = end;
	}
	idset_free(&seen);
	return rc;
}

static void warn_cut(FILE *warn, const struct buf *dn)
{
	if (warn)
		fprintf(warn, "memberOf: nesting deeper than %d levels above %.*s: cut\n",
		        MEMBEROF_NESTED_DEPTH, (int)dn->len, (const char *)dn->data);
}

/* Links id to every group of its closure. */
static int link_closure(const struct db *db, MDB_txn *txn, entry_id id, struct memberof_scratch *s,
                        FILE *warn)
{
	bool cut;
	int rc = memberof_nested_closure(db, db_read_of(txn), id, &s->up, &s->work, &cut, &s->key);
	if (rc == 0 && cut)
		warn_cut(warn, &s->key);
	for (size_t i = 0; rc == 0 && i < ids_count(&s->up); i++)
		rc = memberof_link_one(db, db_write_of(txn), id, ids_at(&s->up, i), s);
	return rc;
}

int memberof_nested_resolve(struct db *db, struct db_write *wr, FILE *warn, char *err,
                            size_t errlen)
{
	MDB_txn *txn = db_write_txn(wr);
	struct buf members = {0};
	struct memberof_scratch s = {0};
	MDB_cursor *cur;
	MDB_val k, v;
	/* The members first: the links below are written to the table walked. */
	int rc = mdb_cursor_open(txn, db->memberof, &cur);
	if (rc) {
		snprintf(err, errlen, "nested memberOf: %s", mdb_strerror(rc));
		return -1;
	}
	for (int op = MDB_FIRST; rc == 0; op = MDB_NEXT_NODUP) {
		if ((rc = mdb_cursor_get(cur, &k, &v, op)) != 0)
			break;
		if (k.mv_size != sizeof(entry_id))
			rc = MDB_CORRUPTED;
		else if (buf_append(&members, k.mv_data, sizeof(entry_id)) < 0)
			rc = ENOMEM;
	}
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		rc = 0;
	for (size_t i = 0; rc == 0 && i < ids_count(&members); i++)
		rc = link_closure(db, txn, ids_at(&members, i), &s, warn);
	buf_free(&members);
	memberof_scratch_free(&s);
	if (rc)
		snprintf(err, errlen, "nested memberOf: %s",
		         rc == ENOMEM ? "out of memory" : mdb_strerror(db_write_error(db, rc)));
	return rc ? -1 : 0;
}

int memberof_nested_below(const struct db *db, struct db_read *rd, struct buf *set,
                          struct memberof_scratch *s)
{
	MDB_txn *txn = db_read_txn(rd);
	const struct db_index *ix = db_index_find(db, "memberOf", 8);
	struct idset seen = {0};
	bool added;
	if (!ix)
		return MDB_NOTFOUND;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < ids_count(set); i++)
		rc = idset_add(&seen, ids_at(set, i), &added);
	for (size_t i = 0; rc == 0 && i < ids_count(set); i++) {
		rc = memberof_group_key(db, rd, ix, ids_at(set, i), &s->gdn);
		if (rc == MDB_NOTFOUND) {
			rc = 0; /* gone (a delete): nothing below it any more */
			continue;
		}
		MDB_val gk = {db_index_keylen(s->gdn.len), s->gdn.data};
		s->work.off = s->work.len = 0;
		if (rc == 0)
			rc = memberof_append_ids(txn, ix->dbi, gk, &s->work);
		for (size_t j = 0; rc == 0 && j < ids_count(&s->work); j++) {
			entry_id m = ids_at(&s->work, j);
			if ((rc = idset_add(&seen, m, &added)) == 0 && added &&
			    buf_append(set, &m, sizeof(m)) < 0)
				rc = ENOMEM;
		}
	}
	idset_free(&seen);
	return rc;
}

int memberof_nested_relink(const struct db *db, struct db_write *wr, const struct buf *set,
                           struct memberof_scratch *s, FILE *warn)
{
	MDB_txn *txn = db_write_txn(wr);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < ids_count(set); i++) {
		entry_id id = ids_at(set, i);
		struct entry_view e;
		if ((rc = db_get_entry(db, db_write_reads(wr), id, &e)) == MDB_NOTFOUND) {
			rc = 0;
			continue;
		}
		if (rc == 0 && (rc = memberof_unlink_member(db, wr, id, s)) == 0)
			rc = link_closure(db, txn, id, s, warn);
	}
	return rc;
}

int memberof_nested_follow(struct db *db, bool want, bool writable, bool *stored)
{
	return db_meta_flag_follow(db, meta_key, want, writable, stored);
}
