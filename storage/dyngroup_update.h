/*
 * Dynamic groups kept right on a replica (dynamic_groups = yes, docs/dynamic-groups.md):
 * storage/db_update.h calls these around each change so that every groupOfURLs entry's
 * member values stay what a fresh import would compute (storage/dyngroup.h): its
 * provider's static values, and the entries its memberURL values find.
 *
 * Computed members are kept apart in the dynmembers table (storage/db.h): group ID ->
 * the IDs of the members the server added, and 0 for each dynamic group. A group's record
 * holds both kinds of value; a computed value is the member's DN as stored, and never one
 * a static value names already (memberdn says which keys those are), so a member that
 * stops matching loses its value while a static one stays, and a new version of the group
 * from the provider (its static values only) is merged again.
 *
 * Refresh points, each inside the change's transaction:
 *   - an entry X added, modified, renamed or moved (with what lies below it), or deleted:
 *     for each dynamic group, X's membership is recomputed (its scope and filter tested on
 *     X's record, groups x URLs tests); a group's record is rewritten only when X joins
 *     it, leaves it, or its DN changes;
 *   - a dynamic group G stored (added, or any new version: its memberURL or its static
 *     values changed) or deleted: G's computed members are recomputed in full, a search
 *     of each URL's subtree in dn2id.
 * A group's record, eq.member and memberdn change here; memberof and eq.memberof follow
 * from memberdn when db_update links the changed entries (nested memberOf too).
 *
 * Whether a file keeps dynamic groups is recorded in meta (DYNGROUP_META), by the import
 * and by a new replica's file (db_meta_flag_follow); without it these do nothing.
 *
 * Thread rules: the caller's write transaction; one struct dyngroup_scratch per change.
 */
#ifndef MINIDIR_STORAGE_DYNGROUP_UPDATE_H
#define MINIDIR_STORAGE_DYNGROUP_UPDATE_H

#include <stdbool.h>
#include <stdio.h>

#include "protocol/buf.h"
#include "storage/db.h"
#include "storage/dyngroup_edit.h"

/* The meta key recording that the file keeps dynamic groups. */
#define DYNGROUP_META "dynamic_groups"
/* memberURL values in all when db->dynamic_groups_max is 0 (docs/reliability.md). */
#define DYNGROUP_MAX_URLS 1000

/* DYNGROUP_TOO_LARGE: what dyngroup_update_after returns when a group's members pass
 * ENTRY_MAX_BYTES (storage/dyngroup_edit.h). */

struct dyngroup_scratch {
	bool on;           /* the file keeps dynamic groups (dyngroup_update_before) */
	struct buf before; /* the changed entries' computed memberships before the change */
	struct buf groups, found, rec, old, key, dns;
};

void dyngroup_scratch_free(struct dyngroup_scratch *s);

/*
 * Before the entries of ids (entry_id values; records as stored; a put's entry first)
 * change: reads the meta flag into s->on and notes, with their DNs, the dynamic groups
 * that list them as computed members. Returns 0, ENOMEM or an LMDB error.
 */
int dyngroup_update_before(const struct db *db, struct db_write *txn, const struct buf *ids,
                           struct dyngroup_scratch *s);

/*
 * After the entries of ids changed (stored with their new records and DNs; or deleted,
 * then no longer stored), before their memberOf links are made: with put, the first of
 * ids is a stored entry whose own members are recomputed in full when it is a dynamic
 * group; every entry of ids then gets its membership in every other dynamic group. Groups
 * past db->dynamic_groups_max URLs stay static and a member that would make a group pass
 * ENTRY_MAX_BYTES is left out, each with a line on warn. Returns 0, DYNGROUP_TOO_LARGE
 * (the put group's own members: err set), ENOMEM or an LMDB error.
 */
int dyngroup_update_after(const struct db *db, struct db_write *txn, const struct buf *ids,
                          bool put, struct dyngroup_scratch *s, FILE *warn, char *err,
                          size_t errlen);

#endif
