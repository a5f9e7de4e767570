/* A replica's copy of its provider's operational attributes: see entry_opattrs.h. */
#include "storage/db_impl.h"
#include "storage/entry_opattrs.h"

#include <lber.h>
#include <string.h>
#include <strings.h>

/* The names kept, each once, for the names and their lengths. */
/* clang-format off */
#define KEPT_NAMES(X)                                                                              \
	X(createTimestamp) X(modifyTimestamp) X(creatorsName) X(modifiersName) X(entryCSN)         \
	X(pwdChangedTime) X(pwdAccountLockedTime) X(pwdFailureTime) X(pwdHistory)                  \
	X(pwdGraceUseTime) X(pwdReset) X(pwdPolicySubentry) X(pwdStartTime) X(pwdEndTime)          \
	X(pwdLastSuccess) X(pwdAccountTmpLockoutEnd) X(nsAccountLock) X(accountUnlockTime)        \
	X(passwordExpirationTime) X(passwordGraceUserTime) X(authzTo) X(nsUniqueId) X(entryUUID)
/* clang-format on */

const char *const entry_opattrs_names[] = {
#define KEPT_NAME(n) #n,
    KEPT_NAMES(KEPT_NAME)
#undef KEPT_NAME
        NULL};

/* Their lengths. */
static const size_t name_lens[] = {
#define KEPT_LEN(n) sizeof(#n) - 1,
    KEPT_NAMES(KEPT_LEN)
#undef KEPT_LEN
};
_Static_assert(sizeof(name_lens) / sizeof(name_lens[0]) == ENTRY_OPATTRS_UUID + 1,
               "entryUUID is the last name kept, nsUniqueId the one before");

/* The index of type in entry_opattrs_names (compared without case), or -1. Most types
 * of an entry are told from them by their first letter, the rest by length (an import
 * asks of every attribute of every entry). */
static int kept_index(const char *type)
{
	switch (type[0] | 0x20) {
	case 'a': /* accountUnlockTime, authzTo */
	case 'c': /* createTimestamp, creatorsName */
	case 'e': /* entryCSN, entryUUID */
	case 'm': /* modifyTimestamp, modifiersName */
	case 'n': /* nsAccountLock, nsUniqueId */
	case 'p': /* pwd..., password... */
		break;
	default:
		return -1;
	}
	size_t len = strlen(type);
	for (int n = 0; entry_opattrs_names[n]; n++)
		if (len == name_lens[n] && strcasecmp(type, entry_opattrs_names[n]) == 0)
			return n;
	return -1;
}

int entry_opattrs_index(const char *type)
{
	return kept_index(type);
}

bool entry_opattrs_is_kept(const char *type)
{
	return kept_index(type) >= 0;
}

/* Whether an entryUUID m is the record's uuid (then the record header says it), with no
 * nsUniqueId beside it (389-ds's entries, whose record UUID is the nsUniqueId). */
static bool uuid_in_record(bool has_unique_id, const LDAPMod *m, const unsigned char uuid[16])
{
	unsigned char u[16];
	const struct berval *v = m->mod_bvalues[0];
	return !has_unique_id && !m->mod_bvalues[1] &&
	       entry_uuid_parse(v->bv_val, v->bv_len, u) == 0 && memcmp(u, uuid, 16) == 0;
}

int entry_opattrs_encode(LDAPMod **mods, const unsigned char uuid[16], struct buf *out)
{
	out->off = out->len = 0;
	/* The mod of each name kept: the first that has values (one pass over mods). */
	int at[ENTRY_OPATTRS_UUID + 1];
	bool any = false;
	for (int n = 0; n <= ENTRY_OPATTRS_UUID; n++)
		at[n] = -1;
	for (int i = 0; mods && mods[i]; i++) {
		int n = kept_index(mods[i]->mod_type);
		if (n >= 0 && at[n] < 0 && mods[i]->mod_bvalues && mods[i]->mod_bvalues[0]) {
			at[n] = i;
			any = true;
		}
	}
	if (!any)
		return 0; /* an entry of plain LDIF: nothing to keep */
	if (at[ENTRY_OPATTRS_UUID] >= 0 &&
	    uuid_in_record(at[ENTRY_OPATTRS_UUID - 1] >= 0, mods[at[ENTRY_OPATTRS_UUID]], uuid))
		at[ENTRY_OPATTRS_UUID] = -1;
	BerElement *ber = NULL;
	int rc = 0;
	for (int n = 0; n <= ENTRY_OPATTRS_UUID && rc == 0; n++) {
		if (at[n] < 0)
			continue;
		if (!ber && !(ber = ber_alloc_t(LBER_USE_DER)))
			return -1;
		if (ber_printf(ber, "{s[V]}", entry_opattrs_names[n], mods[at[n]]->mod_bvalues) < 0)
			rc = -1;
	}
	if (!ber)
		return rc;
	struct berval bv;
	if (rc == 0 && ber_flatten2(ber, &bv, 0) == 0)
		rc = buf_append(out, bv.bv_val, bv.bv_len) < 0 ? -1 : 0;
	else
		rc = -1;
	ber_free(ber, 1);
	return rc;
}

int entry_opattrs_put(const struct db *db, struct db_write *wr, entry_id id, const struct buf *rec)
{
	MDB_txn *txn = db_write_txn(wr);
	if (!db->has_opattrs)
		return 0;
	if (rec->len == 0)
		return entry_opattrs_delete(db, wr, id);
	MDB_val k = {sizeof(id), &id}, v = {rec->len, rec->data};
	return mdb_put(txn, db->opattrs, &k, &v, 0);
}

int entry_opattrs_delete(const struct db *db, struct db_write *wr, entry_id id)
{
	MDB_txn *txn = db_write_txn(wr);
	if (!db->has_opattrs)
		return 0;
	MDB_val k = {sizeof(id), &id};
	int rc = mdb_del(txn, db->opattrs, &k, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int entry_opattrs_get(const struct db *db, struct db_read *rd, entry_id id, struct entry_view *e)
{
	MDB_txn *txn = db_read_txn(rd);
	if (!db->has_opattrs)
		return MDB_NOTFOUND;
	MDB_val k = {sizeof(id), &id}, v;
	int rc = mdb_get(txn, db->opattrs, &k, &v);
	if (rc == 0) {
		e->attrs = v.mv_data;
		e->attrslen = v.mv_size;
	}
	return rc;
}

int entry_opattrs_values(const struct db *db, const struct entry_view *kept, int i,
                         struct berval *bv, int max)
{
	const char *name = entry_opattrs_names[i];
	const unsigned char *vals, *v;
	size_t vlen, len;
	int n = 0;
	if (kept && entry_find_attr(kept, name, strlen(name), &vals, &vlen))
		for (const unsigned char *r = vals;
		     n < max && entry_next_value(&r, vals + vlen, &v, &len); n++)
			bv[n] = (struct berval){len, (char *)v};
	/* The import made the entry: its time and identity (entryCSN... entryUUID: none). */
	const char *own = i < 2 ? db->created : i < 4 ? db->creator : "";
	if (n == 0 && own[0] && max > 0)
		bv[n++] = (struct berval){strlen(own), (char *)own};
	return n;
}

const unsigned char *entry_opattrs_uuid(const struct entry_view *kept, const unsigned char *record,
                                        unsigned char buf[16])
{
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (kept && entry_find_attr(kept, "entryUUID", 9, &vals, &vlen))
		return entry_next_value(&vals, vals + vlen, &v, &len) &&
		               entry_uuid_parse((const char *)v, len, buf) == 0
		           ? buf
		           : NULL;
	if (kept && entry_find_attr(kept, "nsUniqueId", 10, &vals, &vlen))
		return NULL; /* 389-ds's entry made without its entryUUID plugin: none */
	static const unsigned char none[16];
	return memcmp(record, none, 16) != 0 ? record : NULL;
}
