/*
 * A dynamic group's record edited in place for storage/dyngroup_update.c: member values
 * taken away and added, with their keys in eq.member (when indexed) and memberdn, as an
 * import would have written them; the record's other attributes, its key and its links
 * stay. DN lists are bufs of records, each a u32 length (native order) and the bytes.
 *
 * Thread rules: the caller's write transaction; scratch buffers are the caller's.
 */
#ifndef MINIDIR_STORAGE_DYNGROUP_EDIT_H
#define MINIDIR_STORAGE_DYNGROUP_EDIT_H

#include <lber.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "storage/db.h"

/* What dyngroup_edit returns when the record would pass ENTRY_MAX_BYTES. */
#define DYNGROUP_TOO_LARGE (-3)

/* Appends dn[0..len) to list. Returns 0 or ENOMEM. */
int dyngroup_dn_add(struct buf *list, const void *dn, size_t len);

/* The DN of list at *off: true with bv set (pointing into list) and *off past it. */
bool dyngroup_dn_next(const struct buf *list, size_t *off, struct berval *bv);

/*
 * Rewrites group's record: its member values less those of removes (each once, byte for
 * byte), plus those of adds; their keys follow. old, rec and key are scratch.
 * Returns 0, DYNGROUP_TOO_LARGE (past ENTRY_MAX_BYTES: nothing written), ENOMEM or an
 * LMDB error.
 */
int dyngroup_edit(const struct db *db, struct db_write *txn, entry_id group,
                  const struct buf *removes, const struct buf *adds, struct buf *old,
                  struct buf *rec, struct buf *key);

#endif
