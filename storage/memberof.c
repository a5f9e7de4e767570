#include "storage/memberof.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "storage/db_fault.h"
#include "storage/db_impl.h"

/*
 * The reversed key of a member value: a DN or, for uniqueMember, a DN followed by an
 * optional "#'0101'B" UID (RFC 4517 NameAndOptionalUID), which is not part of the DN.
 */
int memberof_value_key(const struct berval *v, bool unique, struct buf *key)
{
	size_t len = v->bv_len;
	const char *s = v->bv_val;
	if (unique && len > 4 && s[len - 1] == 'B' && s[len - 2] == '\'') {
		size_t i = len - 2;
		while (i > 0 && (s[i - 1] == '0' || s[i - 1] == '1'))
			i--;
		if (i >= 2 && s[i - 1] == '\'' && s[i - 2] == '#')
			len = i - 2;
	}
	return dn_normalize(s, len, NULL, key);
}

int memberof_put_dn(const struct db *db, struct db_write *wr, const void *key, size_t len,
                    entry_id group)
{
	MDB_txn *txn = db_write_txn(wr);
	if (len == 0 || len > (size_t)mdb_env_get_maxkeysize(db->env))
		return 0; /* longer than any dn2id key: names no entry */
	MDB_val k = {len, (void *)key}, v = {sizeof(group), &group};
	int rc = mdb_put(txn, db->memberdn, &k, &v, MDB_NODUPDATA);
	return rc == MDB_KEYEXIST ? 0 : rc;
}

int memberof_collect(LDAPMod **mods, struct buf *keys, struct buf *scratch)
{
	for (int i = 0; mods && mods[i]; i++) {
		bool unique = strcasecmp(mods[i]->mod_type, "uniqueMember") == 0;
		if (!unique && strcasecmp(mods[i]->mod_type, "member") != 0)
			continue;
		for (int j = 0; mods[i]->mod_bvalues[j]; j++) {
			scratch->off = scratch->len = 0;
			if (memberof_value_key(mods[i]->mod_bvalues[j], unique, scratch) < 0 ||
			    scratch->len == 0)
				continue; /* not a DN: names no entry */
			uint32_t len = (uint32_t)scratch->len;
			if (buf_append(keys, &len, sizeof(len)) < 0 ||
			    buf_append(keys, scratch->data, scratch->len) < 0)
				return -1;
		}
	}
	return 0;
}

int memberof_group_key(const struct db *db, struct db_read *rd, const struct db_index *ix,
                       entry_id group, struct buf *gdn)
{
	struct entry_view e;
	int rc = db_get_entry(db, rd, group, &e);
	if (rc)
		return rc;
	gdn->off = gdn->len = 0;
	/* Under distinguishedNameMatch (memberOf's rule in every schema minidir reads) the
	 * normal form is made from the stored reversed key, without libldap: the import, a
	 * replica's changes and the in-chain walk (which asks it of every member it meets,
	 * users included) all come here. */
	if (ix->rule == MATCH_DN)
		return dn_key_normal(e.key, e.keylen, gdn) < 0 ? ENOMEM : 0;
	return match_normalize(ix->rule, (const char *)e.dn, e.dnlen, gdn) < 0 ? MDB_CORRUPTED : 0;
}

/* Links the member of key k (if an entry has that DN) to group, whose eq.memberof key is gdn. */
static int link_member(struct db *db, MDB_txn *txn, const struct db_index *ix, const MDB_val *k,
                       entry_id group, const struct buf *gdn)
{
	entry_id member;
	int rc = db_dn2id(db, db_read_of(txn), k->mv_data, k->mv_size, &member);
	if (rc == MDB_NOTFOUND)
		return 0; /* a member that does not exist: ignored, as the overlay does */
	MDB_val mk = {sizeof(member), &member}, gv = {sizeof(group), &group};
	MDB_val gk = {db_index_keylen(gdn->len), gdn->data};
	if (rc == 0 && (rc = mdb_put(txn, db->memberof, &mk, &gv, MDB_NODUPDATA)) == 0)
		rc = mdb_put(txn, ix->dbi, &gk, &mk, MDB_NODUPDATA);
	return rc == MDB_KEYEXIST ? 0 : rc; /* the same member twice, spelled two ways */
}

int memberof_resolve(struct db *db, struct db_write *wr, char *err, size_t errlen)
{
	MDB_txn *txn = db_write_txn(wr);
	const struct db_index *ix = db_index_find(db, "memberOf", 8);
	struct buf gdn = {0};
	entry_id current = 0;
	MDB_cursor *cur = NULL;
	int rc = ix ? mdb_cursor_open(txn, db->memberdn, &cur) : MDB_NOTFOUND;
	MDB_val k, v;
	for (int op = MDB_FIRST; rc == 0; op = MDB_NEXT) {
		entry_id group;
		if ((rc = mdb_cursor_get(cur, &k, &v, op)) != 0)
			break;
		if (v.mv_size != sizeof(group)) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(&group, v.mv_data, sizeof(group));
		if (group != current &&
		    (rc = memberof_group_key(db, db_write_reads(wr), ix, group, &gdn)) != 0)
			break;
		current = group;
		rc = link_member(db, txn, ix, &k, group, &gdn);
	}
	if (cur)
		mdb_cursor_close(cur);
	buf_free(&gdn);
	if (rc == MDB_NOTFOUND && ix)
		rc = 0;
	if (rc)
		snprintf(err, errlen, "memberOf: %s",
		         ix ? mdb_strerror(db_write_error(db, rc)) : "no memberOf index");
	return rc ? -1 : 0;
}

int memberof_append_ids(MDB_txn *txn, MDB_dbi dbi, MDB_val k, struct buf *ids)
{
	MDB_cursor *cur;
	int rc = db_cursor_open(txn, dbi, &cur);
	if (rc)
		return rc;
	rc = memberof_cursor_ids(cur, k, ids);
	db_cursor_close(cur);
	return rc;
}

int memberof_cursor_ids(MDB_cursor *cur, MDB_val k, struct buf *ids)
{
	MDB_val v;
	int rc = mdb_cursor_get(cur, &k, &v, MDB_SET);
	for (int op = MDB_GET_MULTIPLE; rc == 0; op = MDB_NEXT_MULTIPLE) {
		rc = mdb_cursor_get(cur, &k, &v, op);
		if (rc == 0 && v.mv_size % sizeof(entry_id) != 0)
			rc = MDB_CORRUPTED;
		if (rc == 0 && buf_append(ids, v.mv_data, v.mv_size) < 0)
			rc = ENOMEM;
	}
	return rc == MDB_NOTFOUND ? 0 : rc;
}
