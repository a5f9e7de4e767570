/*
 * Filters evaluated on stored entries (filter.h): trusted bytes minidir wrote, read on the
 * hot path, three-valued (RFC 4511 4.5.1.7), counted against a work budget and, for large
 * filters, resumed through a memo (filter_memo.c).
 */
#include "protocol/filter.h"

#include "protocol/tlv.h"

#include <ldap.h>
#include <stdint.h>
#include <string.h>

/* True if the stored type t[0..n) is the description attr names. */
static bool type_matches(const char *attr, size_t attr_len, const unsigned char *t, size_t n)
{
	return match_desc(attr, attr_len, (const char *)t, n);
}

/* True if the stored type t[0..n) is f's attribute or, for a supertype, one of its subtypes
 * (with f's options among t's). */
static bool names_type(const struct filter *f, const unsigned char *t, size_t n)
{
	if (type_matches(f->attr, f->attr_len, t, n))
		return true;
	if (!f->supertype)
		return false;
	const struct schema_attr *at = schema_attr_find((const char *)t, n);
	return at && schema_attr_is_a(at, f->supertype) &&
	       match_desc_options(f->attr, f->attr_len, (const char *)t, n);
}

static bool substr_match(const struct filter *f, const char *v, size_t len)
{
	if (f->initial.val) {
		if (len < f->initial.len || memcmp(v, f->initial.val, f->initial.len) != 0)
			return false;
		v += f->initial.len, len -= f->initial.len;
	}
	if (f->final.val) {
		if (len < f->final.len ||
		    memcmp(v + len - f->final.len, f->final.val, f->final.len) != 0)
			return false;
		len -= f->final.len;
	}
	for (size_t i = 0; i < f->nany; i++) {
		const struct filter_value *a = &f->any[i];
		const char *hit = a->len ? memmem(v, len, a->val, a->len) : v;
		if (!hit)
			return false;
		len -= (size_t)(hit - v) + a->len;
		v = hit + a->len;
	}
	return true;
}

/* Evaluates f's assertion on one value v[0..len). */
static enum filter_result eval_value(const struct filter *f, const char *v, size_t len,
                                     struct buf *scratch)
{
	if (f->oc && !f->ext_ordering) {
		const struct schema_oc *oc = schema_oc_find(v, len);
		if (oc)
			return schema_oc_is_a(oc, f->oc) ? FILTER_TRUE : FILTER_FALSE;
	}
	scratch->off = scratch->len = 0;
	if (match_normalize(f->rule, v, len, scratch) < 0)
		return FILTER_UNDEFINED;
	const char *nv = scratch->data ? (const char *)scratch->data : "";
	size_t nlen = scratch->len;
	bool hit = false;
	switch (f->kind) {
	case FILTER_EXT:
		hit = f->ext_ordering
		          ? match_compare(f->rule, nv, nlen, f->value.val, f->value.len) < 0
		          : nlen == f->value.len && memcmp(nv, f->value.val, nlen) == 0;
		break;
	case FILTER_EQ:
	case FILTER_APPROX:
		hit = nlen == f->value.len && memcmp(nv, f->value.val, nlen) == 0;
		break;
	case FILTER_GE:
		hit = match_compare(f->rule, nv, nlen, f->value.val, f->value.len) >= 0;
		break;
	case FILTER_LE:
		hit = match_compare(f->rule, nv, nlen, f->value.val, f->value.len) <= 0;
		break;
	case FILTER_SUBSTR:
		hit = substr_match(f, nv, nlen);
		break;
	default:
		break;
	}
	return hit ? FILTER_TRUE : FILTER_FALSE;
}

/*
 * One evaluation of a filter on one entry: its context, the work counted so far against the
 * budget (filter.h: a unit per item tested, one or more per value compared), and the entry's DN
 * parsed once for all its :dn: items (an OR of 2,000 of them parsed it 2,000 times).
 */
struct eval {
	const struct filter_ctx *ctx;
	uint64_t work;
	uint64_t limit; /* UINT64_MAX: none */
	LDAPDN dn;      /* parsed when a :dn: item first needs it; freed at the end */
	bool dn_parsed;
	struct filter_memo *memo; /* ctx's, or NULL */
	uint64_t yield;           /* the memo's yield point, the limit once a node is decided */
};

/*
 * The units of comparing one value under f's rule: a DN-valued one is normalized by libldap,
 * about 12 times the cost of a string (0.48 us against 0.039 us a value here: an OR of 1,000
 * member items, then of 1,000 :dn: caseIgnoreMatch items, on a group of 10,000 members); a
 * substrings item searches the value once a piece (struct filter's piece_units).
 */
static uint64_t value_cost(const struct filter *f)
{
	return f->rule == MATCH_DN ? 12 : 1 + (uint64_t)f->piece_units;
}

/* True once the evaluation has used its budget: every item from then on is Undefined. */
static bool spent(const struct eval *ev)
{
	return ev->work > ev->limit;
}

/* Evaluates a value assertion on one attribute's values (the SET content). */
static enum filter_result eval_values(const struct filter *f, const unsigned char *p,
                                      const unsigned char *end, struct eval *ev)
{
	enum filter_result r = FILTER_FALSE;
	unsigned char tag;
	const unsigned char *v;
	size_t vlen;
	while (p < end && tlv_read(&p, end, &tag, &v, &vlen)) {
		if ((ev->work += value_cost(f)) > ev->limit)
			return FILTER_UNDEFINED;
		enum filter_result one = eval_value(f, (const char *)v, vlen, ev->ctx->scratch);
		if (one == FILTER_TRUE)
			return FILTER_TRUE;
		if (one == FILTER_UNDEFINED)
			r = FILTER_UNDEFINED;
	}
	return r;
}

/* extensibleMatch with dnAttributes: the AVAs of the entry's DN are values too. */
static enum filter_result eval_dn_attrs(const struct filter *f, struct eval *ev)
{
	const struct filter_ctx *ctx = ev->ctx;
	if (!ctx->dn || ctx->dnlen == 0)
		return FILTER_FALSE;
	if (!ev->dn_parsed) {
		struct berval in = {ctx->dnlen, (char *)ctx->dn};
		ev->dn_parsed = true;
		if (ldap_bv2dn(&in, &ev->dn, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
			ev->dn = NULL; /* libldap freed what it had parsed */
	}
	LDAPDN dn = ev->dn;
	if (!dn)
		return FILTER_UNDEFINED;
	enum filter_result r = FILTER_FALSE;
	for (int i = 0; dn[i] && r != FILTER_TRUE; i++) {
		for (int j = 0; dn[i][j] && r != FILTER_TRUE; j++) {
			if ((ev->work += value_cost(f)) > ev->limit)
				return FILTER_UNDEFINED;
			LDAPAVA *ava = dn[i][j];
			const struct schema_attr *at =
			    schema_attr_find(ava->la_attr.bv_val, ava->la_attr.bv_len);
			const char *name = at ? at->name : ava->la_attr.bv_val;
			size_t nlen = at ? strlen(at->name) : ava->la_attr.bv_len;
			if (f->attr && !names_type(f, (const unsigned char *)name, nlen))
				continue;
			if (!attr_gate_allows(ctx->gate, name, nlen))
				continue; /* a type the client may not search: as if not in the DN
				           */
			enum filter_result one =
			    eval_value(f, ava->la_value.bv_val, ava->la_value.bv_len, ctx->scratch);
			if (one == FILTER_TRUE || (one == FILTER_UNDEFINED && r == FILTER_FALSE))
				r = one;
		}
	}
	return r;
}

/* Evaluates a leaf over one run of attributes; *r collects Undefined. */
static bool eval_attrs(const struct filter *f, const unsigned char *p, const unsigned char *end,
                       struct eval *ev, enum filter_result *r)
{
	unsigned char tag;
	const unsigned char *seq, *type, *vals;
	size_t seqlen, tlen, vlen;
	while (p < end && tlv_read(&p, end, &tag, &seq, &seqlen)) {
		const unsigned char *q = seq, *qend = seq + seqlen;
		if (!tlv_read(&q, qend, &tag, &type, &tlen))
			continue;
		/* An extensible match without a type tries every attribute. */
		if (f->attr ? !names_type(f, type, tlen) : f->kind != FILTER_EXT)
			continue;
		if (!attr_gate_allows(ev->ctx->gate, (const char *)type, tlen)) {
			/* A subtype the client may not search: Undefined unless another holds. */
			if (f->attr)
				*r = FILTER_UNDEFINED;
			continue;
		}
		if (f->kind == FILTER_PRESENT)
			return true;
		if (!tlv_read(&q, qend, &tag, &vals, &vlen))
			continue;
		enum filter_result one = eval_values(f, vals, vals + vlen, ev);
		if (one == FILTER_TRUE)
			return true;
		if (one == FILTER_UNDEFINED && f->attr)
			*r = FILTER_UNDEFINED;
		if (spent(ev))
			return false;
	}
	return false;
}

void filter_chain_set(struct filter *f, const uint32_t *ids, size_t n)
{
	f->chain_ids = ids;
	f->chain_n = n;
	f->chain_set = true;
}

/* An in-chain item: whether the entry's ID is in the set its search attached (a binary
 * search); Undefined when none was attached or the entry's ID is not known. */
static enum filter_result eval_chain(const struct filter *f, const struct filter_ctx *ctx)
{
	if (!f->chain_set || ctx->id == 0)
		return FILTER_UNDEFINED;
	size_t lo = 0, hi = f->chain_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->chain_ids[mid] < ctx->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->chain_n && f->chain_ids[lo] == ctx->id ? FILTER_TRUE : FILTER_FALSE;
}

static enum filter_result eval_leaf(const struct filter *f, const unsigned char *attrs, size_t len,
                                    struct eval *ev)
{
	const struct filter_ctx *ctx = ev->ctx;
	if (f->invalid || (f->attr && !attr_gate_allows(ctx->gate, f->attr, f->attr_len)))
		return FILTER_UNDEFINED; /* a type the client may not search */
	if (f->chain != FILTER_CHAIN_NONE)
		return eval_chain(f, ctx);
	enum filter_result r = FILTER_FALSE;
	if (eval_attrs(f, attrs, attrs + len, ev, &r) ||
	    (ctx->extra && eval_attrs(f, ctx->extra, ctx->extra + ctx->extra_len, ev, &r)))
		return FILTER_TRUE;
	if (f->kind == FILTER_EXT && f->dn_attrs) {
		enum filter_result d = eval_dn_attrs(f, ev);
		if (d != FILTER_FALSE)
			return d;
	}
	return r;
}

bool filter_values_match(const struct filter *items, const unsigned char *t, size_t tlen,
                         const unsigned char *v, size_t vlen, struct buf *scratch)
{
	for (const struct filter *f = items; f; f = f->next) {
		/* An in-chain item tests entries, not values: it matches none (Undefined). */
		if (f->invalid || f->chain != FILTER_CHAIN_NONE ||
		    (f->attr ? !names_type(f, t, tlen) : f->kind != FILTER_EXT))
			continue;
		if (f->kind == FILTER_PRESENT ||
		    eval_value(f, (const char *)v, vlen, scratch) == FILTER_TRUE)
			return true;
	}
	return false;
}

static enum filter_result eval(const struct filter *f, const unsigned char *attrs, size_t len,
                               struct eval *ev);

/*
 * AND (decisive FILTER_FALSE) or OR (decisive FILTER_TRUE) over f's children,
 * three-valued (RFC 4511 4.5.1.7): a decisive child decides; otherwise any
 * Undefined child makes the set Undefined.
 */
static enum filter_result eval_set(const struct filter *f, enum filter_result decisive,
                                   const unsigned char *attrs, size_t len, struct eval *ev)
{
	enum filter_result r = decisive == FILTER_FALSE ? FILTER_TRUE : FILTER_FALSE;
	for (const struct filter *c = f->child; c; c = c->next) {
		enum filter_result x = eval(c, attrs, len, ev);
		if (x == decisive)
			return decisive;
		if (x == FILTER_UNDEFINED)
			r = FILTER_UNDEFINED;
		if (spent(ev))
			return FILTER_UNDEFINED;
	}
	return r;
}

static enum filter_result eval_node(const struct filter *f, const unsigned char *attrs, size_t len,
                                    struct eval *ev);

/*
 * One node, through the memo when there is one: a node it knows costs its unit and gives its
 * result again; a node evaluated to the end (not cut: the budget not passed) is remembered,
 * and the first one remembered in a call moves the limit to the memo's yield point, so that
 * each resumed evaluation decides at least one node more however costly it is.
 */
static enum filter_result eval(const struct filter *f, const unsigned char *attrs, size_t len,
                               struct eval *ev)
{
	struct filter_memo *m = ev->memo;
	if (!m || f->id >= m->n)
		return eval_node(f, attrs, len, ev);
	if (m->known[f->id]) {
		if (++ev->work > ev->limit)
			return FILTER_UNDEFINED;
		return (enum filter_result)(m->known[f->id] - 1);
	}
	enum filter_result r = eval_node(f, attrs, len, ev);
	if (spent(ev))
		return FILTER_UNDEFINED; /* perhaps cut: not remembered */
	m->known[f->id] = (unsigned char)(1 + r);
	m->used = true;
	if (ev->yield < ev->limit)
		ev->limit = ev->yield;
	return r;
}

static enum filter_result eval_node(const struct filter *f, const unsigned char *attrs, size_t len,
                                    struct eval *ev)
{
	if (++ev->work > ev->limit)
		return FILTER_UNDEFINED;
	switch (f->kind) {
	case FILTER_AND:
		return eval_set(f, FILTER_FALSE, attrs, len, ev);
	case FILTER_OR:
		return eval_set(f, FILTER_TRUE, attrs, len, ev);
	case FILTER_NOT: {
		enum filter_result x = eval(f->child, attrs, len, ev);
		return x == FILTER_UNDEFINED || spent(ev) ? FILTER_UNDEFINED
		       : x == FILTER_TRUE                 ? FILTER_FALSE
		                                          : FILTER_TRUE;
	}
	default:
		return eval_leaf(f, attrs, len, ev);
	}
}

enum filter_result filter_eval_ctx(const struct filter *f, const unsigned char *attrs, size_t len,
                                   const struct filter_ctx *ctx)
{
	struct eval ev = {.ctx = ctx, .limit = UINT64_MAX, .yield = UINT64_MAX};
	if (ctx->work) {
		ev.work = *ctx->work;
		ev.limit = ctx->work_limit ? ctx->work_limit : UINT64_MAX;
		if (ctx->memo && ctx->memo->n) {
			ev.memo = ctx->memo;
			ev.yield = ctx->memo->yield ? ctx->memo->yield : UINT64_MAX;
		}
	}
	enum filter_result r = eval(f, attrs, len, &ev);
	if (ev.dn)
		ldap_dnfree(ev.dn);
	if (ctx->work)
		*ctx->work = ev.work;
	return r;
}

enum filter_result filter_eval(const struct filter *f, const unsigned char *attrs, size_t len,
                               struct buf *scratch)
{
	struct filter_ctx ctx = {.scratch = scratch};
	return filter_eval_ctx(f, attrs, len, &ctx);
}
