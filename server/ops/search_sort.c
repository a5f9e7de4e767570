#include "server/ops/search_sort.h"

#include <ldap.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/schema.h"

/*
 * The ordering rule that goes with equality rule eq, for a type that names no ORDERING:
 * cn, uid and sn have none in their RFCs, and slapd answers a sort on them
 * inappropriateMatching (18), where 389-ds and Active Directory sort by the equality
 * rule's counterpart (caseIgnoreMatch: caseIgnoreOrderingMatch), as address books expect.
 * A rule with no ordering counterpart in RFC 4517 (telephoneNumberMatch,
 * distinguishedNameMatch, the OID rules) gives MATCH_NONE: 18 still.
 */
static enum match_rule ordering_of(enum match_rule eq)
{
	switch (eq) {
	case MATCH_CASE_IGNORE:
	case MATCH_CASE_EXACT:
	case MATCH_INTEGER:
	case MATCH_NUMERIC:
	case MATCH_OCTET:
		return eq; /* its ordering rule compares the same normal form (match_rule.h) */
	default:
		return MATCH_NONE;
	}
}

int sort_spec_init(struct sort_spec *spec, const struct sort_key *keys, int n)
{
	memset(spec, 0, sizeof(*spec));
	for (int i = 0; i < n; i++) {
		const struct schema_attr *at =
		    schema_attr_find(keys[i].attr.bv_val, keys[i].attr.bv_len);
		if (!at && schema_loaded())
			return LDAP_NO_SUCH_ATTRIBUTE;
		const char *name = at ? at->name : keys[i].attr.bv_val;
		size_t len = at ? strlen(at->name) : keys[i].attr.bv_len;
		if (len >= sizeof(spec->key[i].attr))
			return LDAP_NO_SUCH_ATTRIBUTE;
		memcpy(spec->key[i].attr, name, len);
		spec->key[i].attr[len] = '\0';
		/* The named rule, else the type's ordering rule, else its equality rule. */
		enum match_rule r = MATCH_NONE;
		if (keys[i].rule.bv_val) {
			char rule[128];
			if (keys[i].rule.bv_len >= sizeof(rule))
				return LDAP_INAPPROPRIATE_MATCHING;
			memcpy(rule, keys[i].rule.bv_val, keys[i].rule.bv_len);
			rule[keys[i].rule.bv_len] = '\0';
			r = match_rule_named(rule);
		} else if (at) {
			r = at->ord != MATCH_NONE ? at->ord : ordering_of(at->eq);
		} else {
			r = match_rule_for(name, len);
		}
		if (r == MATCH_NONE)
			return LDAP_INAPPROPRIATE_MATCHING;
		spec->key[i].rule = r;
		spec->key[i].reverse = keys[i].reverse;
	}
	spec->n = n;
	return LDAP_SUCCESS;
}

/* The value of attribute attr in e that sorts first (last when reverse), normalized. */
static bool pick_value(const struct entry_view *e, const char *attr, enum match_rule rule,
                       bool reverse, struct buf *best, struct buf *scratch)
{
	const unsigned char *vals, *v;
	size_t vlen, len;
	bool found = false;
	best->off = best->len = 0;
	if (!entry_find_attr(e, attr, strlen(attr), &vals, &vlen))
		return false;
	for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &len);) {
		scratch->off = scratch->len = 0;
		if (match_normalize(rule, (const char *)v, len, scratch) < 0)
			continue;
		int c =
		    found ? match_compare(rule, scratch->data, scratch->len, best->data, best->len)
		          : 0;
		if (!found || (reverse ? c > 0 : c < 0)) {
			best->len = 0;
			buf_append(best, scratch->data, scratch->len);
			found = true;
		}
	}
	return found;
}

int sort_add(struct sorted *s, const struct sort_spec *spec, entry_id id,
             const struct entry_view *e, const struct attr_gate *gate, struct buf *scratch)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct sort_item *items = realloc(s->items, cap * sizeof(*items));
		if (!items)
			return -1;
		s->items = items;
		s->cap = cap;
	}
	struct sort_item *it = &s->items[s->n];
	memset(it, 0, sizeof(*it));
	it->id = id;
	struct buf keys = {0}, best = {0};
	for (int i = 0; i < spec->n; i++) {
		const char *attr = spec->key[i].attr;
		bool visible = attr_gate_allows(gate, attr, strlen(attr));
		it->present[i] = visible && pick_value(e, attr, spec->key[i].rule,
		                                       spec->key[i].reverse, &best, scratch);
		it->len[i] = it->present[i] ? best.len : 0;
		if (it->present[i] && buf_append(&keys, best.data, best.len) < 0) {
			buf_free(&keys);
			buf_free(&best);
			return -1;
		}
	}
	buf_free(&best);
	it->keys = keys.data; /* owned by the item now */
	s->n++;
	return 0;
}

static int item_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_spec *spec = arg;
	const struct sort_item *a = pa, *b = pb;
	size_t ao = 0, bo = 0;
	for (int i = 0; i < spec->n; i++) {
		int c;
		/* An entry without the attribute sorts after all that have it (RFC 2891). */
		if (!a->present[i] || !b->present[i])
			c = a->present[i] == b->present[i] ? 0 : a->present[i] ? -1 : 1;
		else
			c = match_compare(spec->key[i].rule, a->keys + ao, a->len[i], b->keys + bo,
			                  b->len[i]);
		if (c && spec->key[i].reverse && a->present[i] && b->present[i])
			c = -c;
		if (c)
			return c;
		ao += a->len[i];
		bo += b->len[i];
	}
	return (a->id > b->id) - (a->id < b->id); /* stable: import order */
}

void sort_finish(struct sorted *s, const struct sort_spec *spec)
{
	if (s->n > 1)
		qsort_r(s->items, s->n, sizeof(*s->items), item_cmp, (void *)spec);
	s->pos = 0;
	s->end = s->n;
}

void sort_free(struct sorted *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->items[i].keys);
	free(s->items);
	memset(s, 0, sizeof(*s));
}
