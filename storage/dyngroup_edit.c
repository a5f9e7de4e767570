#include "storage/dyngroup_edit.h"

#include <errno.h>
#include <ldap.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/db_impl.h"
#include "storage/entry_mods.h"
#include "storage/memberof.h"
#include "storage/memberof_update.h"

int dyngroup_dn_add(struct buf *list, const void *dn, size_t len)
{
	uint32_t n = (uint32_t)len;
	return buf_append(list, &n, sizeof(n)) < 0 || buf_append(list, dn, len) < 0 ? ENOMEM : 0;
}

bool dyngroup_dn_next(const struct buf *list, size_t *off, struct berval *bv)
{
	uint32_t n;
	if (*off + sizeof(n) > list->len)
		return false;
	memcpy(&n, list->data + *off, sizeof(n));
	*bv = (struct berval){n, (char *)list->data + *off + sizeof(n)};
	*off += sizeof(n) + n;
	return true;
}

/* Whether list holds v (byte for byte) not yet taken (used[j]); takes it. */
static bool take(const struct buf *list, bool *used, const struct berval *v)
{
	size_t off = 0, j = 0;
	struct berval bv;
	for (; dyngroup_dn_next(list, &off, &bv); j++)
		if (!used[j] && bv.bv_len == v->bv_len &&
		    memcmp(bv.bv_val, v->bv_val, v->bv_len) == 0)
			return used[j] = true;
	return false;
}

/* One value's keys: in eq.member (when indexed) and memberdn, added or removed. */
static int value_keys(const struct db *db, MDB_txn *txn, entry_id group, const struct berval *v,
                      bool add, struct buf *key)
{
	const struct db_index *ix = db_index_find(db, "member", 6);
	int rc = 0;
	key->off = key->len = 0;
	if (ix && match_normalize(ix->rule, v->bv_val, v->bv_len, key) == 0) {
		MDB_val k = {db_index_keylen(key->len), key->data}, d = {sizeof(group), &group};
		rc = add ? mdb_put(txn, ix->dbi, &k, &d, MDB_NODUPDATA)
		         : mdb_del(txn, ix->dbi, &k, &d);
		if (rc == MDB_KEYEXIST || rc == MDB_NOTFOUND)
			rc = 0;
	}
	key->off = key->len = 0;
	if (rc || memberof_value_key(v, false, key) < 0 || key->len == 0)
		return rc;
	if (add)
		return memberof_put_dn(db, db_write_of(txn), key->data, key->len, group);
	if (key->len > (size_t)mdb_env_get_maxkeysize(db->env))
		return 0;
	MDB_val k = {key->len, key->data}, d = {sizeof(group), &group};
	rc = mdb_del(txn, db->memberdn, &k, &d);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int dyngroup_edit(const struct db *db, struct db_write *wr, entry_id group,
                  const struct buf *removes, const struct buf *adds, struct buf *old,
                  struct buf *rec, struct buf *key)
{
	MDB_txn *txn = db_write_txn(wr);
	struct entry_view e;
	struct entry_mods m = {0};
	size_t nrem = 0, nadd = 0, nvals = 0, nmods = 0, off = 0;
	struct berval bv;
	while (dyngroup_dn_next(removes, &off, &bv))
		nrem++;
	for (off = 0; dyngroup_dn_next(adds, &off, &bv);)
		nadd++;
	int rc = db_get_entry(db, db_write_reads(wr), group, &e);
	if (rc == 0)
		rc = memberof_copy_record(&e, old);
	if (rc == 0 && entry_mods_decode(&m, e.attrs, e.attrslen) != 0)
		rc = MDB_CORRUPTED;
	for (size_t i = 0; rc == 0 && m.mods && m.mods[i]; i++, nmods++)
		if (strcasecmp(m.mods[i]->mod_type, "member") == 0)
			for (size_t j = 0; m.mods[i]->mod_bvalues[j]; j++)
				nvals++;
	bool *used = calloc(nrem + 1, sizeof(*used));
	struct berval **vals = calloc(nvals + nadd + 1, sizeof(*vals));
	struct berval *added = calloc(nadd + 1, sizeof(*added));
	LDAPMod **mods = calloc(nmods + 2, sizeof(*mods));
	LDAPMod member = {.mod_op = LDAP_MOD_BVALUES, .mod_type = "member", .mod_bvalues = vals};
	if (rc == 0 && (!used || !vals || !added || !mods))
		rc = ENOMEM;
	size_t nv = 0, nm = 0;
	for (size_t i = 0; rc == 0 && m.mods && m.mods[i]; i++) {
		if (strcasecmp(m.mods[i]->mod_type, "member") != 0) {
			mods[nm++] = m.mods[i];
			continue;
		}
		for (size_t j = 0; m.mods[i]->mod_bvalues[j]; j++)
			if (!take(removes, used, m.mods[i]->mod_bvalues[j]))
				vals[nv++] = m.mods[i]->mod_bvalues[j];
	}
	for (size_t j = 0, off2 = 0; rc == 0 && dyngroup_dn_next(adds, &off2, &added[j]); j++)
		vals[nv++] = &added[j];
	if (nv)
		mods[nm++] = &member;
	struct berval dn = {e.dnlen, (char *)e.dn};
	rec->off = rec->len = 0;
	if (rc == 0 && entry_encode_uuid(rec, e.parent, e.uuid, e.key, e.keylen, &dn, mods) < 0)
		rc = ENOMEM;
	if (rc == 0 && rec->len > ENTRY_MAX_BYTES)
		rc = DYNGROUP_TOO_LARGE;
	if (rc == 0) {
		MDB_val k = {sizeof(group), &group}, v = {rec->len, rec->data};
		rc = mdb_put(txn, db->id2entry, &k, &v, 0);
	}
	off = 0;
	for (size_t j = 0; rc == 0 && dyngroup_dn_next(removes, &off, &bv); j++)
		if (used[j])
			rc = value_keys(db, txn, group, &bv, false, key);
	for (size_t j = 0; rc == 0 && j < nadd; j++)
		rc = value_keys(db, txn, group, &added[j], true, key);
	free(used);
	free(vals);
	free(added);
	free(mods);
	entry_mods_free(&m);
	return rc;
}
