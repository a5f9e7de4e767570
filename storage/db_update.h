/*
 * Changes to one entry of an open database (db_open_rw), applied inside a write
 * transaction the caller owns, so that the tables end exactly as a fresh minidir-import
 * of the changed directory would make them (but for entry IDs): id2entry, dn2id,
 * children, uuid2id, every eq.<attr> (objectClass with superclasses), memberof,
 * eq.memberof, memberdn, the entry count in meta and its record of password classes
 * (storage/db_passwords.h; its samples may differ: a sample is kept while its class is in
 * use). This is what a syncrepl consumer
 * (RFC 4533) needs: entries are named by entryUUID, and every change it receives is an
 * entry as a SearchResultEntry carries it (add, modify and modrdn alike) or a delete.
 *
 * Input: the DN as the provider spells it (stored as given, indexed normalized) and the
 * content of the SearchResultEntry's PartialAttributeList (the bytes inside its SEQUENCE
 * OF), borrowed for the call. They are treated as import treats an LDIF entry: checked
 * against the loaded schema (unless DB_UPDATE_NO_SCHEMA), operational attributes
 * dropped (an entryUUID attribute too: the uuid argument names the entry), types stored
 * by their schema names, memberOf computed.
 *
 * Each call runs in a nested transaction: on an error nothing of the change is applied
 * and the caller's transaction goes on as it was (it may commit the changes before and
 * after). A change is visible to readers once the caller commits.
 *
 * Results are LDAP result codes (ldap.h), with a sentence in err->msg:
 *   LDAP_SUCCESS (0)
 *   LDAP_PROTOCOL_ERROR         the attributes are not a PartialAttributeList
 *   LDAP_INVALID_DN_SYNTAX      the DN does not parse
 *   LDAP_UNWILLING_TO_PERFORM   the DN is outside the suffix; a move of an entry below
 *                               itself; renaming the suffix entry
 *   LDAP_NO_SUCH_OBJECT         the parent entry does not exist; delete: no such UUID
 *   LDAP_ALREADY_EXISTS         another entry (another UUID) has the DN
 *   LDAP_NOT_ALLOWED_ON_NONLEAF delete of an entry with children, without DB_UPDATE_SUBTREE
 *   LDAP_OBJECT_CLASS_VIOLATION no objectClass, or the schema check failed
 *   LDAP_INVALID_SYNTAX         a value an index's rule cannot normalize
 *   LDAP_ADMINLIMIT_EXCEEDED    the record would take more than ENTRY_MAX_BYTES, or its
 *                               DN's key more than db_max_dn_key
 *   LDAP_OTHER                  an LMDB error (err->mdb; MDB_MAP_FULL, a disk error...)
 *                               or no memory: the caller should abort its transaction
 *
 * Thread rules: the thread that owns txn; one writer per database (LMDB's rule).
 */
#ifndef MINIDIR_STORAGE_DB_UPDATE_H
#define MINIDIR_STORAGE_DB_UPDATE_H

#include <stddef.h>

#include "storage/db.h"

/* db_update_put: skip the schema check (as minidir-import -s). */
#define DB_UPDATE_NO_SCHEMA 1u
/* db_update_delete: delete the entry and everything below it. */
#define DB_UPDATE_SUBTREE 2u

struct db_update_error {
	int mdb;       /* the LMDB error behind LDAP_OTHER, else 0 */
	char msg[512]; /* what was wrong, NUL-terminated */
};

/*
 * Adds the entry uuid, or replaces it when uuid names one: its attributes become attrs
 * and, when dn names another place, it is renamed or moved there with everything below
 * it (their DNs, keys and memberships follow; their parent links stay). txn is a write
 * transaction of db->env.
 */
int db_update_put(struct db *db, struct db_write *txn, const unsigned char uuid[16], const char *dn,
                  size_t dnlen, const unsigned char *attrs, size_t attrslen, unsigned flags,
                  struct db_update_error *err);

/* Deletes the entry uuid (with DB_UPDATE_SUBTREE, and every entry below it). */
int db_update_delete(struct db *db, struct db_write *txn, const unsigned char uuid[16],
                     unsigned flags, struct db_update_error *err);

/*
 * The replication cookie: an opaque value stored in meta, to be set in the transaction
 * of the changes it covers; len 0 removes it (the next refresh is a full one).
 * db_update_get_cookie points *data into txn's map (valid until txn ends). Both return 0,
 * DB_NOTFOUND (get: none stored) or an LMDB error.
 */
int db_update_set_cookie(struct db *db, struct db_write *txn, const void *data, size_t len);
int db_update_get_cookie(const struct db *db, struct db_read *txn, const void **data, size_t *len);

/*
 * The replica's note of entries it skipped (server/replica/apply.c): opaque too, in meta
 * beside the cookie and set in the same transactions, so that it stays true to what
 * the file holds across restarts. len 0 removes it. Same results as the cookie's.
 */
int db_update_set_skipped(struct db *db, struct db_write *txn, const void *data, size_t len);
int db_update_get_skipped(const struct db *db, struct db_read *txn, const void **data, size_t *len);

/*
 * What the replica's file replicates (server/replica/seed.h's source text: provider,
 * base, scope, filter, attributes, type), in meta beside the cookie: a file seeded from a
 * peer's copy is served only if it replicates what the config says. Same results as the
 * cookie's; len 0 removes it.
 */
int db_update_set_source(struct db *db, struct db_write *txn, const void *data, size_t len);
int db_update_get_source(const struct db *db, struct db_read *txn, const void **data, size_t *len);

#endif
