/*
 * Where a search looks: its scope from a base entry, the candidate set that
 * covers it (the scope's own index, or an equality index when that is
 * smaller), and the scope check for each candidate.
 *
 * A plan belongs to one search; it is used on the worker thread that runs it,
 * inside that worker's read transaction.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_PLAN_H
#define MINIDIR_SERVER_OPS_SEARCH_PLAN_H

#include <stdbool.h>

#include "protocol/filter.h"
#include "storage/candidates.h"
#include "storage/db.h"

struct search_plan {
	int scope;                     /* LDAP_SCOPE_BASE, _ONELEVEL, _SUBTREE or _SUBORDINATE */
	entry_id base_id;              /* set by the caller once the base is found */
	const unsigned char *base_key; /* the base's reversed DN key (the caller's) */
	size_t base_keylen;
	struct candidates cand; /* filled by search_plan_candidates (owned) */
	bool check_scope;       /* candidates come from an index: scope checked per entry */
	/* The candidates are the entries the whole filter matches (it is one equality item
	 * its index answers, or one in-chain item): an entry needs no filter evaluation where the
	 * client may search the item's attribute. */
	bool filter_answered;
};

/*
 * Chooses p->cand for filter f: the base alone, its children, its subtree, or
 * the entries an equality index or an in-chain item's answer (search_chain.h) gives for f
 * (or for an operand of a top-level AND) when they are fewer; then each must pass
 * search_plan_holds. f and p->base_key
 * are borrowed by p->cand: they must not change or go before p does.
 */
void search_plan_candidates(struct search_plan *p, const struct db *db, struct db_read *txn,
                            const struct filter *f);

/* Whether candidate id (viewed as e) lies in the scope. */
bool search_plan_holds(const struct search_plan *p, entry_id id, const struct entry_view *e);

/* Whether entry id (e), not the base itself for a base-scope search, lies in the
 * scope whatever the candidates: an alias's target the search reaches anyway. */
bool search_plan_reaches(const struct search_plan *p, entry_id id, const struct entry_view *e);

/* Frees what p owns. */
void search_plan_free(struct search_plan *p);

#endif
