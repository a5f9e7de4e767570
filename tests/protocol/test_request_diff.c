/*
 * Differential test of protocol/request.c: thousands of generated LDAPMessages (searches
 * with random nested filters of every kind, attribute lists and controls; binds, compares,
 * extended requests, abandons, unbinds, operations minidir does not decode), each then
 * mutated (cut short, bits flipped, bytes set, lengths changed, bytes inserted or
 * dropped), decoded by request_decode and by a reference decoder written here on liblber
 * (ber_peek_element, ber_decode_int: its own TLV and INTEGER parsing). Both must agree on
 * accepting or rejecting, on the message ID, and on every field of an accepted request.
 *
 * The reference is the liblber decoder request.c had, with the rules ber_in.h adds on top
 * of liblber (tags checked, BOOLEAN sizes, an INTEGER not empty, nothing after the last
 * field of an element, elements inside their enclosing one, at most four length bytes).
 * INTEGERs and ENUMERATEDs are liblber's own: the generator pads some with leading 00 or
 * ff octets (X.690 does not allow them, liblber does), up to five content bytes (which
 * ber_decode_int refuses whatever they hold). A filter is
 * compared item by item against its bytes as sent: the attribute lowercased (no schema is
 * loaded), each value in the normal form of the rule the decoder chose (or the item
 * invalid when that rule refuses the value).
 */
#include <check.h>
#include <lber.h>
#include <ldap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/match.h"
#include "protocol/request.h"
#include "tests/check_run.h"

/* ---- the reference: liblber, element by element ---- */

/* A liblber reader of one element's content: [ber's position, end). */
struct ref_in {
	BerElement *ber;
	const char *end;
};

static ber_len_t left(const struct ref_in *in)
{
	ber_len_t n = 0;
	ber_get_option(in->ber, LBER_OPT_BER_REMAINING_BYTES, &n);
	return n;
}

/* Reads an element of tag want; *sub reads its content (free with ref_close). */
static int ref_take(struct ref_in *in, ber_tag_t want, struct berval *content)
{
	ber_len_t n = left(in);
	if (n == 0 || ber_peek_element(in->ber, content) != want)
		return -1;
	/* At most four length bytes (and liblber read a one-byte tag: want is one). */
	const char *here = in->end - n;
	if (content->bv_val - here > 6)
		return -1;
	struct berval raw;
	return ber_skip_raw(in->ber, &raw) == LBER_DEFAULT ? -1 : 0;
}

static struct ref_in ref_open(const struct berval *content)
{
	struct ref_in in = {ber_alloc_t(LBER_USE_DER), content->bv_val + content->bv_len};
	ck_assert_ptr_nonnull(in.ber);
	ber_init2(in.ber, (struct berval *)content, LBER_USE_DER);
	return in;
}

static void ref_close(struct ref_in *in)
{
	ber_free(in->ber, 0);
}

static bool ref_end(const struct ref_in *in)
{
	return left(in) == 0;
}

static int ref_peek(const struct ref_in *in)
{
	ber_len_t len;
	return ref_end(in) ? -1 : (int)ber_peek_tag(in->ber, &len);
}

static int ref_int(struct ref_in *in, ber_tag_t want, int32_t *out)
{
	struct berval c;
	ber_int_t v;
	if (ref_take(in, want, &c) < 0 || c.bv_len < 1 || ber_decode_int(&c, &v) != 0)
		return -1;
	*out = v;
	return 0;
}

static int ref_bool(struct ref_in *in, ber_tag_t want, bool *out)
{
	struct berval c;
	if (ref_take(in, want, &c) < 0 || c.bv_len != 1)
		return -1;
	*out = c.bv_val[0] != 0;
	return 0;
}

/* A filter as sent: nodes in a pool, linked by index. */
#define POOL 4096
struct rnode {
	int tag;
	struct berval attr, value, rule;
	bool has_rule, has_type, dn_attrs;
	int first_piece, npieces;
	int child, next;
};
static struct rnode nodes[POOL];
static int nnodes;
static struct berval pieces[POOL];
static int piece_tags[POOL];
static int npieces;

static int ref_filter(struct ref_in *in, int depth);

static int ref_children(const struct berval *c, int depth, int *first, bool one)
{
	struct ref_in sub = ref_open(c);
	int rc = 0, *link = first, n = 0;
	while (rc == 0 && !ref_end(&sub)) {
		int k = ref_filter(&sub, depth + 1);
		if (k < 0)
			rc = -1;
		else {
			*link = k;
			link = &nodes[k].next;
			n++;
		}
	}
	ref_close(&sub);
	return rc == 0 && (!one || n == 1) ? 0 : -1;
}

static int ref_leaf(int tag, const struct berval *c, struct rnode *r)
{
	struct ref_in sub = ref_open(c);
	int rc = -1;
	if (tag == LDAP_FILTER_SUBSTRINGS) {
		struct berval seq;
		if (ref_take(&sub, LBER_OCTETSTRING, &r->attr) == 0 &&
		    ref_take(&sub, LBER_SEQUENCE, &seq) == 0 && ref_end(&sub) && seq.bv_len > 0) {
			struct ref_in p = ref_open(&seq);
			rc = 0;
			r->first_piece = npieces;
			bool final = false;
			for (int i = 0; rc == 0 && !ref_end(&p); i++) {
				int t = ref_peek(&p);
				bool ok = (t == LDAP_SUBSTRING_INITIAL && i == 0) ||
				          ((t == LDAP_SUBSTRING_ANY || t == LDAP_SUBSTRING_FINAL) &&
				           !final);
				/* RFC 4515 cannot write an empty piece (slapd refuses one), and an
				 * item holds at most FILTER_MAX_PIECES. */
				if (!ok || npieces == POOL ||
				    ref_take(&p, (ber_tag_t)t, &pieces[npieces]) < 0 ||
				    pieces[npieces].bv_len == 0 ||
				    r->npieces == FILTER_MAX_PIECES) {
					rc = -1;
					break;
				}
				final = t == LDAP_SUBSTRING_FINAL;
				piece_tags[npieces++] = t;
				r->npieces++;
			}
			ref_close(&p);
		}
	} else if (tag == LDAP_FILTER_EXT) {
		if (ref_peek(&sub) == LDAP_FILTER_EXT_OID)
			r->has_rule = ref_take(&sub, LDAP_FILTER_EXT_OID, &r->rule) == 0;
		if (ref_peek(&sub) == LDAP_FILTER_EXT_TYPE)
			r->has_type = ref_take(&sub, LDAP_FILTER_EXT_TYPE, &r->attr) == 0 &&
			              r->attr.bv_len > 0;
		if (ref_take(&sub, LDAP_FILTER_EXT_VALUE, &r->value) == 0 &&
		    (ref_peek(&sub) != LDAP_FILTER_EXT_DNATTRS ||
		     ref_bool(&sub, LDAP_FILTER_EXT_DNATTRS, &r->dn_attrs) == 0) &&
		    ref_end(&sub) && (r->has_rule || r->has_type))
			rc = 0;
		/* A type element that is there but empty or broken: malformed. */
		if (r->attr.bv_val && !r->has_type)
			rc = -1;
	} else if (ref_take(&sub, LBER_OCTETSTRING, &r->attr) == 0 &&
	           ref_take(&sub, LBER_OCTETSTRING, &r->value) == 0 && ref_end(&sub)) {
		rc = 0;
	}
	ref_close(&sub);
	return rc;
}

/* One Filter element; returns its node, or -1. */
static int ref_filter(struct ref_in *in, int depth)
{
	int tag = ref_peek(in);
	struct berval c;
	if (depth > FILTER_MAX_DEPTH || tag < 0 || nnodes == POOL ||
	    ref_take(in, (ber_tag_t)tag, &c) < 0)
		return -1;
	int k = nnodes++;
	struct rnode *r = &nodes[k];
	memset(r, 0, sizeof(*r));
	r->tag = tag;
	r->child = r->next = -1;
	switch (tag) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR:
	case LDAP_FILTER_NOT:
		return ref_children(&c, depth, &r->child, tag == LDAP_FILTER_NOT) == 0 ? k : -1;
	case LDAP_FILTER_PRESENT:
		r->attr = c;
		return c.bv_len > 0 ? k : -1;
	case LDAP_FILTER_EQUALITY:
	case LDAP_FILTER_GE:
	case LDAP_FILTER_LE:
	case LDAP_FILTER_APPROX:
	case LDAP_FILTER_SUBSTRINGS:
	case LDAP_FILTER_EXT:
		return ref_leaf(tag, &c, r) == 0 && (tag == LDAP_FILTER_EXT || r->attr.bv_len > 0)
		           ? k
		           : -1;
	default:
		return -1;
	}
}

/* What the reference makes of a PDU. */
struct ref_req {
	int rc;
	int32_t msgid;
	ber_tag_t op;
	struct ldap_request r; /* the fields, as request.h has them (no filter) */
	int filter;            /* node of a search's filter */
};

static int ref_controls(const struct berval *c, struct ref_req *out)
{
	struct ref_in in = ref_open(c);
	int rc = 0;
	while (rc == 0 && !ref_end(&in)) {
		struct berval seq;
		if (out->r.ncontrols == REQUEST_MAX_CONTROLS ||
		    ref_take(&in, LBER_SEQUENCE, &seq) < 0) {
			rc = -1;
			break;
		}
		struct request_control *ctl = &out->r.controls[out->r.ncontrols++];
		memset(ctl, 0, sizeof(*ctl));
		struct ref_in s = ref_open(&seq);
		rc = ref_take(&s, LBER_OCTETSTRING, &ctl->oid);
		if (rc == 0 && ref_peek(&s) == LBER_BOOLEAN)
			rc = ref_bool(&s, LBER_BOOLEAN, &ctl->critical);
		if (rc == 0 && !ref_end(&s)) {
			rc = ref_take(&s, LBER_OCTETSTRING, &ctl->value);
			ctl->has_value = true;
		}
		if (rc == 0 && !ref_end(&s))
			rc = -1;
		out->r.critical_control |= ctl->critical;
		ref_close(&s);
	}
	ref_close(&in);
	return rc;
}

static int ref_search(struct ref_in *in, struct ref_req *out)
{
	struct search_request *s = &out->r.u.search;
	int32_t v[4];
	struct berval attrs;
	if (ref_take(in, LBER_OCTETSTRING, &s->base) < 0 ||
	    ref_int(in, LBER_ENUMERATED, &v[0]) < 0 || ref_int(in, LBER_ENUMERATED, &v[1]) < 0 ||
	    ref_int(in, LBER_INTEGER, &v[2]) < 0 || ref_int(in, LBER_INTEGER, &v[3]) < 0 ||
	    ref_bool(in, LBER_BOOLEAN, &s->typesonly) < 0 || v[0] < 0 || v[0] > 3 || v[1] < 0 ||
	    v[1] > 3 || v[2] < 0 || v[3] < 0)
		return -1;
	s->scope = v[0];
	s->deref = v[1];
	s->sizelimit = v[2];
	s->timelimit = v[3];
	if ((out->filter = ref_filter(in, 1)) < 0 || ref_take(in, LBER_SEQUENCE, &attrs) < 0 ||
	    !ref_end(in))
		return -1;
	struct ref_in a = ref_open(&attrs);
	int rc = 0;
	while (rc == 0 && !ref_end(&a))
		rc = s->nattrs == REQUEST_MAX_ATTRS
		         ? -1
		         : ref_take(&a, LBER_OCTETSTRING, &s->attrs[s->nattrs++]);
	ref_close(&a);
	return rc;
}

static int ref_op(struct ref_in *in, const struct berval *op, struct ref_req *out)
{
	struct ldap_request *r = &out->r;
	struct berval sub;
	switch (out->op) {
	case LDAP_REQ_BIND: {
		int32_t version;
		if (ref_int(in, LBER_INTEGER, &version) < 0 ||
		    ref_take(in, LBER_OCTETSTRING, &r->u.bind.dn) < 0)
			return -1;
		r->u.bind.version = version;
		if (ref_peek(in) == LDAP_AUTH_SIMPLE) {
			r->u.bind.simple = true;
			return ref_take(in, LDAP_AUTH_SIMPLE, &r->u.bind.cred) == 0 && ref_end(in)
			           ? 0
			           : -1;
		}
		if (ref_take(in, LDAP_AUTH_SASL, &sub) < 0 || !ref_end(in))
			return -1;
		struct ref_in s = ref_open(&sub);
		struct berval creds;
		int rc = ref_take(&s, LBER_OCTETSTRING, &r->u.bind.mech) == 0 &&
		                 (ref_end(&s) || ref_take(&s, LBER_OCTETSTRING, &creds) == 0) &&
		                 ref_end(&s)
		             ? 0
		             : -1;
		ref_close(&s);
		return rc;
	}
	case LDAP_REQ_SEARCH:
		return ref_search(in, out);
	case LDAP_REQ_COMPARE: {
		if (ref_take(in, LBER_OCTETSTRING, &r->u.compare.dn) < 0 ||
		    ref_take(in, LBER_SEQUENCE, &sub) < 0 || !ref_end(in))
			return -1;
		struct ref_in s = ref_open(&sub);
		int rc = ref_take(&s, LBER_OCTETSTRING, &r->u.compare.attr) == 0 &&
		                 ref_take(&s, LBER_OCTETSTRING, &r->u.compare.value) == 0 &&
		                 ref_end(&s)
		             ? 0
		             : -1;
		ref_close(&s);
		return rc;
	}
	case LDAP_REQ_EXTENDED:
		if (ref_take(in, LDAP_TAG_EXOP_REQ_OID, &r->u.extended.oid) < 0)
			return -1;
		if (!ref_end(in)) {
			r->u.extended.has_value = true;
			if (ref_take(in, LDAP_TAG_EXOP_REQ_VALUE, &r->u.extended.value) < 0)
				return -1;
		}
		return ref_end(in) ? 0 : -1;
	case LDAP_REQ_ABANDON: {
		/* The content of a primitive INTEGER: wrap it as one for ber_decode_int. */
		ber_int_t v;
		if (op->bv_len < 1 || ber_decode_int(op, &v) != 0 || v < 0)
			return -1;
		r->u.abandon_msgid = v;
		return 0;
	}
	case LDAP_REQ_UNBIND:
		return op->bv_len == 0 ? 0 : -1;
	default:
		return 0;
	}
}

static void ref_decode(const unsigned char *pdu, size_t len, struct ref_req *out)
{
	memset(out, 0, sizeof(*out));
	out->msgid = -1;
	out->rc = -1;
	nnodes = npieces = 0;
	struct berval all = {len, (char *)pdu}, msg, op;
	struct ref_in top = ref_open(&all);
	if (ref_take(&top, LBER_SEQUENCE, &msg) == 0 && ref_end(&top)) {
		struct ref_in m = ref_open(&msg);
		int32_t id;
		if (ref_int(&m, LBER_INTEGER, &id) == 0 && id >= 0) {
			out->msgid = id;
			int tag = ref_peek(&m);
			if (tag >= 0 && tag <= 0xff && (tag & 0x1f) != 0x1f &&
			    ref_take(&m, (ber_tag_t)tag, &op) == 0) {
				out->op = (ber_tag_t)tag;
				struct berval ctl;
				bool ok =
				    ref_end(&m) || (ref_take(&m, LDAP_TAG_CONTROLS, &ctl) == 0 &&
				                    ref_end(&m) && ref_controls(&ctl, out) == 0);
				if (ok) {
					struct ref_in o = ref_open(&op);
					out->rc = ref_op(&o, &op, out);
					ref_close(&o);
				}
			}
		}
		ref_close(&m);
	}
	ref_close(&top);
}

/* ---- comparing ---- */

static char failure[512];

static bool same_bv(const struct berval *a, const struct berval *b)
{
	return a->bv_len == b->bv_len &&
	       (a->bv_len == 0 || memcmp(a->bv_val, b->bv_val, a->bv_len) == 0);
}

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			snprintf(failure, sizeof(failure), __VA_ARGS__);                           \
			return false;                                                              \
		}                                                                                  \
	} while (0)

static struct buf norm;

/* f's attribute is raw lowercased (no schema is loaded). */
static bool same_attr(const struct filter *f, const struct berval *raw)
{
	EXPECT(f->attr && f->attr_len == raw->bv_len &&
	           strncasecmp(f->attr, raw->bv_val, raw->bv_len) == 0,
	       "attribute \"%.*s\" decoded as \"%s\"", (int)raw->bv_len, raw->bv_val,
	       f->attr ? f->attr : "(none)");
	for (size_t i = 0; i < f->attr_len; i++)
		EXPECT(!(f->attr[i] >= 'A' && f->attr[i] <= 'Z'), "attribute not lowercased");
	return true;
}

/* v is raw in the normal form of f's rule, or f is invalid when the rule refuses raw. */
static bool same_value(const struct filter *f, const struct filter_value *v,
                       const struct berval *raw)
{
	norm.off = norm.len = 0;
	if (match_normalize(f->rule, raw->bv_val, raw->bv_len, &norm) < 0) {
		EXPECT(f->invalid && v->len == 0, "a value the rule refuses is not Undefined");
		return true;
	}
	EXPECT(v->val && v->len == norm.len &&
	           (!norm.len || memcmp(v->val, norm.data, norm.len) == 0),
	       "value \"%.*s\" decoded as \"%.*s\"", (int)raw->bv_len, raw->bv_val, (int)v->len,
	       v->val ? v->val : "");
	return true;
}

static bool same_filter(int k, const struct filter *f)
{
	static const int kinds[256] = {[LDAP_FILTER_AND] = FILTER_AND + 1,
	                               [LDAP_FILTER_OR] = FILTER_OR + 1,
	                               [LDAP_FILTER_NOT] = FILTER_NOT + 1,
	                               [LDAP_FILTER_EQUALITY] = FILTER_EQ + 1,
	                               [LDAP_FILTER_SUBSTRINGS] = FILTER_SUBSTR + 1,
	                               [LDAP_FILTER_GE] = FILTER_GE + 1,
	                               [LDAP_FILTER_LE] = FILTER_LE + 1,
	                               [LDAP_FILTER_PRESENT] = FILTER_PRESENT + 1,
	                               [LDAP_FILTER_APPROX] = FILTER_APPROX + 1,
	                               [LDAP_FILTER_EXT] = FILTER_EXT + 1};
	const struct rnode *r = &nodes[k];
	EXPECT(f, "filter missing");
	EXPECT(kinds[r->tag] == (int)f->kind + 1, "filter kind %d for tag 0x%02x", f->kind, r->tag);
	switch (f->kind) {
	case FILTER_AND:
	case FILTER_OR:
	case FILTER_NOT: {
		const struct filter *c = f->child;
		for (int i = r->child; i >= 0; i = nodes[i].next, c = c->next)
			if (!same_filter(i, c))
				return false;
		EXPECT(!c, "more operands than sent");
		return true;
	}
	case FILTER_PRESENT:
		return same_attr(f, &r->attr);
	case FILTER_SUBSTR: {
		if (!same_attr(f, &r->attr))
			return false;
		size_t any = 0;
		for (int i = 0; i < r->npieces; i++) {
			int t = piece_tags[r->first_piece + i];
			const struct berval *p = &pieces[r->first_piece + i];
			const struct filter_value *v = t == LDAP_SUBSTRING_INITIAL ? &f->initial
			                               : t == LDAP_SUBSTRING_FINAL ? &f->final
			                                                           : &f->any[any++];
			if (!same_value(f, v, p))
				return false;
		}
		EXPECT(any == f->nany, "%zu any pieces, %zu sent", f->nany, any);
		EXPECT(!!f->initial.val ==
		           (r->npieces && piece_tags[r->first_piece] == LDAP_SUBSTRING_INITIAL),
		       "initial piece");
		return true;
	}
	case FILTER_EXT:
		EXPECT(!!f->attr == r->has_type, "extensible type");
		if (r->has_type && !same_attr(f, &r->attr))
			return false;
		EXPECT(f->dn_attrs == r->dn_attrs, "dnAttributes");
		if (r->has_rule) {
			char name[128];
			snprintf(name, sizeof(name), "%.*s", (int)r->rule.bv_len, r->rule.bv_val);
			EXPECT(f->ext_ordering == (strstr(name, "Ordering") != NULL),
			       "ordering rule");
		}
		return same_value(f, &f->value, &r->value);
	default:
		return same_attr(f, &r->attr) && same_value(f, &f->value, &r->value);
	}
}

static bool same_request(const struct ref_req *ref, int rc, const struct ldap_request *req)
{
	EXPECT(ref->rc == rc, "reference %s, request_decode %s", ref->rc ? "rejects" : "accepts",
	       rc ? "rejects" : "accepts");
	EXPECT(ref->msgid == req->msgid, "message ID %d, reference %d", (int)req->msgid,
	       (int)ref->msgid);
	if (rc != 0)
		return true;
	const struct ldap_request *r = &ref->r;
	EXPECT(req->op == ref->op, "op 0x%lx, reference 0x%lx", req->op, ref->op);
	EXPECT(req->ncontrols == r->ncontrols && req->critical_control == r->critical_control,
	       "controls");
	for (int i = 0; i < r->ncontrols; i++) {
		const struct request_control *a = &req->controls[i], *b = &r->controls[i];
		EXPECT(same_bv(&a->oid, &b->oid) && a->critical == b->critical &&
		           a->has_value == b->has_value &&
		           (!a->has_value || same_bv(&a->value, &b->value)),
		       "control %d", i);
	}
	switch (req->op) {
	case LDAP_REQ_BIND: {
		const struct bind_request *a = &req->u.bind, *b = &r->u.bind;
		EXPECT(a->version == b->version && same_bv(&a->dn, &b->dn) &&
		           a->simple == b->simple &&
		           (a->simple ? same_bv(&a->cred, &b->cred) : same_bv(&a->mech, &b->mech)),
		       "bind fields");
		return true;
	}
	case LDAP_REQ_SEARCH: {
		const struct search_request *a = &req->u.search, *b = &r->u.search;
		EXPECT(same_bv(&a->base, &b->base) && a->scope == b->scope &&
		           a->deref == b->deref && a->sizelimit == b->sizelimit &&
		           a->timelimit == b->timelimit && a->typesonly == b->typesonly &&
		           a->nattrs == b->nattrs,
		       "search fields");
		for (int i = 0; i < a->nattrs; i++)
			EXPECT(same_bv(&a->attrs[i], &b->attrs[i]), "attribute %d", i);
		return same_filter(ref->filter, a->filter);
	}
	case LDAP_REQ_COMPARE:
		EXPECT(same_bv(&req->u.compare.dn, &r->u.compare.dn) &&
		           same_bv(&req->u.compare.attr, &r->u.compare.attr) &&
		           same_bv(&req->u.compare.value, &r->u.compare.value),
		       "compare fields");
		return true;
	case LDAP_REQ_EXTENDED:
		EXPECT(same_bv(&req->u.extended.oid, &r->u.extended.oid) &&
		           req->u.extended.has_value == r->u.extended.has_value &&
		           (!r->u.extended.has_value ||
		            same_bv(&req->u.extended.value, &r->u.extended.value)),
		       "extended fields");
		return true;
	case LDAP_REQ_ABANDON:
		EXPECT(req->u.abandon_msgid == r->u.abandon_msgid, "abandoned ID");
		return true;
	default:
		return true;
	}
}

/* ---- generating ---- */

static uint32_t seed;

static uint32_t rnd(uint32_t n)
{
	seed = seed * 1103515245u + 12345u;
	return ((seed >> 8) & 0xffffff) % n;
}

/* Words with spaces, cases and bytes that normalization treats specially. */
static const char *word(void)
{
	static const char *const w[] = {
	    "",     "a",       "Alice",    "  x  y ",     "user.7",
	    "12",   "-0042",   "DC=Com",   "cn=a,dc=b",   "\xc3\xa9t\xc3\xa9",
	    "*",    "(paren)", "a\\b",     "+1 555 0100", "20260101000000Z",
	    "TRUE", "  ",      "\x01\x7f", "x y  z",      "Ab Cd"};
	return w[rnd(sizeof(w) / sizeof(w[0]))];
}

static const char *attr_name(void)
{
	static const char *const a[] = {
	    "uid",  "CN",         "objectClass", "member",      "uidNumber",   "telephoneNumber",
	    "mail", "sn;lang-en", "2.5.4.3",     "description", "unknownAttr", "createTimestamp"};
	return a[rnd(sizeof(a) / sizeof(a[0]))];
}

static void put_filter(BerElement *w, int depth)
{
	int k = depth > 4 ? 3 + (int)rnd(7) : (int)rnd(10);
	switch (k) {
	case 0:
	case 1:
	case 2: {
		ber_tag_t t = k == 0 ? LDAP_FILTER_AND : k == 1 ? LDAP_FILTER_OR : LDAP_FILTER_NOT;
		ck_assert_int_ge(ber_printf(w, "t{", t), 0);
		int n = k == 2 ? 1 : (int)rnd(4);
		for (int i = 0; i < n; i++)
			put_filter(w, depth + 1);
		ck_assert_int_ge(ber_printf(w, "}"), 0);
		break;
	}
	case 3:
	case 4:
	case 5:
	case 6: {
		static const ber_tag_t t[] = {LDAP_FILTER_EQUALITY, LDAP_FILTER_GE, LDAP_FILTER_LE,
		                              LDAP_FILTER_APPROX};
		ck_assert_int_ge(ber_printf(w, "t{ss}", t[k - 3], attr_name(), word()), 0);
		break;
	}
	case 7:
		ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_FILTER_PRESENT, attr_name()),
		                 0);
		break;
	case 8: {
		ck_assert_int_ge(
		    ber_printf(w, "t{s{", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, attr_name()), 0);
		int n = 1 + (int)rnd(4);
		for (int i = 0; i < n; i++) {
			ber_tag_t t = i == 0 && rnd(2)       ? LDAP_SUBSTRING_INITIAL
			              : i == n - 1 && rnd(2) ? LDAP_SUBSTRING_FINAL
			                                     : LDAP_SUBSTRING_ANY;
			const char *v = word(); /* a piece is never empty (RFC 4515) */
			ck_assert_int_ge(ber_printf(w, "ts", t, *v ? v : "a"), 0);
		}
		ck_assert_int_ge(ber_printf(w, "}}"), 0);
		break;
	}
	default: {
		static const char *const rules[] = {"caseExactMatch",
		                                    "caseIgnoreOrderingMatch",
		                                    "caseIgnoreSubstringsMatch",
		                                    "2.5.13.2",
		                                    "noSuchRule",
		                                    "integerMatch"};
		ck_assert_int_ge(ber_printf(w, "t{", (ber_tag_t)LDAP_FILTER_EXT), 0);
		int parts = 1 + (int)rnd(3); /* 1: rule, 2: type, 3: both */
		if (parts & 1)
			ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_FILTER_EXT_OID,
			                            rules[rnd(sizeof(rules) / sizeof(rules[0]))]),
			                 0);
		if (parts & 2)
			ck_assert_int_ge(
			    ber_printf(w, "ts", (ber_tag_t)LDAP_FILTER_EXT_TYPE, attr_name()), 0);
		ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_FILTER_EXT_VALUE, word()), 0);
		if (rnd(2))
			ck_assert_int_ge(ber_printf(w, "tb", (ber_tag_t)LDAP_FILTER_EXT_DNATTRS,
			                            (ber_int_t)rnd(2)),
			                 0);
		ck_assert_int_ge(ber_printf(w, "}"), 0);
	}
	}
}

static void put_controls(BerElement *w)
{
	static const char *const oids[] = {"1.2.840.113556.1.4.319", "1.3.6.1.1.12",
	                                   "2.16.840.1.113730.3.4.2", "1.2.3"};
	int n = (int)rnd(4);
	if (n == 0)
		return;
	ck_assert_int_ge(ber_printf(w, "t{", (ber_tag_t)LDAP_TAG_CONTROLS), 0);
	for (int i = 0; i < n; i++) {
		ck_assert_int_ge(ber_printf(w, "{s", oids[rnd(4)]), 0);
		if (rnd(2))
			ck_assert_int_ge(ber_printf(w, "b", (ber_int_t)rnd(2)), 0);
		if (rnd(2))
			ck_assert_int_ge(ber_printf(w, "s", word()), 0);
		ck_assert_int_ge(ber_printf(w, "}"), 0);
	}
	ck_assert_int_ge(ber_printf(w, "}"), 0);
}

/* Set by gen_pdu when the PDU it made must be refused (an INTEGER of five bytes, a negative
 * limit). */
static bool gen_refused;
/* Set by gen_pdu when an INTEGER it wrote that both must accept is padded. */
static bool gen_padded;

/*
 * Writes v with tag: in minimal two's complement, or (one time in three) after 1 to 4
 * leading octets of its sign (00 or ff), which keep its value. Past four content bytes the
 * PDU must be refused (gen_refused).
 */
static void put_int(BerElement *w, ber_tag_t tag, ber_int_t v)
{
	unsigned char b[8];
	size_t n = 4;
	for (int i = 0; i < 4; i++)
		b[4 + i] = (unsigned char)((uint32_t)v >> (24 - 8 * i));
	while (n > 1 && ((b[8 - n] == 0x00 && !(b[9 - n] & 0x80)) ||
	                 (b[8 - n] == 0xff && (b[9 - n] & 0x80))))
		n--;
	if (rnd(3) == 0) {
		size_t pad = 1 + rnd(4);
		if (n + pad > 8)
			pad = 8 - n;
		memset(b + 8 - n - pad, v < 0 ? 0xff : 0x00, pad);
		n += pad;
	}
	gen_refused |= n > 4;
	gen_padded |= n > 1 && n <= 4 && (b[8 - n] == 0x00 || b[8 - n] == 0xff) &&
	              ((b[8 - n] == 0x00) == !(b[9 - n] & 0x80));
	ck_assert_int_ge(ber_printf(w, "to", tag, (const char *)b + 8 - n, (ber_len_t)n), 0);
}

/* An INTEGER that is often at a boundary of its length (127, 128, 32767, 32768, ...). */
static ber_int_t edge_int(uint32_t small)
{
	static const ber_int_t edges[] = {0,       1,        127,      128,        255,
	                                  256,     32767,    32768,    65535,      8388607,
	                                  8388608, 16777215, 16777216, 0x7fffff00, 0x7fffffff};
	switch (rnd(4)) {
	case 0:
		return edges[rnd(sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return (ber_int_t)(rnd(1 << 24) * 100);
	default:
		return (ber_int_t)rnd(small);
	}
}

/* A random LDAPMessage, valid but for what gen_refused says; free with ber_bvfree. */
static struct berval *gen_pdu(void)
{
	BerElement *w = ber_alloc_t(LBER_USE_DER);
	ck_assert_ptr_nonnull(w);
	gen_refused = gen_padded = false;
	ck_assert_int_ge(ber_printf(w, "{"), 0);
	put_int(w, LBER_INTEGER, edge_int(300));
	switch (rnd(10)) {
	case 0:
		ck_assert_int_ge(ber_printf(w, "t{", (ber_tag_t)LDAP_REQ_BIND), 0);
		put_int(w, LBER_INTEGER, (ber_int_t)(1 + rnd(3)));
		ck_assert_int_ge(ber_printf(w, "sts}", word(), (ber_tag_t)LDAP_AUTH_SIMPLE, word()),
		                 0);
		break;
	case 1:
		ck_assert_int_ge(ber_printf(w, "t{ist{s", (ber_tag_t)LDAP_REQ_BIND, (ber_int_t)3,
		                            word(), (ber_tag_t)LDAP_AUTH_SASL, "EXTERNAL"),
		                 0);
		if (rnd(2))
			ck_assert_int_ge(ber_printf(w, "s", word()), 0);
		ck_assert_int_ge(ber_printf(w, "}}"), 0);
		break;
	case 2:
		ck_assert_int_ge(ber_printf(w, "t{s{ss}}", (ber_tag_t)LDAP_REQ_COMPARE, word(),
		                            attr_name(), word()),
		                 0);
		break;
	case 3:
		ck_assert_int_ge(ber_printf(w, "t{ts", (ber_tag_t)LDAP_REQ_EXTENDED,
		                            (ber_tag_t)LDAP_TAG_EXOP_REQ_OID,
		                            "1.3.6.1.4.1.4203.1.11.3"),
		                 0);
		if (rnd(2))
			ck_assert_int_ge(
			    ber_printf(w, "ts", (ber_tag_t)LDAP_TAG_EXOP_REQ_VALUE, word()), 0);
		ck_assert_int_ge(ber_printf(w, "}"), 0);
		break;
	case 4:
		put_int(w, LDAP_REQ_ABANDON, edge_int(70000));
		break;
	case 5:
		ck_assert_int_ge(ber_printf(w, "tn", (ber_tag_t)LDAP_REQ_UNBIND), 0);
		break;
	case 6:
		ck_assert_int_ge(ber_printf(w, "t{s}", (ber_tag_t)LDAP_REQ_DELETE, word()), 0);
		break;
	default:
		ck_assert_int_ge(ber_printf(w, "t{s", (ber_tag_t)LDAP_REQ_SEARCH, word()), 0);
		put_int(w, LBER_ENUMERATED, (ber_int_t)rnd(4));
		put_int(w, LBER_ENUMERATED, (ber_int_t)rnd(4));
		/* A negative limit now and then (refused by both). */
		ber_int_t size = rnd(20) == 0 ? -1 - (ber_int_t)rnd(40000) : edge_int(1000);
		gen_refused |= size < 0;
		put_int(w, LBER_INTEGER, size);
		put_int(w, LBER_INTEGER, (ber_int_t)rnd(100));
		ck_assert_int_ge(ber_printf(w, "b", (ber_int_t)rnd(2)), 0);
		put_filter(w, 1);
		ck_assert_int_ge(ber_printf(w, "{"), 0);
		for (int i = (int)rnd(5); i > 0; i--)
			ck_assert_int_ge(ber_printf(w, "s", rnd(2) ? attr_name() : word()), 0);
		ck_assert_int_ge(ber_printf(w, "}}"), 0);
	}
	put_controls(w);
	ck_assert_int_ge(ber_printf(w, "}"), 0);
	struct berval *flat = NULL;
	ck_assert_int_eq(ber_flatten(w, &flat), 0);
	ber_free(w, 1);
	return flat;
}

/* Mutates m[0..*n) in place (room for one more byte): one of the hostile edits. */
static void mutate(unsigned char *m, size_t *n)
{
	static const unsigned char special[] = {0x00, 0x01, 0x02, 0x04, 0x0a, 0x1f, 0x30, 0x7f,
	                                        0x80, 0x81, 0x82, 0x84, 0x85, 0x88, 0xa0, 0xff};
	size_t at = rnd((uint32_t)*n);
	switch (rnd(6)) {
	case 0: /* cut short */
		*n = at;
		break;
	case 1:
		m[at] ^= (unsigned char)(1u << rnd(8));
		break;
	case 2:
		m[at] = special[rnd(sizeof(special))];
		break;
	case 3: /* a length one more or less */
		m[at] = (unsigned char)(m[at] + (rnd(2) ? 1 : -1));
		break;
	case 4: /* a byte more */
		memmove(m + at + 1, m + at, *n - at);
		m[at] = special[rnd(sizeof(special))];
		(*n)++;
		break;
	default: /* a byte less */
		memmove(m + at, m + at + 1, *n - at - 1);
		(*n)--;
	}
}

static struct arena mem;
static struct buf scratch;

/* Decodes m[0..n) both ways; fails the test with the bytes when they disagree. */
static void compare(const unsigned char *m, size_t n, int *accepted)
{
	/* Exact-size for request_decode; liblber may read one byte past (its cached tag). */
	unsigned char *exact = malloc(n ? n : 1), *padded = malloc(n + 1);
	ck_assert(exact && padded);
	memcpy(exact, m, n);
	memcpy(padded, m, n);
	padded[n] = 0;
	struct ref_req ref;
	ref_decode(padded, n, &ref);
	struct ldap_request req;
	const char *why = NULL;
	arena_reset(&mem);
	int rc = request_decode(exact, n, &req, &mem, &scratch, &why);
	/* The reference points into padded, the decoder into exact: fields compare by content. */
	if (!same_request(&ref, rc, &req)) {
		char hex[3 * 160 + 1] = "";
		for (size_t i = 0; i < n && i < 160; i++)
			snprintf(hex + 3 * i, 4, "%02x ", m[i]);
		ck_abort_msg("%s (%s)\n  PDU of %zu bytes: %s", failure, rc ? why : "accepted", n,
		             hex);
	}
	*accepted += rc == 0;
	free(exact);
	free(padded);
}

START_TEST(generated_and_mutated)
{
	seed = 20261130u + (uint32_t)_i;
	int accepted = 0, decoded = 0, refused = 0, padded = 0;
	for (int k = 0; k < 1000; k++) {
		struct berval *pdu = gen_pdu();
		int before = accepted;
		compare((const unsigned char *)pdu->bv_val, pdu->bv_len, &accepted);
		ck_assert_msg(accepted == before + !gen_refused, "a generated PDU was %s",
		              gen_refused ? "accepted" : "refused");
		refused += gen_refused;
		padded += gen_padded;
		unsigned char *m = malloc(pdu->bv_len + 16);
		ck_assert_ptr_nonnull(m);
		for (int j = 0; j < 12; j++) {
			size_t n = pdu->bv_len;
			memcpy(m, pdu->bv_val, n);
			for (int e = 1 + (int)rnd(3); e > 0 && n > 0; e--)
				mutate(m, &n);
			compare(m, n, &accepted);
			decoded++;
		}
		free(m);
		ber_bvfree(pdu);
	}
	/* The mutations are not all rejected, nor all accepted: both sides get exercised; and
	 * so are padded INTEGERs, accepted and refused. */
	ck_assert_int_gt(accepted, 1000 - refused + decoded / 50);
	ck_assert_int_lt(accepted, 1000 - refused + decoded * 9 / 10);
	ck_assert_int_gt(padded, 200);
	ck_assert_int_gt(refused, 20);
}
END_TEST

static void setup(void)
{
	memset(&mem, 0, sizeof(mem));
	memset(&scratch, 0, sizeof(scratch));
	memset(&norm, 0, sizeof(norm));
}

static void teardown(void)
{
	arena_free(&mem);
	buf_free(&scratch);
	buf_free(&norm);
}

static Suite *request_diff_suite(void)
{
	Suite *s = suite_create("request_diff");
	TCase *tc = tcase_create("liblber reference");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, generated_and_mutated, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(request_diff_suite());
}
