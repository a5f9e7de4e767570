/*
 * A search's in-chain items answered (LDAP_MATCHING_RULE_IN_CHAIN, protocol/filter.h's
 * struct filter chain): once per search, before its candidates are chosen, each item's
 * closure is walked (storage/memberof_chain.h) in the search's read transaction and
 * attached to the item as a sorted array of entry IDs, so that evaluating the item on an
 * entry is a binary search of the entry's ID, and search_plan.c may take the array as the
 * candidates.
 *
 * What the walk reads: the membership tables (memberof, eq.memberof) and the records of
 * the entries it passes through (their DNs), whatever the client may read of those groups
 * (as memberOf's values are computed whatever the client may read of the groups): the
 * access rules decide, entry by entry, whether the client may search the item's attribute
 * (Undefined if not) and whether it may see the entry at all.
 *
 * Thread rules: the worker thread of the search, in its read transaction.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_CHAIN_H
#define MINIDIR_SERVER_OPS_SEARCH_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/arena.h"
#include "protocol/filter.h"
#include "storage/db.h"

/* True if f (a whole filter) may hold an in-chain item: an and, or, not, or one. Pure. */
static inline bool search_chain_maybe(const struct filter *f)
{
	return f->kind == FILTER_AND || f->kind == FILTER_OR || f->kind == FILTER_NOT ||
	       f->chain != FILTER_CHAIN_NONE;
}

/*
 * Attaches its answer to every in-chain item of f (a search's filter, in mem, the arena the
 * arrays go into too): an assertion DN that names no entry gets an empty set (FALSE), as
 * does every item in a file without a memberOf index. max (> 0) bounds the IDs of all the
 * items together (inchain_max). Returns LDAP_SUCCESS; LDAP_ADMINLIMIT_EXCEEDED past max,
 * with the message in why[0..whylen); LDAP_OTHER (an LMDB error or out of memory, logged).
 */
int search_chain_resolve(struct filter *f, const struct db *db, struct db_read *txn, size_t max,
                         struct arena *mem, char *why, size_t whylen);

#endif
