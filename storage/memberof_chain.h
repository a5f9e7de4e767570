/*
 * The in-chain walks (LDAP_MATCHING_RULE_IN_CHAIN, protocol/filter.h): every entry inside
 * a group through any chain of groups, or every group around an entry, read from the
 * direct membership tables (storage/db.h): memberof (entry ID -> the groups naming it) going
 * up, eq.memberof (a group's normalized DN -> its members) going down.
 *
 * Whether the file holds nested memberOf (storage/memberof_nested.h) does not change the
 * answer: the closure of a closure is the closure, so a walk over tables that hold it only
 * finds the same entries sooner (each further lookup returns IDs already seen), and its
 * depth is not cut at MEMBEROF_NESTED_DEPTH levels there either.
 *
 * Cycle-safe: an entry reached twice is followed once (a group in a cycle is inside
 * itself, as memberof_nested lists it); depth is unbounded; the answer is bounded by the
 * caller's max IDs instead.
 *
 * Thread rules: any thread, in the caller's transaction (read or write); no state kept.
 */
#ifndef MINIDIR_STORAGE_MEMBEROF_CHAIN_H
#define MINIDIR_STORAGE_MEMBEROF_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "storage/db.h"

/* Which way a walk goes from its entry. */
enum memberof_chain_way {
	MEMBEROF_CHAIN_MEMBERS, /* down: the members of the group, theirs, ... */
	MEMBEROF_CHAIN_GROUPS   /* up: the groups of the entry, theirs, ... */
};

/* Buffers a walk reuses (the caller's; zeroed to start, freed by memberof_chain_free). */
struct memberof_chain_scratch {
	struct buf key;  /* a group's eq.memberof key */
	struct buf step; /* the IDs one lookup gives */
};

void memberof_chain_free(struct memberof_chain_scratch *s);

/*
 * Sets ids to the entry IDs the walk from entry start reaches going way, ascending, no
 * duplicates; start itself only when a cycle leads back to it. max bounds how many
 * (SIZE_MAX: no bound): past it the walk stops. s is scratch. Returns 0; E2BIG past max (ids then
 * holds more than max IDs, not all); DB_NOTFOUND when db has no memberOf index (going down);
 * ENOMEM, DB_CORRUPTED or an LMDB error. An ID that names no entry (a table's stale
 * link) is returned but not followed.
 */
int memberof_chain(const struct db *db, struct db_read *txn, entry_id start,
                   enum memberof_chain_way way, size_t max, struct buf *ids,
                   struct memberof_chain_scratch *s);

#endif
