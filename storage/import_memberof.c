#include "storage/import_memberof.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"

/* memberOf writes per transaction: bounds the dirty pages, as the entries' own. */
#define MEMBERSHIPS_TXN_WRITES 50000

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

int memberof_put_dn(const struct db *db, MDB_txn *txn, const void *key, size_t len, entry_id group)
{
	if (len == 0 || len > (size_t)mdb_env_get_maxkeysize(db->env))
		return 0; /* longer than any dn2id key: names no entry */
	MDB_val k = {len, (void *)key}, v = {sizeof(group), &group};
	int rc = mdb_put(txn, db->memberdn, &k, &v, MDB_NODUPDATA);
	return rc == MDB_KEYEXIST ? 0 : rc;
}

int memberships_add(struct memberships *m, entry_id group, LDAPMod **mods)
{
	struct buf key = {0};
	int rc = 0;
	for (int i = 0; rc == 0 && mods && mods[i]; i++) {
		bool unique = strcasecmp(mods[i]->mod_type, "uniqueMember") == 0;
		if (!unique && strcasecmp(mods[i]->mod_type, "member") != 0)
			continue;
		for (int j = 0; rc == 0 && mods[i]->mod_bvalues[j]; j++) {
			key.off = key.len = 0;
			if (memberof_value_key(mods[i]->mod_bvalues[j], unique, &key) < 0 ||
			    key.len == 0)
				continue; /* not a DN: names no entry */
			uint32_t len = (uint32_t)key.len;
			if (buf_append(&m->pairs, &group, sizeof(group)) < 0 ||
			    buf_append(&m->pairs, &len, sizeof(len)) < 0 ||
			    buf_append(&m->pairs, key.data, key.len) < 0)
				rc = -1;
			else
				m->count++;
		}
	}
	buf_free(&key);
	return rc;
}

int memberof_group_key(const struct db *db, MDB_txn *txn, const struct db_index *ix, entry_id group,
                       struct buf *gdn)
{
	struct entry_view e;
	int rc = db_get_entry(db, txn, group, &e);
	if (rc)
		return rc;
	gdn->off = gdn->len = 0;
	return match_normalize(ix->rule, (const char *)e.dn, e.dnlen, gdn) < 0 ? MDB_CORRUPTED : 0;
}

int memberships_store(struct memberships *m, struct db *db, MDB_txn **txn, char *err, size_t errlen)
{
	const struct db_index *ix = db_index_find(db, "memberOf", 8);
	struct buf gdn = {0};
	entry_id current = 0;
	size_t writes = 0;
	int rc = ix ? 0 : MDB_NOTFOUND;
	const unsigned char *p = m->pairs.data, *end = p ? p + m->pairs.len : p;
	while (rc == 0 && p < end) {
		entry_id group, member;
		uint32_t len;
		memcpy(&group, p, sizeof(group));
		memcpy(&len, p + sizeof(group), sizeof(len));
		const unsigned char *key = p + sizeof(group) + sizeof(len);
		p = key + len;
		if (group != current && (rc = memberof_group_key(db, *txn, ix, group, &gdn)) != 0)
			break;
		current = group;
		if ((rc = memberof_put_dn(db, *txn, key, len, group)) != 0)
			break;
		if ((rc = db_dn2id(db, *txn, key, len, &member)) == MDB_NOTFOUND) {
			rc = 0; /* a member that does not exist: ignored, as the overlay does */
			continue;
		}
		MDB_val k = {sizeof(member), &member}, v = {sizeof(group), &group};
		MDB_val gk = {db_index_keylen(gdn.len), gdn.data};
		if (rc == 0 && (rc = mdb_put(*txn, db->memberof, &k, &v, MDB_NODUPDATA)) == 0) {
			m->stored++;
			rc = mdb_put(*txn, ix->dbi, &gk, &k, MDB_NODUPDATA);
		}
		if (rc == MDB_KEYEXIST)
			rc = 0; /* the same member twice in one group, spelled two ways */
		if (rc == 0 && ++writes % MEMBERSHIPS_TXN_WRITES == 0) {
			rc = mdb_txn_commit(*txn);
			*txn = NULL;
			if (rc == 0)
				rc = mdb_txn_begin(db->env, NULL, 0, txn);
		}
	}
	buf_free(&gdn);
	if (rc)
		snprintf(err, errlen, "memberOf: %s",
		         ix ? mdb_strerror(db_write_error(db, rc)) : "no memberOf index");
	return rc ? -1 : 0;
}

void memberships_free(struct memberships *m)
{
	buf_free(&m->pairs);
	memset(m, 0, sizeof(*m));
}
