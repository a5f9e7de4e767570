#include "server/ops/search_chain.h"

#include <errno.h>
#include <ldap.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "server/log.h"
#include "storage/memberof_chain.h"

_Static_assert(sizeof(entry_id) == sizeof(uint32_t), "filter.h keeps entry IDs as uint32_t");

/* One resolve: where it reads, what it may still take, and its buffers. */
struct resolve {
	const struct db *db;
	struct db_read *txn;
	struct arena *mem;
	size_t left;    /* IDs the items still to resolve may take (SIZE_MAX: no bound) */
	struct buf ids; /* one walk's answer */
	struct memberof_chain_scratch scratch;
};

/* f's answer: 0, E2BIG past the bound, or ENOMEM / an LMDB error. */
static int resolve_item(struct resolve *r, struct filter *f)
{
	entry_id start;
	int rc = db_dn2id(r->db, r->txn, f->chain_key.val, f->chain_key.len, &start);
	if (rc == 0)
		rc = memberof_chain(r->db, r->txn, start,
		                    f->chain == FILTER_CHAIN_MEMBERS ? MEMBEROF_CHAIN_MEMBERS
		                                                     : MEMBEROF_CHAIN_GROUPS,
		                    r->left, &r->ids, &r->scratch);
	if (rc == DB_NOTFOUND) { /* no such entry (or no memberOf index): the empty set */
		filter_chain_set(f, NULL, 0);
		return 0;
	}
	if (rc)
		return rc;
	size_t n = r->ids.len / sizeof(entry_id);
	entry_id *copy = n ? arena_alloc(r->mem, r->ids.len) : NULL;
	if (n && !copy)
		return ENOMEM;
	if (n)
		memcpy(copy, r->ids.data, r->ids.len);
	filter_chain_set(f, copy, n);
	if (r->left != SIZE_MAX)
		r->left -= n; /* memberof_chain returned at most r->left */
	return 0;
}

/* Every in-chain item of f and the filters after it. */
static int resolve_tree(struct resolve *r, struct filter *f)
{
	int rc = 0;
	for (; f && rc == 0; f = f->next) {
		if (f->child)
			rc = resolve_tree(r, f->child);
		else if (f->chain != FILTER_CHAIN_NONE)
			rc = resolve_item(r, f);
	}
	return rc;
}

int search_chain_resolve(struct filter *f, const struct db *db, struct db_read *txn, size_t max,
                         struct arena *mem, char *why, size_t whylen)
{
	struct resolve r = {.db = db, .txn = txn, .mem = mem, .left = max ? max : SIZE_MAX};
	int rc = resolve_tree(&r, f);
	buf_free(&r.ids);
	memberof_chain_free(&r.scratch);
	if (rc == 0)
		return LDAP_SUCCESS;
	if (rc == E2BIG) {
		snprintf(why, whylen,
		         "the filter's in-chain items (" FILTER_IN_CHAIN_OID ") reach more than "
		         "the %zu entries the server allows (inchain_max); ask about a smaller "
		         "group",
		         max);
		return LDAP_ADMINLIMIT_EXCEEDED;
	}
	log_error("search: in-chain item: %s", rc == ENOMEM ? "out of memory" : db_error_text(rc));
	return LDAP_OTHER;
}
