/*
 * A replica's copy of the operational attributes its provider keeps for each entry:
 * createTimestamp, modifyTimestamp, creatorsName, modifiersName and entryCSN, as the
 * provider sent them with the entry (a syncrepl consumer asks for "+"). They live in the
 * database's opattrs table (storage/db.h: entry ID -> the content of a
 * PartialAttributeList holding just these), beside the entry record, so that the record
 * (and the pre-encoded answer to "*") stays the user attributes alone; a replica
 * answers them as its provider does (server/ops/computed_attrs.c), where an imported
 * file answers the import's time and identity.
 *
 * Thread rules: those of the transaction passed.
 */
#ifndef MINIDIR_STORAGE_ENTRY_OPATTRS_H
#define MINIDIR_STORAGE_ENTRY_OPATTRS_H

#include <ldap.h>
#include <lmdb.h>

#include "protocol/buf.h"
#include "storage/db.h"

/* The names kept, in the order they are stored; NULL-terminated. */
extern const char *const entry_opattrs_names[];

/*
 * The kept attributes among mods (names compared case-insensitively) as the content of a
 * PartialAttributeList, into out (reset first; empty when mods hold none). Returns 0, or
 * -1 when out of memory. mods are borrowed.
 */
int entry_opattrs_encode(LDAPMod **mods, struct buf *out);

/*
 * Stores rec as entry id's (an empty one deletes what id had), or deletes id's. Without
 * an opattrs table (db->has_opattrs false) both do nothing. Return 0 or an LMDB error.
 */
int entry_opattrs_put(const struct db *db, MDB_txn *txn, entry_id id, const struct buf *rec);
int entry_opattrs_delete(const struct db *db, MDB_txn *txn, entry_id id);

/*
 * Points *e's attrs at entry id's kept attributes (valid until txn ends), so that
 * entry_find_attr reads them; the other fields of *e are left alone. Returns 0,
 * MDB_NOTFOUND (none kept, or no table) or an LMDB error.
 */
int entry_opattrs_get(const struct db *db, MDB_txn *txn, entry_id id, struct entry_view *e);

#endif
