#include "server/ops/search_plan.h"

#include <ldap.h>
#include <stdint.h>

#include "protocol/dn.h"

/* An equality item the index of its attribute answers whole: not one on a supertype, whose
 * subtypes' values the index does not hold (objectClass keys include every superclass). */
static bool index_answers(const struct db *db, const struct filter *f, const struct db_index **ix)
{
	return f->kind == FILTER_EQ && !f->invalid && !f->supertype &&
	       (*ix = db_index_find(db, f->attr, f->attr_len));
}

/*
 * The smallest candidate set an equality index or an in-chain item's answer offers for f: f
 * itself, or the operand of a top-level AND with the fewest IDs ((&(objectClass=person)(uid=x))
 * reads uid's one ID, not every person). Returns true with *best (the caller's to free; it borrows
 * f's value) and its size in *best_count, false when no index applies.
 */
static bool indexed_candidates(const struct db *db, struct db_read *txn, const struct filter *f,
                               bool need_count, struct candidates *best, size_t *best_count)
{
	const struct filter *one = f->kind == FILTER_AND ? f->child : f;
	need_count = need_count || f->kind == FILTER_AND; /* operands compete */
	bool found = false;
	for (; one; one = f->kind == FILTER_AND ? one->next : NULL) {
		const struct db_index *ix;
		struct candidates c;
		size_t n;
		if (one->chain_set) { /* an in-chain item's answer (search_chain.h): counted */
			cand_init_list(&c, one->chain_ids, one->chain_n);
			n = one->chain_n;
		} else if (index_answers(db, one, &ix)) {
			cand_init_index(&c, db, ix, one->value.val, one->value.len);
			n = need_count ? cand_count(&c, txn) : 0; /* 0: fewer than any scope */
		} else {
			continue;
		}
		if (!found || n < *best_count) {
			if (found)
				cand_free(best);
			*best = c;
			*best_count = n;
			found = true;
		} else {
			cand_free(&c);
		}
	}
	return found;
}

/* Always inlined (with LTO), as search_plan_holds: see candidates.c's cand_next. */
__attribute__((always_inline)) inline void search_plan_candidates(struct search_plan *p,
                                                                  const struct db *db,
                                                                  struct db_read *txn,
                                                                  const struct filter *f)
{
	if (p->scope == LDAP_SCOPE_BASE) {
		cand_init_one(&p->cand, p->base_id);
		return;
	}
	if (p->scope == LDAP_SCOPE_ONELEVEL)
		cand_init_children(&p->cand, db, p->base_id);
	else
		cand_init_subtree(&p->cand, db, p->base_key, p->base_keylen);
	/* A subtree's size is never counted (cand_count: SIZE_MAX), so any index is smaller:
	 * the one index of a filter that is one item is then taken without counting it. */
	struct candidates idx;
	size_t n = SIZE_MAX;
	if (!indexed_candidates(db, txn, f, p->cand.kind != CAND_SUBTREE, &idx, &n))
		return;
	if (n < cand_count(&p->cand, txn)) {
		cand_free(&p->cand);
		p->cand = idx;
		p->check_scope = true;
		p->filter_answered = f->kind != FILTER_AND; /* the item itself, not an operand */
	} else {
		cand_free(&idx);
	}
}

/* Always inlined (with LTO) into the search loop, as cand_next (candidates.c). */
__attribute__((always_inline)) inline bool
search_plan_holds(const struct search_plan *p, entry_id id, const struct entry_view *e)
{
	if (p->scope == LDAP_SCOPE_SUBORDINATE && id == p->base_id)
		return false; /* "children": the subtree without its base */
	if (!p->check_scope)
		return true;
	if (p->scope == LDAP_SCOPE_ONELEVEL)
		return e->parent == p->base_id && id != p->base_id;
	return dn_key_in_subtree(e->key, e->keylen, p->base_key, p->base_keylen);
}

bool search_plan_reaches(const struct search_plan *p, entry_id id, const struct entry_view *e)
{
	if (p->scope == LDAP_SCOPE_ONELEVEL)
		return e->parent == p->base_id && id != p->base_id;
	if (p->scope == LDAP_SCOPE_SUBORDINATE && id == p->base_id)
		return false;
	return p->scope != LDAP_SCOPE_BASE &&
	       dn_key_in_subtree(e->key, e->keylen, p->base_key, p->base_keylen);
}

void search_plan_free(struct search_plan *p)
{
	cand_free(&p->cand);
}
