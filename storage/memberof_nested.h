/*
 * Nested memberOf (memberof_nested = yes, minidir.conf(5)): memberof and eq.memberof
 * (storage/memberof.h) hold every group reached through groups in groups, not only the
 * groups naming an entry. The direct relation stays in memberdn (value key -> groups
 * naming it), which is what every closure is computed from, so the closure of one entry
 * is a walk up memberdn: its groups, their groups, and so on.
 *
 * The walk is cycle-safe (a group reached twice is followed once; a group in a cycle
 * reaches itself and so is one of its own groups, as slapd's dynlist answers) and stops
 * after MEMBEROF_NESTED_DEPTH levels: groups further up are left out and the walk
 * reports the DN of a group it cut at.
 *
 * Whether a file holds the closure is recorded in its meta table ("memberof_nested"),
 * written by the import; a replica's changes keep what the file records.
 *
 * Thread rules: the caller's write transaction (memberof_nested_get: any).
 */
#ifndef MINIDIR_STORAGE_MEMBEROF_NESTED_H
#define MINIDIR_STORAGE_MEMBEROF_NESTED_H

#include <stdbool.h>
#include <stdio.h>

#include "protocol/buf.h"
#include "storage/db.h"
#include "storage/memberof_update.h"

/* Levels of groups in groups followed from an entry (its own groups are level 1). */
#define MEMBEROF_NESTED_DEPTH 32

/* Sets *on to whether the file records a nested closure. Returns 0 or an LMDB error. */
int memberof_nested_get(const struct db *db, struct db_read *txn, bool *on);

/* Records in meta that the file holds the nested closure (on) or direct memberOf. */
int memberof_nested_set(const struct db *db, struct db_write *txn, bool on);

/*
 * Sets groups (entry IDs, unordered) to every group id reaches through memberdn, up to
 * MEMBEROF_NESTED_DEPTH levels (id itself when a cycle leads back to it). When the bound
 * cut the walk, *cut is set and cut_dn holds the DN of a group whose groups were left
 * out (else *cut is false). ids is scratch. Returns 0, DB_NOTFOUND (no entry id),
 * ENOMEM or an LMDB error.
 */
int memberof_nested_closure(const struct db *db, struct db_read *txn, entry_id id,
                            struct buf *groups, struct buf *ids, bool *cut, struct buf *cut_dn);

/*
 * After memberof_resolve (the direct links): adds every nested link for each entry that
 * is a member of some group. A cut walk prints "memberOf: nesting deeper than N levels
 * above <DN>: cut" to warn (NULL: silent). Returns 0, or -1 with a message in err.
 */
int memberof_nested_resolve(struct db *db, struct db_write *txn, FILE *warn, char *err,
                            size_t errlen);

/*
 * Adds to set (entry IDs, no duplicates kept) every entry below those already in it:
 * the members eq.memberof holds for each, then theirs. Returns 0, ENOMEM or an LMDB error.
 */
int memberof_nested_below(const struct db *db, struct db_read *txn, struct buf *set,
                          struct memberof_scratch *s);

/*
 * Remakes the member side of each entry of set (IDs no longer stored are skipped): its
 * memberof links and eq.memberof keys become its closure. Warnings as for
 * memberof_nested_resolve. Returns 0, ENOMEM or an LMDB error.
 */
int memberof_nested_relink(const struct db *db, struct db_write *txn, const struct buf *set,
                           struct memberof_scratch *s, FILE *warn);

/*
 * At start: sets *stored to what the file records. A writable file with no entries yet
 * (a new replica) is made to record want first, in a transaction of its own; any other
 * file keeps what it records (the caller warns when that is not want). Returns 0 or an
 * LMDB error.
 */
int memberof_nested_follow(struct db *db, bool want, bool writable, bool *stored);

#endif
