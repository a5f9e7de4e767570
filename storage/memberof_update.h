/*
 * memberOf kept up to date by storage/db_update.h, giving the tables an import of the
 * changed directory would (storage/memberof.h): memberof (member ID -> group
 * IDs), eq.memberof (group's normalized DN -> member IDs) and memberdn (member value
 * key -> group IDs). An entry's links are taken apart before it changes (its DN, its
 * member values, or it goes) and made again from the stored tables after.
 *
 * Thread rules: the caller's write transaction; scratch buffers are the caller's.
 */
#ifndef MINIDIR_STORAGE_MEMBEROF_UPDATE_H
#define MINIDIR_STORAGE_MEMBEROF_UPDATE_H

#include <stdbool.h>

#include "protocol/buf.h"
#include "storage/db.h"

struct memberof_scratch {
	struct buf key, gdn, ids, rec;
	struct buf up, work; /* storage/memberof_nested.c's */
};

void memberof_scratch_free(struct memberof_scratch *s);

/* Copies the record e views into rec and points e into the copy, so it survives writes to
 * the transaction it was read in. Returns 0, ENOMEM or DB_CORRUPTED. */
int memberof_copy_record(struct entry_view *e, struct buf *rec);

/*
 * Removes every memberOf link of entry id (stored, its record as it was linked): as a
 * member of groups, and as a group of members. Returns 0 or an LMDB error.
 */
int memberof_unlink(const struct db *db, struct db_write *txn, entry_id id,
                    struct memberof_scratch *s);

/* Removes entry id's links as a member of groups (memberof and eq.memberof). Returns 0
 * or an LMDB error. */
int memberof_unlink_member(const struct db *db, struct db_write *txn, entry_id id,
                           struct memberof_scratch *s);

/* Links member to group (both stored) in memberof and eq.memberof, once. Returns 0,
 * DB_NOTFOUND (no group) or an LMDB error. */
int memberof_link_one(const struct db *db, struct db_write *txn, entry_id member, entry_id group,
                      struct memberof_scratch *s);

/*
 * Makes every link of entry id (stored, with its current DN and member values): the
 * entries its member and uniqueMember values name, and the groups memberdn says name
 * its DN. Returns 0 or an LMDB error.
 */
int memberof_link(const struct db *db, struct db_write *txn, entry_id id,
                  struct memberof_scratch *s);

/*
 * Adds (add) or removes group's member and uniqueMember values of e (a record not in
 * pages txn writes) in memberdn. Returns 0 or an LMDB error.
 */
int memberof_write_dns(const struct db *db, struct db_write *txn, entry_id group,
                       const struct entry_view *e, bool add, struct memberof_scratch *s);

#endif
