#include "protocol/filter.h"

#include "protocol/dn.h"
#include "protocol/tlv.h"

#include <ldap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- decoding (untrusted input, ber_in.h) ---- */

/* Where decoded nodes and values go: the caller's arena, and a work buffer values are
 * normalized in before they are copied there. */
struct decoder {
	struct arena *mem;
	struct buf *scratch;
	uint32_t *nodes; /* nodes numbered so far (struct filter's id), or NULL: all get 0 */
};

static int take_value(const struct decoder *d, enum match_rule rule, const struct berval *in,
                      struct filter_value *out, bool *invalid)
{
	struct buf *tmp = d->scratch;
	tmp->off = tmp->len = 0;
	if (match_normalize(rule, in->bv_val, in->bv_len, tmp) < 0) {
		*invalid = true; /* e.g. "(member=not a dn)": Undefined, not an error */
		tmp->len = 0;
	}
	out->val = arena_strdup(d->mem, tmp->data, tmp->len); /* NUL-terminated */
	out->len = tmp->len;
	return out->val ? 0 : -1;
}

/*
 * The rule a filter item of kind k on an attribute uses: the schema's
 * equality, ordering or substrings rule (MATCH_NONE makes the item Undefined),
 * or without a schema the built-in table's rule for all three.
 */
static enum match_rule rule_for_kind(enum filter_kind k, const struct schema_attr *at,
                                     const char *name, size_t len)
{
	if (at)
		return k == FILTER_GE || k == FILTER_LE ? at->ord
		       : k == FILTER_SUBSTR             ? at->sub
		                                        : at->eq;
	if (schema_loaded())
		return MATCH_NONE; /* an attribute the schema does not know */
	enum match_rule r = match_rule_for(name, len);
	if (k == FILTER_SUBSTR && (r == MATCH_DN || r == MATCH_INTEGER))
		r = MATCH_CASE_IGNORE; /* pieces of a DN or number compare as text */
	return r;
}

/* Sets the attribute of f: its schema name when known (aliases and OIDs resolve). */
static int take_attr(const struct decoder *d, struct filter *f, const struct berval *attr)
{
	if (attr->bv_len == 0)
		return -1;
	const struct schema_attr *at = schema_attr_find(attr->bv_val, attr->bv_len);
	char canon[256];
	size_t clen = schema_desc_as(at, attr->bv_val, attr->bv_len, canon, sizeof(canon));
	const char *name = clen ? canon : attr->bv_val;
	size_t len = clen ? clen : attr->bv_len;
	if (!(f->attr = arena_strdup(d->mem, name, len)))
		return -1;
	f->attr_len = len;
	if (!at)
		match_lower(f->attr, f->attr_len);
	f->rule = rule_for_kind(f->kind, at, f->attr, f->attr_len);
	if (at && at->has_subtypes)
		f->supertype = at;
	if (!at && schema_loaded())
		f->invalid = true; /* an undefined attribute type: Undefined, presence too */
	return 0;
}

/*
 * An objectClass assertion of a class that has subclasses: f->oc, so that values naming a
 * subclass match too (slapd's objectSubClassMatch). v is the assertion as sent.
 */
static void take_class(struct filter *f, const struct berval *v)
{
	if (!f->attr || strcasecmp(f->attr, "objectClass") != 0)
		return;
	const char *p = v->bv_val;
	size_t len = v->bv_len;
	while (len && *p == ' ')
		p++, len--;
	while (len && p[len - 1] == ' ')
		len--;
	const struct schema_oc *oc = schema_oc_find(p, len);
	if (oc && oc->has_subclasses)
		f->oc = oc;
}

/* An attribute value assertion (f->kind set): its attribute, its value in normal form,
 * and for an objectClass equality or approx the subclasses that match too. */
static int take_assertion(const struct decoder *d, struct filter *f, const struct berval *attr,
                          const struct berval *val)
{
	if (take_attr(d, f, attr) < 0 || take_value(d, f->rule, val, &f->value, &f->invalid) < 0)
		return -1;
	if (f->kind == FILTER_EQ || f->kind == FILTER_APPROX)
		take_class(f, val);
	return 0;
}

/* An AttributeValueAssertion's content: exactly attributeDesc and assertionValue. */
static int decode_ava(const struct decoder *d, struct ber_in *in, struct filter *f)
{
	struct berval attr, val;
	if (ber_in_string(in, LBER_OCTETSTRING, &attr) < 0 ||
	    ber_in_string(in, LBER_OCTETSTRING, &val) < 0 || !ber_in_end(in))
		return -1;
	return take_assertion(d, f, &attr, &val);
}

/*
 * A SubstringFilter's content into f (kind FILTER_SUBSTR): the type, then one SEQUENCE of
 * at least one piece, an initial only first, a final only last. -1 if malformed.
 */
static int decode_substrings(const struct decoder *d, struct ber_in *in, struct filter *f)
{
	struct berval attr;
	struct ber_in seq;
	if (ber_in_string(in, LBER_OCTETSTRING, &attr) < 0 ||
	    ber_in_take(in, LBER_SEQUENCE, &seq) < 0 || !ber_in_end(in) ||
	    take_attr(d, f, &attr) < 0)
		return -1;
	/* Room for every piece as an "any" (the pieces are counted, not yet checked). */
	size_t n = 0;
	for (struct ber_in c = seq, piece;
	     ber_in_take(&c, (unsigned char)ber_in_peek(&c), &piece) == 0;)
		n++;
	if (n == 0 || !(f->any = arena_alloc(d->mem, n * sizeof(*f->any))))
		return -1;
	for (size_t i = 0; !ber_in_end(&seq); i++) {
		int t = ber_in_peek(&seq);
		struct filter_value *dst;
		struct berval piece;
		if (t == LDAP_SUBSTRING_INITIAL && i == 0)
			dst = &f->initial;
		else if (t == LDAP_SUBSTRING_ANY && !f->final.val)
			dst = &f->any[f->nany++];
		else if (t == LDAP_SUBSTRING_FINAL && !f->final.val)
			dst = &f->final;
		else
			return -1;
		if (ber_in_string(&seq, (unsigned char)t, &piece) < 0 ||
		    take_value(d, f->rule, &piece, dst, &f->invalid) < 0)
			return -1;
	}
	return 0;
}

/*
 * A MatchingRuleAssertion's content into f (kind FILTER_EXT): [1] matchingRule, [2] type,
 * [3] matchValue, [4] dnAttributes, in this order, a rule or a type required (RFC 4511).
 * The rule is the one named, else the type's equality rule; a rule minidir does not know,
 * or a substrings rule, makes the item Undefined.
 */
static int decode_extensible(const struct decoder *d, struct ber_in *in, struct filter *f)
{
	struct berval mr = {0, NULL}, type, value;
	bool has_rule = false;
	if (ber_in_peek(in) == LDAP_FILTER_EXT_OID) {
		if (ber_in_string(in, LDAP_FILTER_EXT_OID, &mr) < 0)
			return -1;
		has_rule = true;
	}
	if (ber_in_peek(in) == LDAP_FILTER_EXT_TYPE &&
	    (ber_in_string(in, LDAP_FILTER_EXT_TYPE, &type) < 0 || take_attr(d, f, &type) < 0))
		return -1;
	if (ber_in_string(in, LDAP_FILTER_EXT_VALUE, &value) < 0 ||
	    (ber_in_peek(in) == LDAP_FILTER_EXT_DNATTRS &&
	     ber_in_bool(in, LDAP_FILTER_EXT_DNATTRS, &f->dn_attrs) < 0) ||
	    !ber_in_end(in) || (!has_rule && !f->attr))
		return -1;
	if (has_rule) {
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)mr.bv_len,
		         mr.bv_val); /* An ordering rule matches values below the assertion (X.501);
		                      * a substrings rule cannot take a plain value: Undefined. */
		f->ext_ordering = strstr(name, "Ordering") != NULL;
		bool usable = !strstr(name, "Substrings") && mr.bv_len < sizeof(name);
		f->rule = usable ? match_rule_named(name) : MATCH_NONE;
	} else {
		take_class(f, &value); /* the type's own equality: objectClass's subclasses too */
	}
	return take_value(d, f->rule, &value, &f->value, &f->invalid);
}

/* A zeroed node from the arena. */
static struct filter *node(const struct decoder *d, enum filter_kind kind)
{
	struct filter *f = arena_alloc(d->mem, sizeof(*f));
	if (f) {
		memset(f, 0, sizeof(*f));
		f->kind = kind;
		if (d->nodes)
			f->id = (*d->nodes)++;
	}
	return f;
}

/* The filter kind of each item tag (the and, or and not nodes are told apart first). */
static int item_kind(int tag)
{
	switch (tag) {
	case LDAP_FILTER_EQUALITY:
		return FILTER_EQ;
	case LDAP_FILTER_GE:
		return FILTER_GE;
	case LDAP_FILTER_LE:
		return FILTER_LE;
	case LDAP_FILTER_APPROX:
		return FILTER_APPROX;
	case LDAP_FILTER_SUBSTRINGS:
		return FILTER_SUBSTR;
	case LDAP_FILTER_EXT:
		return FILTER_EXT;
	case LDAP_FILTER_PRESENT:
		return FILTER_PRESENT;
	case LDAP_FILTER_AND:
		return FILTER_AND;
	case LDAP_FILTER_OR:
		return FILTER_OR;
	case LDAP_FILTER_NOT:
		return FILTER_NOT;
	default:
		return -1;
	}
}

/* Reads one Filter element from in at nesting depth. NULL: malformed, too deep or out of memory. */
static struct filter *decode(const struct decoder *d, struct ber_in *in, int depth)
{
	int tag = ber_in_peek(in), kind = item_kind(tag);
	struct ber_in c;
	struct filter *f;
	if (depth > FILTER_MAX_DEPTH || kind < 0 || !(f = node(d, (enum filter_kind)kind)))
		return NULL;
	if (kind == FILTER_PRESENT) {
		struct berval attr;
		return ber_in_string(in, (unsigned char)tag, &attr) == 0 &&
		               take_attr(d, f, &attr) == 0
		           ? f
		           : NULL;
	}
	if (ber_in_take(in, (unsigned char)tag, &c) < 0)
		return NULL;
	switch (kind) {
	case FILTER_AND:
	case FILTER_OR: {
		struct filter **tail = &f->child;
		while (!ber_in_end(&c)) {
			if (!(*tail = decode(d, &c, depth + 1)))
				return NULL;
			tail = &(*tail)->next;
		}
		return f;
	}
	case FILTER_NOT:
		return (f->child = decode(d, &c, depth + 1)) && ber_in_end(&c) ? f : NULL;
	case FILTER_SUBSTR:
		return decode_substrings(d, &c, f) == 0 ? f : NULL;
	case FILTER_EXT:
		return decode_extensible(d, &c, f) == 0 ? f : NULL;
	default: /* eq, ge, le, approx */
		return decode_ava(d, &c, f) == 0 ? f : NULL;
	}
}

struct filter *filter_decode(struct ber_in *in, struct arena *mem, struct buf *scratch)
{
	uint32_t nodes = 0;
	struct decoder d = {mem, scratch, &nodes};
	struct ber_in save = *in;
	struct filter *f = decode(&d, in, 1);
	if (!f)
		*in = save;
	return f;
}

struct filter *filter_make(enum filter_kind kind, const struct berval *attr,
                           const struct berval *value, struct arena *mem, struct buf *scratch)
{
	struct decoder d = {mem, scratch, NULL};
	struct filter *f;
	if ((kind != FILTER_EQ && kind != FILTER_PRESENT) || !(f = node(&d, kind)))
		return NULL;
	return (kind == FILTER_EQ ? take_assertion(&d, f, attr, value) : take_attr(&d, f, attr)) ==
	               0
	           ? f
	           : NULL;
}

/* ---- evaluation (trusted stored entries, hot path) ---- */

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
 * member items, then of 1,000 :dn: caseIgnoreMatch items, on a group of 10,000 members).
 */
static uint64_t value_cost(const struct filter *f)
{
	return f->rule == MATCH_DN ? 12 : 1;
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

static enum filter_result eval_leaf(const struct filter *f, const unsigned char *attrs, size_t len,
                                    struct eval *ev)
{
	const struct filter_ctx *ctx = ev->ctx;
	if (f->invalid || (f->attr && !attr_gate_allows(ctx->gate, f->attr, f->attr_len)))
		return FILTER_UNDEFINED; /* a type the client may not search */
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

struct filter *filter_decode_values(struct ber_in *in, struct arena *mem, struct buf *scratch)
{
	struct decoder d = {mem, scratch, NULL};
	struct ber_in save = *in, seq;
	struct filter *head = NULL, **tail = &head;
	if (ber_in_take(in, LBER_SEQUENCE, &seq) < 0)
		return NULL;
	while (!ber_in_end(&seq)) {
		int t = ber_in_peek(&seq);
		if (t == LDAP_FILTER_AND || t == LDAP_FILTER_OR || t == LDAP_FILTER_NOT ||
		    !(*tail = decode(&d, &seq, 1))) {
			*in = save;
			return NULL;
		}
		tail = &(*tail)->next;
	}
	if (!head)
		*in = save;
	return head;
}

bool filter_values_match(const struct filter *items, const unsigned char *t, size_t tlen,
                         const unsigned char *v, size_t vlen, struct buf *scratch)
{
	for (const struct filter *f = items; f; f = f->next) {
		if (f->invalid || (f->attr ? !names_type(f, t, tlen) : f->kind != FILTER_EXT))
			continue;
		if (f->kind == FILTER_PRESENT ||
		    eval_value(f, (const char *)v, vlen, scratch) == FILTER_TRUE)
			return true;
	}
	return false;
}

bool filter_uses(const struct filter *f, const char *const *names, size_t n)
{
	for (; f; f = f->next) {
		if (f->child && filter_uses(f->child, names, n))
			return true;
		if (!f->attr)
			continue;
		/* A cheap first test: first bytes equal but for case (| 0x20 folds letters; it
		 * may let through a pair strcasecmp then tells apart, never stops a match). */
		unsigned char first = (unsigned char)f->attr[0] | 0x20;
		for (size_t i = 0; i < n; i++)
			if (((unsigned char)names[i][0] | 0x20) == first &&
			    strcasecmp(f->attr, names[i]) == 0)
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

int filter_memo_init(struct filter_memo *m, const struct filter *f, struct arena *mem)
{
	size_t n = filter_items(f);
	memset(m, 0, sizeof(*m));
	if (n < FILTER_MEMO_MIN_ITEMS)
		return 0;
	if (!(m->known = arena_alloc(mem, n)))
		return -1;
	memset(m->known, 0, n);
	m->n = n;
	return 0;
}

bool filter_memo_done(const struct filter_memo *m, const struct filter *f)
{
	return !m->n || m->known[f->id] != 0;
}

void filter_memo_clear(struct filter_memo *m)
{
	if (m->used)
		memset(m->known, 0, m->n);
	m->used = false;
}

size_t filter_items(const struct filter *f)
{
	size_t n = 0;
	for (; f; f = f->next)
		n += 1 + (f->child ? filter_items(f->child) : 0);
	return n;
}

enum filter_result filter_eval(const struct filter *f, const unsigned char *attrs, size_t len,
                               struct buf *scratch)
{
	struct filter_ctx ctx = {.scratch = scratch};
	return filter_eval_ctx(f, attrs, len, &ctx);
}
