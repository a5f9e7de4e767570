#include "protocol/response.h"

#include "protocol/match.h"
#include "protocol/schema.h"

#include <ldap.h>
#include <string.h>
#include <strings.h>

/* Writes tag and length of a constructed element whose content is clen bytes. */
static unsigned char *put_header(unsigned char *p, unsigned char tag, size_t clen)
{
	*p++ = tag;
	return p + tlv_put_len(p, clen);
}

static size_t tlv_size(size_t clen)
{
	return 1 + tlv_len_size(clen) + clen;
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

int response_result_ex(struct buf *out, int32_t msgid, unsigned char optag, int rc,
                       const char *matched, const char *message, const struct result_extra *x)
{
	size_t mlen = str_len(matched), dlen = str_len(message), olen = str_len(x->oid);
	size_t op = tlv_int_size(rc) + tlv_size(mlen) + tlv_size(dlen) +
	            (x->oid ? tlv_size(olen) : 0) + (x->has_value ? tlv_size(x->vlen) : 0);
	size_t msg = tlv_int_size(msgid) + tlv_size(op) + x->clen;
	if (buf_reserve(out, tlv_size(msg)) < 0)
		return -1;
	unsigned char *start = out->data + out->len;
	unsigned char *p = put_header(start, LBER_SEQUENCE, msg);
	out->len += (size_t)(p - start);
	tlv_put_int(out, LBER_INTEGER, msgid);
	p = put_header(out->data + out->len, optag, op);
	out->len = (size_t)(p - out->data);
	tlv_put_int(out, LBER_ENUMERATED, rc);
	tlv_put(out, LBER_OCTETSTRING, matched, mlen);
	tlv_put(out, LBER_OCTETSTRING, message, dlen);
	if (x->oid)
		tlv_put(out, LDAP_TAG_EXOP_RES_OID, x->oid, olen);
	if (x->has_value)
		tlv_put(out, LDAP_TAG_EXOP_RES_VALUE, x->value, x->vlen);
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
	}
	if (only_noattrs)
		sel->n = 0;
}

static bool named(const struct attr_select *sel, const char *t, size_t n)
{
	for (int i = 0; i < sel->n; i++)
		if (match_desc(sel->names[i].bv_val, sel->names[i].bv_len, t, n))
			return true;
	return false;
}

bool attr_select_wants(const struct attr_select *sel, const char *name)
{
	return sel->all_operational || named(sel, name, strlen(name));
}

static bool is_selected(const struct attr_select *sel, const unsigned char *t, size_t n)
{
	if (sel->hidden && match_desc(sel->hidden, strlen(sel->hidden), (const char *)t, n))
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
	return sel->types_only ? tlv_size(tlv_size(tlen) + 2) : whole;
}

int response_put_attr(struct buf *out, const char *type, const struct berval *vals, int nvals,
                      bool types_only)
{
	size_t tlen = strlen(type), set = 0;
	for (int i = 0; !types_only && i < nvals; i++)
		set += tlv_size(vals[i].bv_len);
	size_t seq = tlv_size(tlen) + tlv_size(set);
	if (buf_reserve(out, tlv_size(seq)) < 0)
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

int response_entry_extra(struct buf *out, int32_t msgid, const unsigned char *stored, size_t len,
                         const struct attr_select *sel, const unsigned char *extra,
                         size_t extra_len)
{
	bool verbatim = sel->all_user && !sel->types_only && !sel->hidden && extra_len == 0 &&
	                !sel->check_operational;
	if (verbatim) {
		size_t msg = tlv_int_size(msgid) + len;
		if (buf_reserve(out, tlv_size(msg)) < 0)
			return -1;
		unsigned char *p = put_header(out->data + out->len, LBER_SEQUENCE, msg);
		out->len = (size_t)(p - out->data);
		tlv_put_int(out, LBER_INTEGER, msgid);
		memcpy(out->data + out->len, stored, len);
		out->len += len;
		return 0;
	}
	const unsigned char *p = stored, *end = stored + len, *body, *dn, *attrs;
	size_t blen, dnlen, alen;
	unsigned char tag;
	if (!tlv_read(&p, end, &tag, &body, &blen))
		return -1;
	p = body;
	end = body + blen;
	if (!tlv_read(&p, end, &tag, &dn, &dnlen) || !tlv_read(&p, end, &tag, &attrs, &alen))
		return -1;
	/* Pass 1: the size of what is selected. */
	size_t sel_len = 0;
	for (const unsigned char *q = attrs; q < attrs + alen;) {
		const unsigned char *a = q, *seq, *t;
		size_t slen, tlen;
		if (!tlv_read(&q, attrs + alen, &tag, &seq, &slen))
			return -1;
		const unsigned char *s = seq;
		if (!tlv_read(&s, seq + slen, &tag, &t, &tlen))
			return -1;
		if (is_selected(sel, t, tlen))
			sel_len += selected_size(sel, (size_t)(q - a), tlen);
	}
	sel_len += extra_len;
	size_t op = tlv_size(dnlen) + tlv_size(sel_len);
	size_t msg = tlv_int_size(msgid) + tlv_size(op);
	if (buf_reserve(out, tlv_size(msg)) < 0)
		return -1;
	/* Pass 2: write it; the reservation above covers every append below. */
	unsigned char *w = put_header(out->data + out->len, LBER_SEQUENCE, msg);
	out->len = (size_t)(w - out->data);
	tlv_put_int(out, LBER_INTEGER, msgid);
	w = put_header(out->data + out->len, LDAP_RES_SEARCH_ENTRY, op);
	out->len = (size_t)(w - out->data);
	tlv_put(out, LBER_OCTETSTRING, dn, dnlen);
	w = put_header(out->data + out->len, LBER_SEQUENCE, sel_len);
	out->len = (size_t)(w - out->data);
	for (const unsigned char *q = attrs; q < attrs + alen;) {
		const unsigned char *a = q, *seq, *t;
		size_t slen, tlen;
		tlv_read(&q, attrs + alen, &tag, &seq, &slen);
		const unsigned char *s = seq;
		tlv_read(&s, seq + slen, &tag, &t, &tlen);
		if (!is_selected(sel, t, tlen))
			continue;
		if (sel->types_only) {
			w = put_header(out->data + out->len, LBER_SEQUENCE, tlv_size(tlen) + 2);
			out->len = (size_t)(w - out->data);
			tlv_put(out, LBER_OCTETSTRING, t, tlen);
			tlv_put(out, LBER_SET, NULL, 0);
		} else {
			memcpy(out->data + out->len, a, (size_t)(q - a));
			out->len += (size_t)(q - a);
		}
	}
	return extra_len ? buf_append(out, extra, extra_len) : 0;
}
