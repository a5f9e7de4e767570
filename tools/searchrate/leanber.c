/*
 * leanber.c: the lean engine's BER (see leanber.h). Lengths are computed before anything is
 * written, so each message is written once, front to back, in definite minimal form.
 */
#include "tools/searchrate/leanber.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <lber.h>

/* Bytes of the BER length n. */
static size_t len_size(size_t n)
{
	size_t k = 1;
	if (n >= 0x80)
		for (size_t v = n; v; v >>= 8)
			k++;
	return k;
}

static unsigned char *put_len(unsigned char *o, size_t n)
{
	if (n < 0x80) {
		*o++ = (unsigned char)n;
		return o;
	}
	size_t k = len_size(n) - 1;
	*o++ = (unsigned char)(0x80 | k);
	for (size_t i = k; i-- > 0;)
		*o++ = (unsigned char)(n >> (8 * i));
	return o;
}

/* Content bytes of the INTEGER v >= 0 (two's complement, minimal). */
static size_t int_size(long long v)
{
	size_t k = 1;
	while (k < 8 && v >= 1ll << (8 * k - 1))
		k++;
	return k;
}

static unsigned char *put_int(unsigned char *o, unsigned tag, long long v)
{
	size_t k = int_size(v);
	*o++ = (unsigned char)tag;
	*o++ = (unsigned char)k;
	for (size_t i = k; i-- > 0;)
		*o++ = (unsigned char)((unsigned long long)v >> (8 * i));
	return o;
}

static unsigned char *put_str(unsigned char *o, unsigned tag, const void *s, size_t n)
{
	*o++ = (unsigned char)tag;
	o = put_len(o, n);
	memcpy(o, s, n);
	return o + n;
}

/* Bytes of a whole TLV of n content bytes. */
static size_t tlv_size(size_t n)
{
	return 1 + len_size(n) + n;
}

bool lb_search_init(struct lb_search *s, int scope, int sizelimit, int timelimit,
                    char *const *attrs)
{
	unsigned char *o = s->mid;
	o = put_int(o, 0x0a, scope);
	o = put_int(o, 0x0a, LDAP_DEREF_NEVER);
	o = put_int(o, 0x02, sizelimit);
	o = put_int(o, 0x02, timelimit);
	*o++ = 0x01; /* typesOnly FALSE */
	*o++ = 0x01;
	*o++ = 0x00;
	s->midlen = (size_t)(o - s->mid);
	size_t content = 0;
	for (char *const *a = attrs; a && *a; a++)
		content += tlv_size(strlen(*a));
	s->attrslen = tlv_size(content);
	s->attrs = malloc(s->attrslen);
	if (!s->attrs)
		return false;
	o = s->attrs;
	*o++ = 0x30;
	o = put_len(o, content);
	for (char *const *a = attrs; a && *a; a++)
		o = put_str(o, 0x04, *a, strlen(*a));
	return true;
}

void lb_search_free(struct lb_search *s)
{
	free(s->attrs);
	s->attrs = NULL;
}

/* The content length of the SearchRequest. */
static size_t search_content(const struct lb_search *s, size_t baselen, size_t filterlen)
{
	return tlv_size(baselen) + s->midlen + filterlen + s->attrslen;
}

size_t lb_search_max(const struct lb_search *s, size_t baselen, size_t filterlen)
{
	return tlv_size(tlv_size(6) + tlv_size(search_content(s, baselen, filterlen)));
}

size_t lb_put_search(unsigned char *out, const struct lb_search *s, int msgid, const char *base,
                     size_t baselen, const unsigned char *filter, size_t filterlen)
{
	size_t op = search_content(s, baselen, filterlen);
	unsigned char *o = out;
	*o++ = 0x30;
	o = put_len(o, tlv_size(int_size(msgid)) + tlv_size(op));
	o = put_int(o, 0x02, msgid);
	*o++ = LB_OP_SEARCH_REQUEST;
	o = put_len(o, op);
	o = put_str(o, 0x04, base, baselen);
	memcpy(o, s->mid, s->midlen);
	o += s->midlen;
	memcpy(o, filter, filterlen);
	o += filterlen;
	memcpy(o, s->attrs, s->attrslen);
	o += s->attrslen;
	return (size_t)(o - out);
}

static size_t bind_content(size_t dnlen, size_t pwlen)
{
	return 3 + tlv_size(dnlen) + tlv_size(pwlen);
}

size_t lb_bind_max(size_t dnlen, size_t pwlen)
{
	return tlv_size(tlv_size(6) + tlv_size(bind_content(dnlen, pwlen)));
}

size_t lb_put_bind(unsigned char *out, int msgid, const char *dn, size_t dnlen, const char *pw,
                   size_t pwlen)
{
	size_t op = bind_content(dnlen, pwlen);
	unsigned char *o = out;
	*o++ = 0x30;
	o = put_len(o, tlv_size(int_size(msgid)) + tlv_size(op));
	o = put_int(o, 0x02, msgid);
	*o++ = LB_OP_BIND_REQUEST;
	o = put_len(o, op);
	o = put_int(o, 0x02, LDAP_VERSION3);
	o = put_str(o, 0x04, dn, dnlen);
	o = put_str(o, 0x80, pw, pwlen); /* AuthenticationChoice simple [0] */
	return (size_t)(o - out);
}

size_t lb_put_unbind(unsigned char *out, int msgid)
{
	unsigned char *o = out;
	*o++ = 0x30;
	o = put_len(o, tlv_size(int_size(msgid)) + 2);
	o = put_int(o, 0x02, msgid);
	*o++ = LB_OP_UNBIND_REQUEST;
	*o++ = 0x00;
	return (size_t)(o - out);
}

/* Reads a definite length at *p (below end) into *len; 0 incomplete, -1 bad, 1 read. */
static int get_len(const unsigned char **p, const unsigned char *end, size_t *len)
{
	if (*p >= end)
		return 0;
	unsigned b = *(*p)++;
	if (b < 0x80) {
		*len = b;
		return 1;
	}
	size_t k = b & 0x7f;
	if (k == 0 || k > 4) /* indefinite, or beyond 4 GiB */
		return -1;
	if ((size_t)(end - *p) < k)
		return 0;
	size_t v = 0;
	for (size_t i = 0; i < k; i++)
		v = v << 8 | *(*p)++;
	*len = v;
	return 1;
}

/* Reads one TLV of a single-byte tag at *p inside a complete frame ending at end; false
 * when it runs past end. *p is left at its content. */
static bool get_tlv(const unsigned char **p, const unsigned char *end, unsigned *tag, size_t *len)
{
	if (*p >= end)
		return false;
	*tag = *(*p)++;
	return get_len(p, end, len) == 1 && *len <= (size_t)(end - *p);
}

static bool is_result(unsigned op)
{
	return op == LB_OP_BIND_RESPONSE || op == LB_OP_SEARCH_DONE ||
	       op == LB_OP_EXTENDED_RESPONSE;
}

/* LDAPResult's resultCode, matchedDN and diagnosticMessage, from p (the op's content). */
static bool get_result(const unsigned char *p, const unsigned char *end, struct lb_msg *m)
{
	unsigned tag;
	size_t len;
	if (!get_tlv(&p, end, &tag, &len) || tag != 0x0a || len < 1 || len > 4)
		return false;
	long long v = (p[0] & 0x80) ? -1 : 0; /* ENUMERATED is signed */
	for (size_t i = 0; i < len; i++)
		v = (long long)((unsigned long long)v << 8 | p[i]);
	m->rc = (int)v;
	p += len;
	if (get_tlv(&p, end, &tag, &len) && tag == 0x04) { /* matchedDN */
		p += len;
		if (get_tlv(&p, end, &tag, &len) && tag == 0x04) {
			m->diag = p;
			m->diaglen = len;
		}
	}
	return true;
}

long lb_frame(const unsigned char *p, size_t n, size_t max, struct lb_msg *m, size_t *need)
{
	const unsigned char *q = p, *end = p + n;
	size_t len;
	*need = 0;
	if (n == 0)
		return 0;
	if (*q++ != 0x30)
		return -1;
	int r = get_len(&q, end, &len);
	if (r <= 0)
		return r;
	size_t total = (size_t)(q - p) + len;
	if (total > max || len > max)
		return -1;
	if (total > n) {
		*need = total;
		return 0;
	}
	end = p + total;
	unsigned tag;
	*m = (struct lb_msg){0};
	if (!get_tlv(&q, end, &tag, &len) || tag != 0x02 || len < 1 || len > 4 || (q[0] & 0x80))
		return -1;
	for (size_t i = 0; i < len; i++)
		m->msgid = (int)((unsigned)m->msgid << 8 | q[i]);
	q += len;
	if (!get_tlv(&q, end, &tag, &len) || (tag & 0xc0) != 0x40)
		return -1;
	m->op = tag;
	if (is_result(tag) && !get_result(q, q + len, m))
		return -1;
	return (long)total;
}

bool lb_filter_init(struct lb_filter *f, size_t maxlen)
{
	*f = (struct lb_filter){.maxlen = maxlen};
	f->scratch = malloc(maxlen + 1);
	return f->scratch && ldap_initialize(&f->ld, "ldap://127.0.0.1") == LDAP_SUCCESS;
}

void lb_filter_free(struct lb_filter *f)
{
	for (size_t i = 0; i < LB_SHAPES; i++)
		ber_memfree(f->shape[i].ber.bv_val);
	ber_memfree(f->slow.bv_val);
	if (f->ld)
		ldap_unbind_ext(f->ld, NULL, NULL);
	free(f->scratch);
	*f = (struct lb_filter){0};
}

/* libldap's encoding of the filter f->scratch (NUL terminated) into *bv. A filter it refuses
 * is LDAP_FILTER_ERROR, as ldap_search_ext says (the assertion control says encodingError). */
static int encode(struct lb_filter *f, struct berval *bv)
{
	f->encodes++;
	*bv = (struct berval){0, NULL};
	int rc = ldap_create_assertion_control_value(f->ld, f->scratch, bv);
	return rc == LDAP_SUCCESS || rc == LDAP_NO_MEMORY ? rc : LDAP_FILTER_ERROR;
}

/* Encodes str[0..len) into f->slow (the previous one freed); NULL and *rc on failure. */
static const unsigned char *encode_slow(struct lb_filter *f, const char *str, size_t len,
                                        size_t *berlen, int *rc)
{
	ber_memfree(f->slow.bv_val);
	memcpy(f->scratch, str, len);
	f->scratch[len] = '\0';
	*rc = encode(f, &f->slow);
	if (*rc != LDAP_SUCCESS)
		return NULL;
	*berlen = f->slow.bv_len;
	return (const unsigned char *)f->slow.bv_val;
}

/* The character standing in for c when locating a range: every one differs. */
static char other(char c)
{
	return c >= '0' && c <= '9' ? (char)('0' + (c - '0' + 1) % 10) : '1';
}

/*
 * Learns where sh's ranges (at spans in str) lie in sh->ber: encodes str again with every
 * range character changed (f->scratch holds str) and compares. true when each range is one
 * run of its own characters, in order, and nothing else differs.
 */
static bool locate(struct lb_filter *f, struct lb_shape *sh, const char *str,
                   const struct pattern_span *spans)
{
	for (size_t k = 0; k < sh->nr; k++)
		for (size_t i = 0; i < spans[k].len; i++)
			f->scratch[spans[k].at + i] = other(str[spans[k].at + i]);
	struct berval alt;
	if (encode(f, &alt) != LDAP_SUCCESS)
		return false;
	const unsigned char *a = (const unsigned char *)sh->ber.bv_val;
	const unsigned char *b = (const unsigned char *)alt.bv_val;
	bool ok = alt.bv_len == sh->ber.bv_len;
	size_t pos = 0, n = sh->ber.bv_len;
	for (size_t k = 0; ok && k < sh->nr; k++) {
		while (pos < n && a[pos] == b[pos])
			pos++;
		const struct pattern_span *sp = &spans[k];
		ok = n - pos >= sp->len && !memcmp(a + pos, str + sp->at, sp->len) &&
		     !memcmp(b + pos, f->scratch + sp->at, sp->len);
		sh->at[k] = pos;
		pos += sp->len;
	}
	ok = ok && (n <= pos || !memcmp(a + pos, b + pos, n - pos));
	ber_memfree(alt.bv_val);
	return ok;
}

/* The shape of these spans, learned now if it is new (in place of the oldest); NULL and *rc
 * when libldap refuses the filter. */
static struct lb_shape *shape_of(struct lb_filter *f, const char *str, size_t len,
                                 const struct pattern_span *spans, size_t nr, int *rc)
{
	for (size_t i = 0; i < LB_SHAPES; i++) {
		struct lb_shape *sh = &f->shape[i];
		bool same = sh->ber.bv_val && sh->nr == nr;
		for (size_t k = 0; same && k < nr; k++)
			same = sh->len[k] == spans[k].len;
		if (same)
			return sh;
	}
	struct lb_shape *sh = &f->shape[f->next];
	ber_memfree(sh->ber.bv_val);
	*sh = (struct lb_shape){.nr = nr};
	memcpy(f->scratch, str, len);
	f->scratch[len] = '\0';
	*rc = encode(f, &sh->ber);
	if (*rc != LDAP_SUCCESS) {
		ber_memfree(sh->ber.bv_val);
		*sh = (struct lb_shape){0};
		return NULL;
	}
	f->next = (f->next + 1) % LB_SHAPES;
	for (size_t k = 0; k < nr; k++)
		sh->len[k] = spans[k].len;
	sh->patch = locate(f, sh, str, spans);
	return sh;
}

const unsigned char *lb_filter_get(struct lb_filter *f, const char *str, size_t len,
                                   const struct pattern_span *spans, size_t nr, size_t *berlen,
                                   int *rc)
{
	*rc = LDAP_SUCCESS;
	if (len > f->maxlen)
		return *rc = LDAP_FILTER_ERROR, NULL;
	if (nr > LB_SHAPE_RANGES)
		return encode_slow(f, str, len, berlen, rc);
	uint64_t before = f->encodes;
	struct lb_shape *sh = shape_of(f, str, len, spans, nr, rc);
	if (!sh)
		return NULL;
	/* A shape learned just now holds this very expansion. */
	bool learned = f->encodes != before;
	if (!sh->patch && !learned)
		return encode_slow(f, str, len, berlen, rc);
	unsigned char *ber = (unsigned char *)sh->ber.bv_val;
	for (size_t k = 0; sh->patch && k < nr; k++)
		memcpy(ber + sh->at[k], str + spans[k].at, spans[k].len);
	*berlen = sh->ber.bv_len;
	return ber;
}
