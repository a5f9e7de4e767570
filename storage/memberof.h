/*
 * The memberOf tables (storage/db.h: memberof, eq.memberof, memberdn), their keys, and
 * how an import fills them; storage/memberof_update.h keeps them up to date as entries
 * change (a replica's writes), with the key functions below.
 *
 * memberOf as slapd's memberof overlay keeps it: an entry is a
 * member of every group whose member or uniqueMember names it. While entries are
 * stored, each group's member values go into memberdn (storage/db.h) as they would
 * for a replica; once every entry is, memberof_resolve walks memberdn and links the
 * values that name an entry, so a group may come before its members in the LDIF and
 * nothing but the database holds the memberships. Membership is direct (a member of
 * a group in a group is not a member of the outer one), values that name no entry are
 * ignored, and an entry named twice by one group (in two spellings) is its member once.
 *
 * Thread rules: memberof_collect keeps no state (any thread); the others take the
 * caller's write transaction.
 */
#ifndef MINIDIR_STORAGE_MEMBEROF_H
#define MINIDIR_STORAGE_MEMBEROF_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "protocol/buf.h"
#include "storage/db.h"

/*
 * Appends to keys, for each member and uniqueMember value of mods (the stored types, as
 * the import spells them), a record: u32 length (native order), then the value's
 * reversed DN key (memberof_value_key). A value that is not a DN, or whose key is
 * empty, is skipped. scratch is the caller's. Returns 0 or -1 (out of memory).
 */
int memberof_collect(LDAPMod **mods, struct buf *keys, struct buf *scratch);

/*
 * Writes memberof and eq.memberof from what memberdn holds, in txn (walked with a cursor,
 * so in one transaction). Returns 0, or -1 with a message in err.
 */
int memberof_resolve(struct db *db, struct db_write *txn, char *err, size_t errlen);

/* Shared with storage/memberof_update.c, which keeps the same tables up to date. */

/*
 * Appends to key the reversed DN key of a member value v (unique: a uniqueMember value,
 * whose optional "#'0101'B" UID is not part of the DN). Returns 0, or -1 when v is not
 * a DN (key unchanged).
 */
int memberof_value_key(const struct berval *v, bool unique, struct buf *key);

/* Sets gdn to group's eq.memberof key: its DN in the normal form of ix's rule. Returns 0,
 * DB_NOTFOUND (no such entry), ENOMEM, DB_CORRUPTED or an LMDB error. */
int memberof_group_key(const struct db *db, struct db_read *txn, const struct db_index *ix,
                       entry_id group, struct buf *gdn);

/* Records in memberdn that group holds a member value of reversed key key[0..len) (once;
 * an empty key or one longer than LMDB keys may be is left out). Returns 0 or an LMDB
 * error. */
int memberof_put_dn(const struct db *db, struct db_write *txn, const void *key, size_t len,
                    entry_id group);

#endif
