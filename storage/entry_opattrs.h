/*
 * A copy of the operational attributes another server kept for each entry:
 * createTimestamp, modifyTimestamp, creatorsName, modifiersName and entryCSN, the
 * account state a password policy writes (slapd ppolicy's pwd* state attributes, 389-ds's
 * nsAccountLock, accountUnlockTime, passwordExpirationTime and passwordGraceUserTime: what
 * a bind honours, server/ops/account.h), the
 * authzTo rules of proxy authorization (server/ops/authz_identity.h), and
 * 389-ds's nsUniqueId and the entryUUID its plugin writes (a 389-ds replica's record UUID is
 * the nsUniqueId, the UUID its Sync State controls name: see entry_opattrs_uuid), as a replica's
 * provider sent them with the entry (a syncrepl consumer asks for "+", or by name of 389-ds), or as
 * an imported LDIF gave them (slapcat's output, minidir-export's: ldif/import_parse.c). They live
 * in the database's opattrs table (storage/db.h: entry ID -> the content of a PartialAttributeList
 * holding just these), beside the entry record, so that the record (and the pre-encoded answer to
 * "*") stays the user attributes alone; a replica answers them as its provider does
 * (server/ops/computed_attrs.c), where an entry imported without them answers the import's time and
 * identity.
 *
 * Thread rules: those of the transaction passed.
 */
#ifndef MINIDIR_STORAGE_ENTRY_OPATTRS_H
#define MINIDIR_STORAGE_ENTRY_OPATTRS_H

#include <ldap.h>
#include <stdbool.h>

#include "protocol/buf.h"
#include "storage/db.h"

/* The values of one kept attribute entry_opattrs_values' callers read at most: pwdHistory
 * and pwdFailureTime are the many-valued ones (slapd keeps pwdInHistory and
 * pwdMaxRecordedFailure of them, a few dozen at most in practice). */
#define ENTRY_OPATTRS_VALUES_MAX 256

/* The names kept, in the order they are stored; NULL-terminated. entryUUID is the last,
 * entry_opattrs_names[ENTRY_OPATTRS_UUID]: its value is answered through
 * entry_opattrs_uuid, not entry_opattrs_values. */
extern const char *const entry_opattrs_names[];
#define ENTRY_OPATTRS_UUID 22

/* The index of type in entry_opattrs_names (compared without case), or -1. */
int entry_opattrs_index(const char *type);

/* Whether type (an attribute description) is one of the names kept (no options). */
bool entry_opattrs_is_kept(const char *type);

/*
 * The kept attributes among mods (names compared case-insensitively) as the content of a
 * PartialAttributeList, into out (reset first; empty when mods hold none). An entryUUID
 * equal to uuid (the record's: the header says it) is left out unless mods hold an
 * nsUniqueId. Returns 0, or -1 when out of memory. mods are borrowed.
 */
int entry_opattrs_encode(LDAPMod **mods, const unsigned char uuid[16], struct buf *out);

/*
 * Stores rec as entry id's (an empty one deletes what id had), or deletes id's. Without
 * an opattrs table (db->has_opattrs false) both do nothing. Return 0 or an LMDB error.
 */
int entry_opattrs_put(const struct db *db, struct db_write *txn, entry_id id,
                      const struct buf *rec);
int entry_opattrs_delete(const struct db *db, struct db_write *txn, entry_id id);

/*
 * Points *e's attrs at entry id's kept attributes (valid until txn ends), so that
 * entry_find_attr reads them; the other fields of *e are left alone. Returns 0,
 * DB_NOTFOUND (none kept, or no table) or an LMDB error.
 */
int entry_opattrs_get(const struct db *db, struct db_read *txn, entry_id id, struct entry_view *e);

/*
 * The values of entry_opattrs_names[i] for an entry, as the server answers them and
 * minidir-export writes them: those of kept (what entry_opattrs_get read; NULL: none),
 * else, for the four an import makes, its own (db->created for createTimestamp and
 * modifyTimestamp, db->creator for creatorsName and modifiersName, when not ""). Sets at
 * most max of bv (pointing into kept or db) and returns how many: 0 when there are none
 * (an imported entry's entryCSN).
 */
int entry_opattrs_values(const struct db *db, const struct entry_view *kept, int i,
                         struct berval *bv, int max);

/*
 * The entryUUID an entry answers: the one kept (389-ds's entryUUID plugin's, parsed into
 * buf), else none (NULL) when kept holds an nsUniqueId (389-ds made the entry without that
 * plugin), else record (the record header's 16 bytes; NULL when all zero). kept may be NULL.
 */
const unsigned char *entry_opattrs_uuid(const struct entry_view *kept, const unsigned char *record,
                                        unsigned char buf[16]);

#endif
