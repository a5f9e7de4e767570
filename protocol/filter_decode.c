/*
 * Filters decoded from BER (filter.h): client bytes read through ber_in.h into a tree in the
 * caller's arena, values normalized under their attribute's matching rule; filter_make for
 * the one-assertion operations; filter_uses, a question about a decoded tree.
 */
#include "protocol/filter.h"
#include "protocol/sid.h"

#include <ldap.h>

#include "protocol/dn.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
	const char *name = attr->bv_val;
	size_t len = attr->bv_len;
	if (at && at->name_len < sizeof(canon) && !memchr(attr->bv_val, ';', attr->bv_len)) {
		/* No options (most items): schema_desc_as's answer is the schema's name itself,
		 * copied once, into the arena (~75 instructions less a lookup). */
		name = at->name;
		len = at->name_len;
	} else {
		size_t clen = schema_desc_as(at, attr->bv_val, attr->bv_len, canon, sizeof(canon));
		name = clen ? canon : name;
		len = clen ? clen : len;
	}
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
	/* The length first: most items are on other attributes (a strcasecmp call costs ~40
	 * instructions a lookup). */
	if (!f->attr || f->attr_len != 11 || strcasecmp(f->attr, "objectClass") != 0)
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
 * and for an objectClass equality or approx the subclasses that match too. On one of
 * Active Directory's SID attributes a SID's string form stands for its bytes, as AD takes
 * it (protocol/sid.h). */
static int take_assertion(const struct decoder *d, struct filter *f, const struct berval *attr,
                          const struct berval *val)
{
	if (take_attr(d, f, attr) < 0)
		return -1;
	unsigned char sid[SID_MAX_BYTES];
	int n;
	struct berval bytes;
	if (f->rule == MATCH_OCTET && val->bv_len > 2 && (val->bv_val[0] | 0x20) == 's' &&
	    val->bv_val[1] == '-' && sid_attribute(f->attr, f->attr_len) &&
	    (n = sid_from_string(val->bv_val, val->bv_len, sid)) > 0) {
		bytes = (struct berval){(ber_len_t)n, (char *)sid};
		val = &bytes;
	}
	if (take_value(d, f->rule, val, &f->value, &f->invalid) < 0)
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
 * one to FILTER_MAX_PIECES pieces, an initial only first, a final only last, none empty
 * (RFC 4515 cannot write an empty one; slapd refuses it too). -1 if malformed.
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
	if (n == 0 || n > FILTER_MAX_PIECES || !(f->any = arena_alloc(d->mem, n * sizeof(*f->any))))
		return -1;
	size_t bytes = 0;
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
		if (ber_in_string(&seq, (unsigned char)t, &piece) < 0 || piece.bv_len == 0 ||
		    take_value(d, f->rule, &piece, dst, &f->invalid) < 0)
			return -1;
		bytes += dst->len;
	}
	f->piece_units = (uint32_t)(n - 1 + bytes / 64);
	return 0;
}

/* True if mr names the in-chain rule: its OID, or the NAME cn=Subschema gives it. */
static bool is_in_chain(const struct berval *mr)
{
	static const char name[] = "inChainMatch";
	return (mr->bv_len == sizeof(FILTER_IN_CHAIN_OID) - 1 &&
	        memcmp(mr->bv_val, FILTER_IN_CHAIN_OID, mr->bv_len) == 0) ||
	       (mr->bv_len == sizeof(name) - 1 && strncasecmp(mr->bv_val, name, mr->bv_len) == 0);
}

/*
 * An in-chain item (filter.h's struct filter, chain): on memberOf it asks for the members
 * inside a group, on member or uniqueMember for the groups around an entry; any other type
 * (with options too) is Undefined, as an unknown rule is. The value is a DN, kept in normal
 * form (not a DN: Undefined). dnAttributes adds nothing: the answer is a set of entries.
 */
static int take_chain(const struct decoder *d, struct filter *f, const struct berval *value)
{
	f->rule = MATCH_DN;
	/* The normal form and the key from one parse: the search looks the entry up by key. */
	struct buf *ndn = d->scratch, key = {0};
	ndn->off = ndn->len = 0;
	if (dn_normalize(value->bv_val, value->bv_len, ndn, &key) < 0)
		f->invalid = true, ndn->len = key.len = 0;
	f->value.val = arena_strdup(d->mem, ndn->data, ndn->len);
	f->value.len = ndn->len;
	f->chain_key.val = arena_strdup(d->mem, key.data, key.len);
	f->chain_key.len = key.len;
	buf_free(&key);
	if (!f->value.val || !f->chain_key.val)
		return -1;
	if (f->attr && strcasecmp(f->attr, "memberOf") == 0)
		f->chain = FILTER_CHAIN_MEMBERS;
	else if (f->attr &&
	         (strcasecmp(f->attr, "member") == 0 || strcasecmp(f->attr, "uniqueMember") == 0))
		f->chain = FILTER_CHAIN_GROUPS;
	else
		f->invalid = true;
	if (f->value.len == 0)
		f->invalid = true; /* the root DSE is no group and no member */
	if (f->invalid)
		f->chain = FILTER_CHAIN_NONE;
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
	if (has_rule && is_in_chain(&mr))
		return take_chain(d, f, &value);
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

bool filter_uses(const struct filter *f, const char *const *names, size_t n, uint64_t lens)
{
	for (; f; f = f->next) {
		if (f->child && filter_uses(f->child, names, n, lens))
			return true;
		if (!f->attr || f->chain != FILTER_CHAIN_NONE)
			continue; /* an in-chain item reads no values (filter.h) */
		if (!(lens & FILTER_NAME_LEN_BIT(f->attr_len)))
			continue; /* no name is as long: (uid=x) asks no strcasecmp */
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
