#include "protocol/response.h"

#include "protocol/match.h"
#include "protocol/schema.h"
#include "protocol/tlv.h"

#include <ldap.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* Writes tag and length of a constructed element whose content is clen bytes. */
static inline unsigned char *put_header(unsigned char *p, unsigned char tag, size_t clen)
{
	*p++ = tag;
	return tlv_write_len(p, clen);
}

/* tlv_size, its length's size worked out inline. */
static inline size_t elem_size(size_t clen)
{
	return 1 + tlv_len_size_inline(clen) + clen;
}

static size_t str_len(const char *s)
{
	return s ? strlen(s) : 0;
}

int response_result(struct buf *out, int32_t msgid, unsigned char optag, int rc,
                    const char *matched, const char *message, const char *oid)
{
	struct result_extra x = {.oid = oid};
	return response_result_ex(out, msgid, optag, rc, matched, message, &x);
}

/*
 * response_result_ex's usual result: rc of one octet, no matchedDN, no diagnostic message,
 * nothing of x (a lookup's SearchResultDone). The same bytes as the general path, whose
 * sizes and writes element by element cost ~140 instructions more a lookup.
 */
static int plain_result(struct buf *out, int32_t msgid, unsigned char optag, int rc)
{
	/* resultCode, then the empty matchedDN and diagnosticMessage */
	const unsigned char op[] = {LBER_ENUMERATED,  1, (unsigned char)rc, LBER_OCTETSTRING, 0,
	                            LBER_OCTETSTRING, 0};
	size_t msg = tlv_int_size(msgid) + 2 + sizeof(op); /* at most 15: one octet of length */
	if (buf_reserve(out, 2 + msg) < 0)
		return -1;
	unsigned char *p = out->data + out->len;
	*p++ = LBER_SEQUENCE;
	*p++ = (unsigned char)msg;
	p = tlv_write_int(p, LBER_INTEGER, msgid);
	*p++ = optag;
	*p++ = sizeof(op);
	memcpy(p, op, sizeof(op));
	out->len = (size_t)(p + sizeof(op) - out->data);
	return 0;
}

int response_result_ex(struct buf *out, int32_t msgid, unsigned char optag, int rc,
                       const char *matched, const char *message, const struct result_extra *x)
{
	if (!matched && !message && !x->referral && !x->oid && !x->has_value && !x->clen &&
	    rc >= 0 && rc < 0x80)
		return plain_result(out, msgid, optag, rc);
	size_t mlen = str_len(matched), dlen = str_len(message), olen = str_len(x->oid);
	size_t rlen = str_len(x->referral);
	size_t op = tlv_int_size(rc) + elem_size(mlen) + elem_size(dlen) +
	            (x->referral ? elem_size(elem_size(rlen)) : 0) +
	            (x->oid ? elem_size(olen) : 0) + (x->has_value ? elem_size(x->vlen) : 0);
	size_t msg = tlv_int_size(msgid) + elem_size(op) + x->clen;
	if (buf_reserve(out, elem_size(msg)) < 0)
		return -1;
	/* Reserved whole: written with pointer bumps, no check per element. */
	unsigned char *p = put_header(out->data + out->len, LBER_SEQUENCE, msg);
	p = tlv_write_int(p, LBER_INTEGER, msgid);
	p = put_header(p, optag, op);
	p = tlv_write_int(p, LBER_ENUMERATED, rc);
	p = tlv_write(p, LBER_OCTETSTRING, matched, mlen);
	p = tlv_write(p, LBER_OCTETSTRING, message, dlen);
	if (x->referral) { /* Referral ::= SEQUENCE SIZE (1..MAX) OF uri URI */
		p = put_header(p, LDAP_TAG_REFERRAL, elem_size(rlen));
		p = tlv_write(p, LBER_OCTETSTRING, x->referral, rlen);
	}
	if (x->oid)
		p = tlv_write(p, LDAP_TAG_EXOP_RES_OID, x->oid, olen);
	if (x->has_value)
		p = tlv_write(p, x->sasl_creds ? LDAP_TAG_SASL_RES_CREDS : LDAP_TAG_EXOP_RES_VALUE,
		              x->value, x->vlen);
	out->len = (size_t)(p - out->data);
	if (x->clen)
		buf_append(out, x->controls, x->clen);
	return 0;
}

void attr_select_init(struct attr_select *sel, const struct berval *names, int n, bool types_only)
{
	memset(sel, 0, sizeof(*sel));
	sel->types_only = types_only;
	sel->names = names;
	sel->n = n;
	sel->all_user = n == 0;
	bool only_noattrs = n > 0;
	for (int i = 0; i < n; i++) {
		if (names[i].bv_len == 1 && names[i].bv_val[0] == '*')
			sel->all_user = true;
		if (names[i].bv_len == 1 && names[i].bv_val[0] == '+')
			sel->all_operational = true;
		if (!(names[i].bv_len == 3 && memcmp(names[i].bv_val, "1.1", 3) == 0))
			only_noattrs = false;
		const struct schema_attr *at = schema_attr_find(names[i].bv_val, names[i].bv_len);
		if (at && at->has_subtypes)
			sel->supertypes = true;
		/* Active Directory's ranged retrieval ("member;range=0-1499"): values computed
		 * from the stored ones, as an operational attribute is. */
		const char *semi = memchr(names[i].bv_val, ';', names[i].bv_len);
		if (semi && names[i].bv_val + names[i].bv_len - semi > 7 &&
		    strncasecmp(semi, ";range=", 7) == 0)
			sel->ranged = true;
	}
	if (only_noattrs)
		sel->n = 0;
}

/* True if a name of sel that has subtypes selects the type t[0..n), one of them. */
static bool named_supertype(const struct attr_select *sel, const char *t, size_t n)
{
	const struct schema_attr *at = schema_attr_find(t, n);
	for (int i = 0; at && i < sel->n; i++) {
		const struct berval *w = &sel->names[i];
		const struct schema_attr *sup = schema_attr_find(w->bv_val, w->bv_len);
		if (sup && sup->has_subtypes && schema_attr_is_a(at, sup) &&
		    match_desc_options(w->bv_val, w->bv_len, t, n))
			return true;
	}
	return false;
}

static bool named(const struct attr_select *sel, const char *t, size_t n)
{
	for (int i = 0; i < sel->n; i++)
		if (match_desc(sel->names[i].bv_val, sel->names[i].bv_len, t, n))
			return true;
	return sel->supertypes && named_supertype(sel, t, n);
}

bool attr_select_wants(const struct attr_select *sel, const char *name)
{
	return sel->all_operational || named(sel, name, strlen(name));
}

bool attr_select_named(const struct attr_select *sel, const char *name)
{
	return named(sel, name, strlen(name));
}

static bool is_selected(const struct attr_select *sel, const unsigned char *t, size_t n)
{
	if (!attr_gate_allows(sel->gate, (const char *)t, n))
		return false;
	if (sel->check_operational) {
		const struct schema_attr *at = schema_attr_find((const char *)t, n);
		if (at && at->operational)
			return sel->all_operational || named(sel, (const char *)t, n);
	}
	return sel->all_user || named(sel, (const char *)t, n);
}

/* Size of one attribute as sent: whole, or type and an empty value set. */
static size_t selected_size(const struct attr_select *sel, size_t whole, size_t tlen)
{
	return sel->types_only ? elem_size(elem_size(tlen) + 2) : whole;
}

int response_put_attr(struct buf *out, const char *type, const struct berval *vals, int nvals,
                      bool types_only)
{
	size_t tlen = strlen(type), set = 0;
	for (int i = 0; !types_only && i < nvals; i++)
		set += elem_size(vals[i].bv_len);
	size_t seq = elem_size(tlen) + elem_size(set);
	if (buf_reserve(out, elem_size(seq)) < 0)
		return -1;
	unsigned char *w = put_header(out->data + out->len, LBER_SEQUENCE, seq);
	out->len = (size_t)(w - out->data);
	tlv_put(out, LBER_OCTETSTRING, type, tlen);
	w = put_header(out->data + out->len, LBER_SET, set);
	out->len = (size_t)(w - out->data);
	for (int i = 0; !types_only && i < nvals; i++)
		tlv_put(out, LBER_OCTETSTRING, vals[i].bv_val, vals[i].bv_len);
	return 0;
}

int response_entry(struct buf *out, int32_t msgid, const unsigned char *stored, size_t len,
                   const struct attr_select *sel)
{
	return response_entry_extra(out, msgid, stored, len, sel, NULL, 0);
}

/*
 * Appends to out each attribute of the list attrs[0..len) that sel selects (all of them
 * when select_all), with only the values sel->values matches; an attribute left without
 * values is dropped. vals and scratch are work buffers. Returns 0 or -1.
 */
static int put_matched_values(struct buf *out, const struct attr_select *sel, bool select_all,
                              const unsigned char *attrs, size_t len, struct buf *vals,
                              struct buf *scratch)
{
	unsigned char tag;
	const unsigned char *seq, *t, *set, *v;
	size_t slen, tlen, setlen, vlen;
	for (const unsigned char *q = attrs; q < attrs + len;) {
		if (!tlv_read(&q, attrs + len, &tag, &seq, &slen))
			return -1;
		const unsigned char *s = seq;
		if (!tlv_read(&s, seq + slen, &tag, &t, &tlen) ||
		    !tlv_read(&s, seq + slen, &tag, &set, &setlen))
			return -1;
		if (!select_all && !is_selected(sel, t, tlen))
			continue;
		vals->off = vals->len = 0;
		for (const unsigned char *p = set; p < set + setlen;) {
			if (!tlv_read(&p, set + setlen, &tag, &v, &vlen))
				return -1;
			if (filter_values_match(sel->values, t, tlen, v, vlen, scratch) &&
			    tlv_put(vals, LBER_OCTETSTRING, v, vlen) < 0)
				return -1;
		}
		if (vals->len == 0)
			continue;
		size_t setsz = sel->types_only ? 0 : vals->len;
		if (buf_reserve(out, elem_size(elem_size(tlen) + elem_size(setsz))) < 0)
			return -1;
		unsigned char *w = put_header(out->data + out->len, LBER_SEQUENCE,
		                              elem_size(tlen) + elem_size(setsz));
		out->len = (size_t)(w - out->data);
		tlv_put(out, LBER_OCTETSTRING, t, tlen);
		tlv_put(out, LBER_SET, vals->data, setsz);
	}
	return 0;
}

/*
 * Reserves room for a whole SearchResultEntry whose attribute list is attrs_len bytes
 * and writes everything before that list (message, objectName, the list's header).
 * Returns 0 or -1 (out of memory).
 */
/* The messageID's INTEGER: its size, and written at w (its end returned). IDs under 0x8000
 * (a connection's first 32767 requests, most of any load) without the calls. */
static inline size_t msgid_size(int32_t msgid)
{
	return msgid >= 0 && msgid < 0x80     ? 3
	       : msgid >= 0 && msgid < 0x8000 ? 4
	                                      : tlv_int_size(msgid);
}

static inline unsigned char *put_msgid(unsigned char *w, int32_t msgid)
{
	if (msgid < 0 || msgid >= 0x8000)
		return tlv_write_int(w, LBER_INTEGER, msgid);
	w[0] = LBER_INTEGER;
	if (msgid < 0x80) {
		w[1] = 1;
		w[2] = (unsigned char)msgid;
		return w + 3;
	}
	w[1] = 2;
	w[2] = (unsigned char)(msgid >> 8);
	w[3] = (unsigned char)msgid;
	return w + 4;
}

static int put_entry_head(struct buf *out, int32_t msgid, const unsigned char *dn, size_t dnlen,
                          size_t attrs_len)
{
	size_t op = elem_size(dnlen) + elem_size(attrs_len);
	size_t msg = msgid_size(msgid) + elem_size(op);
	if (buf_reserve(out, elem_size(msg)) < 0)
		return -1;
	unsigned char *w = put_header(out->data + out->len, LBER_SEQUENCE, msg);
	w = put_msgid(w, msgid);
	w = put_header(w, LDAP_RES_SEARCH_ENTRY, op);
	w = put_header(w, LBER_OCTETSTRING, dnlen);
	memcpy(w, dn, dnlen);
	w = put_header(w + dnlen, LBER_SEQUENCE, attrs_len);
	out->len = (size_t)(w - out->data);
	return 0;
}

/* response_entry_extra under the Matched Values control: the attributes are built first. */
static int entry_matched_values(struct buf *out, int32_t msgid, const unsigned char *dn,
                                size_t dnlen, const unsigned char *attrs, size_t alen,
                                const struct attr_select *sel, const unsigned char *extra,
                                size_t extra_len)
{
	struct buf list = {0}, vals = {0}, scratch = {0};
	int rc = put_matched_values(&list, sel, false, attrs, alen, &vals, &scratch);
	if (rc == 0 && extra_len)
		rc = put_matched_values(&list, sel, true, extra, extra_len, &vals, &scratch);
	if (rc == 0 && (rc = put_entry_head(out, msgid, dn, dnlen, list.len)) == 0)
		rc = buf_append(out, list.data, list.len); /* within the room put_entry_head made */
	buf_free(&list);
	buf_free(&vals);
	buf_free(&scratch);
	return rc < 0 ? -1 : 0;
}

/* Runs of selected attributes response_entry_extra keeps from its first pass. */
#define ENTRY_RUNS_MAX 16

/* attr_at's reading by tlv_read, element by element: whatever the bytes. */
static const unsigned char *attr_at_slow(const unsigned char *q, const unsigned char *end,
                                         const unsigned char **t, size_t *tlen)
{
	const unsigned char *seq;
	size_t slen;
	unsigned char tag;
	if (!tlv_read(&q, end, &tag, &seq, &slen) || !tlv_read(&seq, q, &tag, t, tlen))
		return NULL;
	return q;
}

/*
 * The attribute at q of a stored list that ends at end (storage/entry.c wrote it: SEQUENCE
 * { type, SET OF value }): its type in t[0..*tlen), and the byte after it returned; NULL
 * when the bytes hold none. Inline for what storage writes (lengths of up to two bytes, a
 * short type); tags are not looked at here, only where things lie, always inside end.
 */
static inline const unsigned char *attr_at(const unsigned char *q, const unsigned char *end,
                                           const unsigned char **t, size_t *tlen)
{
	size_t left = (size_t)(end - q), len, h;
	if (left < 6 || !tlv_head_inline(q, &len, &h) || left - h < len || len < 2 ||
	    q[h + 1] >= 0x80 || q[h + 1] > len - 2)
		return attr_at_slow(q, end, t, tlen);
	*t = q + h + 2;
	*tlen = q[h + 1];
	return q + h + len;
}

/* The stored entry as it is, after a message header: every user attribute asked, nothing
 * to add or leave out. */
static int entry_verbatim(struct buf *out, int32_t msgid, const unsigned char *stored, size_t len)
{
	size_t msg = msgid_size(msgid) + len;
	if (buf_reserve(out, elem_size(msg)) < 0)
		return -1;
	unsigned char *w = put_header(out->data + out->len, LBER_SEQUENCE, msg);
	w = put_msgid(w, msgid);
	memcpy(w, stored, len);
	out->len = (size_t)(w + len - out->data);
	return 0;
}

/* Where the selected attributes lie: runs of adjacent ones (most entries: one or two). */
struct entry_runs {
	struct span {
		const unsigned char *at;
		size_t len;
	} run[ENTRY_RUNS_MAX];
	int n;
	bool walk_again; /* types only, or more runs than fit: pass 2 walks the list again */
};

/*
 * Pass 1 over the attribute list attrs[0..alen): the size of what sel selects (as it will
 * be written), and where it lies in *runs, so pass 2 need not walk the list again.
 * Returns the size; -1 when the bytes hold no attribute list.
 */
static inline ptrdiff_t select_runs(const struct attr_select *sel, const unsigned char *attrs,
                                    size_t alen, struct entry_runs *runs)
{
	bool types_only = sel->types_only;
	/* the usual request: every user attribute the gate lets through */
	bool gate_only = sel->all_user && !sel->check_operational;
	const struct attr_gate *gate = sel->gate;
	size_t sel_len = 0;
	const unsigned char *aend = attrs + alen, *run_end = NULL;
	int n = 0; /* runs->n and runs->walk_again kept in locals, stored at the end */
	bool walk_again = types_only;
	for (const unsigned char *q = attrs; q < aend;) {
		const unsigned char *a = q, *t;
		size_t tlen;
		if (!(q = attr_at(a, aend, &t, &tlen)))
			return -1;
		if (gate_only ? !attr_gate_allows(gate, (const char *)t, tlen)
		              : !is_selected(sel, t, tlen))
			continue;
		size_t asize = (size_t)(q - a);
		sel_len += types_only ? selected_size(sel, asize, tlen) : asize;
		if (a == run_end)
			runs->run[n - 1].len += asize;
		else if (n < ENTRY_RUNS_MAX)
			runs->run[n++] = (struct span){a, asize};
		else
			walk_again = true; /* runs are not used then */
		run_end = q;
	}
	runs->n = n;
	runs->walk_again = walk_again;
	return (ptrdiff_t)sel_len;
}

/*
 * select_runs for the usual request: every user attribute the gate lets through, values and
 * all. The runs are what lies between the attributes the gate hides, so an attribute it
 * lets through costs its reading and the gate's answer only; the size is the list's less
 * what is hidden. The same answers as select_runs: an attribute read inline when it has
 * the short forms storage writes for most (attr_at for the others).
 */
static inline ptrdiff_t gate_runs(const struct attr_gate *gate, const unsigned char *attrs,
                                  size_t alen, struct entry_runs *runs)
{
	const unsigned char *aend = attrs + alen, *from = attrs; /* the run being kept */
	size_t hidden = 0;
	int n = 0;
	bool walk_again = false;
	for (const unsigned char *q = attrs; q < aend;) {
		const unsigned char *a = q, *t;
		size_t tlen, left = (size_t)(aend - a);
		/* SEQUENCE and type of one-byte lengths, the type inside it, it inside the list */
		if (left >= 6 && a[1] < 0x80 && a[1] + 2u <= left && a[3] + 2 <= a[1]) {
			t = a + 4;
			tlen = a[3];
			q = a + 2 + a[1];
		} else if (!(q = attr_at(a, aend, &t, &tlen))) {
			return -1;
		}
		if (attr_gate_allows(gate, (const char *)t, tlen))
			continue;
		hidden += (size_t)(q - a);
		if (a > from && n < ENTRY_RUNS_MAX)
			runs->run[n++] = (struct span){from, (size_t)(a - from)};
		else if (a > from)
			walk_again = true; /* runs are not used then */
		from = q;
	}
	if (aend > from && n < ENTRY_RUNS_MAX)
		runs->run[n++] = (struct span){from, (size_t)(aend - from)};
	else if (aend > from)
		walk_again = true;
	runs->n = n;
	runs->walk_again = walk_again;
	return (ptrdiff_t)(alen - hidden);
}

/*
 * Pass 2: writes at w what select_runs measured (the room reserved already) and returns the
 * end: the runs copied, or the list walked again (each attribute pass 1 read whole).
 */
static inline unsigned char *write_selected(unsigned char *w, const struct attr_select *sel,
                                            const unsigned char *attrs, size_t alen,
                                            const struct entry_runs *runs)
{
	bool walk_again = runs->walk_again;
	for (int i = 0, n = runs->n; !walk_again && i < n; i++) {
		memcpy(w, runs->run[i].at, runs->run[i].len);
		w += runs->run[i].len;
	}
	const unsigned char *aend = attrs + alen;
	for (const unsigned char *q = attrs; walk_again && q < aend;) {
		const unsigned char *a = q, *t;
		size_t tlen;
		q = attr_at(a, aend, &t, &tlen); /* pass 1 read these bytes whole */
		if (!is_selected(sel, t, tlen))
			continue;
		if (sel->types_only) {
			w = put_header(w, LBER_SEQUENCE, elem_size(tlen) + 2);
			w = tlv_write(w, LBER_OCTETSTRING, t, tlen);
			w = tlv_write(w, LBER_SET, NULL, 0);
		} else {
			memcpy(w, a, (size_t)(q - a));
			w += q - a;
		}
	}
	return w;
}

int response_stored_entry(struct buf *out, int32_t msgid, const struct stored_entry *st,
                          const struct attr_select *sel, const unsigned char *extra,
                          size_t extra_len)
{
	bool all_user = sel->all_user && !sel->check_operational && !sel->types_only;
	/* a gate that passes every type the entry's summary names hides nothing of it */
	if (all_user && extra_len == 0 && !sel->values &&
	    (!sel->gate || attr_gate_allows_all(sel->gate, st->type_lens)))
		return entry_verbatim(out, msgid, st->op, st->oplen);
	if (sel->values)
		return entry_matched_values(out, msgid, st->dn, st->dnlen, st->attrs, st->attrslen,
		                            sel, extra, extra_len);
	struct entry_runs runs;
	ptrdiff_t sel_len = all_user ? gate_runs(sel->gate, st->attrs, st->attrslen, &runs)
	                             : select_runs(sel, st->attrs, st->attrslen, &runs);
	/* the gate hid nothing of this entry: it goes out as stored */
	if (all_user && (size_t)sel_len == st->attrslen && extra_len == 0)
		return entry_verbatim(out, msgid, st->op, st->oplen);
	if (sel_len < 0 ||
	    put_entry_head(out, msgid, st->dn, st->dnlen, (size_t)sel_len + extra_len) < 0)
		return -1;
	/* the reservation covers every byte below */
	unsigned char *w =
	    write_selected(out->data + out->len, sel, st->attrs, st->attrslen, &runs);
	if (extra_len) {
		memcpy(w, extra, extra_len);
		w += extra_len;
	}
	out->len = (size_t)(w - out->data);
	return 0;
}

int response_entry_extra(struct buf *out, int32_t msgid, const unsigned char *stored, size_t len,
                         const struct attr_select *sel, const unsigned char *extra,
                         size_t extra_len)
{
	struct stored_entry st = {.op = stored, .oplen = len};
	const unsigned char *p = stored, *end = stored + len, *body;
	size_t blen;
	unsigned char tag;
	if (!tlv_read_inline(&p, end, &tag, &body, &blen))
		return -1;
	p = body;
	end = body + blen;
	if (!tlv_read_inline(&p, end, &tag, &st.dn, &st.dnlen) ||
	    !tlv_read_inline(&p, end, &tag, &st.attrs, &st.attrslen))
		return -1;
	return response_stored_entry(out, msgid, &st, sel, extra, extra_len);
}
