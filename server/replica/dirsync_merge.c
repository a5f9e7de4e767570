/* An entry's attributes merged with what a DC's DirSync sends: see dirsync_merge.h. */
#include "server/replica/dirsync_merge.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/tlv.h"

void merged_clear(struct merged *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->a[i].v);
	m->n = 0;
}

void merged_free(struct merged *m)
{
	merged_clear(m);
	free(m->a);
	*m = (struct merged){0};
}

/* The attribute type t[0..tlen) (compared case-insensitively), added when absent; NULL
 * when out of memory. */
struct merged_attr *merged_attr_of(struct merged *m, const char *t, size_t tlen)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->a[i].tlen == tlen && strncasecmp(m->a[i].type, t, tlen) == 0)
			return &m->a[i];
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 32;
		struct merged_attr *a = realloc(m->a, cap * sizeof(*a));
		if (!a)
			return NULL;
		m->a = a;
		m->cap = cap;
	}
	m->a[m->n] = (struct merged_attr){.type = t, .tlen = tlen};
	return &m->a[m->n++];
}

/* The index of value v[0..len) in a (bytes compared; a DN's case as the DC spells it),
 * or -1. */
static long value_at(const struct merged_attr *a, const char *v, size_t len)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].bv_len == len && memcmp(a->v[i].bv_val, v, len) == 0)
			return (long)i;
	return -1;
}

/* Adds v (once). 0, or -1 when out of memory. */
int merged_value_add(struct merged_attr *a, const char *v, size_t len)
{
	if (value_at(a, v, len) >= 0)
		return 0;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 4;
		struct berval *nv = realloc(a->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = (struct berval){len, (char *)v};
	return 0;
}

static void value_remove(struct merged_attr *a, const char *v, size_t len)
{
	long i = value_at(a, v, len);
	if (i >= 0)
		a->v[i] = a->v[--a->n];
}

/* How a value list of the DC's message applies: a ranged option (a linked attribute's
 * incremental values) adds or removes them; without one they replace the type's. */
enum how { REPLACE, ADD, REMOVE };

/* The type of description t[0..*tlen) without a ";range=L-H" option, and what the
 * option says: "range=0-0" values removed, any other range added. */
static enum how strip_range(const char *t, size_t *tlen)
{
	for (size_t i = 0; i < *tlen; i++) {
		if (t[i] != ';')
			continue;
		size_t olen = *tlen - i - 1;
		const char *o = t + i + 1;
		if (olen > 6 && strncasecmp(o, "range=", 6) == 0) {
			*tlen = i;
			return olen == 9 && memcmp(o + 6, "0-0", 3) == 0 ? REMOVE : ADD;
		}
	}
	return REPLACE;
}

/*
 * Merges the attributes of the content of a PartialAttributeList p[0..len) into m: with
 * from_dc, as dirsync.h says (ranged values added or removed, the others replacing the
 * type's); without, every value added (the stored record). Returns 0, or -1 (bad BER, out
 * of memory).
 */
int merged_add(struct merged *m, const unsigned char *p, size_t len, bool from_dc)
{
	if (!len) /* no attribute: p may be NULL */
		return 0;
	const unsigned char *end = p + len, *seq, *t, *vals, *v;
	size_t slen, tlen, vlen, n;
	unsigned char tag;
	while (p < end) {
		if (!tlv_read(&p, end, &tag, &seq, &slen))
			return -1;
		const unsigned char *q = seq;
		if (!tlv_read(&q, seq + slen, &tag, &t, &tlen) ||
		    !tlv_read(&q, seq + slen, &tag, &vals, &vlen))
			return -1;
		enum how how = from_dc ? strip_range((const char *)t, &tlen) : ADD;
		struct merged_attr *a = merged_attr_of(m, (const char *)t, tlen);
		if (!a)
			return -1;
		if (how == REPLACE)
			a->n = 0;
		for (const unsigned char *r = vals; r < vals + vlen;) {
			if (!tlv_read(&r, vals + vlen, &tag, &v, &n))
				return -1;
			if (how == REMOVE)
				value_remove(a, (const char *)v, n);
			else if (merged_value_add(a, (const char *)v, n) < 0)
				return -1;
		}
	}
	return 0;
}

/* m as the content of a PartialAttributeList into out (reset first); a type left with
 * no value is left out. 0, or -1 when out of memory. */
int merged_encode(const struct merged *m, struct buf *out, struct buf *set, struct buf *seq)
{
	out->off = out->len = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct merged_attr *a = &m->a[i];
		if (!a->n)
			continue;
		set->off = set->len = seq->off = seq->len = 0;
		for (size_t j = 0; j < a->n; j++)
			if (tlv_put(set, 0x04, a->v[j].bv_val, a->v[j].bv_len) < 0)
				return -1;
		if (tlv_put(seq, 0x04, a->type, a->tlen) < 0 ||
		    tlv_put(seq, 0x31, set->data, set->len) < 0 ||
		    tlv_put(out, 0x30, seq->data, seq->len) < 0)
			return -1;
	}
	return 0;
}

/*
 * The RDN's values in m: those of the old DN's first RDN (old_dn NULL: none) removed,
 * the new one's added. A DC does not send the naming attribute (cn) over DirSync, and
 * renames an object by its RDN: its value follows the DN. *old and *now are the parsed
 * DNs the values point into (the caller's to ldap_dnfree). 0, or -1 (a DN that does not
 * parse, out of memory).
 */
int merged_set_rdn(struct merged *m, const char *old_dn, const char *dn, LDAPDN *old, LDAPDN *now)
{
	*old = *now = NULL;
	if ((old_dn && ldap_str2dn(old_dn, old, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS) ||
	    ldap_str2dn(dn, now, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS || !*now || !(*now)[0])
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		LDAPRDN rdn = pass == 0 ? (*old ? (*old)[0] : NULL) : (*now)[0];
		for (int i = 0; rdn && rdn[i]; i++) {
			struct merged_attr *a =
			    merged_attr_of(m, rdn[i]->la_attr.bv_val, rdn[i]->la_attr.bv_len);
			if (!a)
				return -1;
			if (pass == 0)
				value_remove(a, rdn[i]->la_value.bv_val, rdn[i]->la_value.bv_len);
			else if (merged_value_add(a, rdn[i]->la_value.bv_val,
			                          rdn[i]->la_value.bv_len) < 0)
				return -1;
		}
	}
	return 0;
}
