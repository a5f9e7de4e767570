#include "storage/entry.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/attr_gate.h"
#include "protocol/tlv.h"

bool entry_find_attr(const struct entry_view *e, const char *name, size_t len,
                     const unsigned char **vals, size_t *vlen)
{
	const unsigned char *p = e->attrs, *end = e->attrs + e->attrslen, *seq, *t;
	size_t slen, tlen;
	unsigned char tag;
	while (p < end && tlv_read(&p, end, &tag, &seq, &slen)) {
		const unsigned char *q = seq;
		if (tlv_read(&q, seq + slen, &tag, &t, &tlen) && tlen == len &&
		    strncasecmp((const char *)t, name, len) == 0)
			return tlv_read(&q, seq + slen, &tag, vals, vlen);
	}
	return false;
}

bool entry_next_value(const unsigned char **p, const unsigned char *end, const unsigned char **v,
                      size_t *vlen)
{
	unsigned char tag;
	return *p < end && tlv_read(p, end, &tag, v, vlen);
}

bool entry_has_class(const struct entry_view *e, const char *name, size_t len)
{
	const unsigned char *vals, *v;
	size_t vlen, vl;
	if (!entry_find_attr(e, "objectClass", 11, &vals, &vlen))
		return false;
	for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &vl);)
		if (vl == len && strncasecmp((const char *)v, name, len) == 0)
			return true;
	return false;
}

int entry_parse(const void *data, size_t len, struct entry_view *e)
{
	const unsigned char *p = data, *end = p + len;
	uint16_t klen;
	if (len < 22)
		return -1;
	memcpy(&e->parent, p, 4);
	e->uuid = p + 4;
	memcpy(&klen, p + 20, 2);
	p += 22;
	if ((size_t)(end - p) < klen)
		return -1;
	e->key = p;
	e->keylen = klen;
	p += klen;
	e->op = p;
	e->oplen = (size_t)(end - p);
	const unsigned char *body, *q;
	size_t blen;
	unsigned char tag;
	if (!tlv_read_inline(&p, end, &tag, &body, &blen) || tag != LDAP_RES_SEARCH_ENTRY)
		return -1;
	q = body;
	if (!tlv_read_inline(&q, body + blen, &tag, &e->dn, &e->dnlen) ||
	    !tlv_read_inline(&q, body + blen, &tag, &e->attrs, &e->attrslen))
		return -1;
	e->type_lens = 0;
	return 0;
}

uint32_t entry_type_lens(const struct entry_view *e)
{
	uint32_t summary = ATTR_TYPES_KNOWN;
	const unsigned char *p = e->attrs, *end = e->attrs + e->attrslen, *body, *t;
	size_t blen, tlen;
	unsigned char tag;
	while (p < end) {
		if (!tlv_read_inline(&p, end, &tag, &body, &blen))
			return 0;
		const unsigned char *q = body; /* the attribute's SEQUENCE: its type first */
		if (!tlv_read_inline(&q, body + blen, &tag, &t, &tlen))
			return 0;
		attr_types_add(&summary, (const char *)t, tlen);
	}
	return summary;
}

int entry_encode(struct buf *out, entry_id parent, const unsigned char *key, size_t keylen,
                 const struct berval *dn, LDAPMod **mods)
{
	static const unsigned char none[16];
	return entry_encode_uuid(out, parent, none, key, keylen, dn, mods);
}

void entry_uuid_format(const unsigned char u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
	         u[13], u[14], u[15]);
}

int entry_uuid_parse(const char *s, size_t len, unsigned char uuid[16])
{
	if (len != 36)
		return -1;
	int n = 0;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			continue;
		}
		int v = isdigit((unsigned char)s[i])   ? s[i] - '0'
		        : (s[i] >= 'a' && s[i] <= 'f') ? s[i] - 'a' + 10
		        : (s[i] >= 'A' && s[i] <= 'F') ? s[i] - 'A' + 10
		                                       : -1;
		if (v < 0)
			return -1;
		if (n % 2 == 0)
			uuid[n / 2] = (unsigned char)(v << 4);
		else
			uuid[n / 2] |= (unsigned char)v;
		n++;
	}
	return 0;
}

/* Writes a tag and a minimal length at *p, and moves *p past them. */
static void put_head(unsigned char **p, unsigned char tag, size_t len)
{
	*(*p)++ = tag;
	*p += tlv_put_len(*p, len);
}

/* Per mod: the attribute its values go into (owner: the first mod of its type, "cn" and
 * "commonName" once both are named cn, or -1 for entryUUID, kept in the record's header),
 * the length of its type, and the content length of its values. */
struct mod_shape {
	int owner;
	size_t tlen, vals;
};

/* Fills shape[0..n) for mods; a type is compared only with types of its length. */
static void attr_shapes(LDAPMod **mods, int n, struct mod_shape *shape)
{
	for (int i = 0; i < n; i++) {
		const char *t = mods[i]->mod_type;
		size_t tlen = strlen(t), vals = 0;
		int owner = tlen == 9 && strcasecmp(t, "entryUUID") == 0 ? -1 : i;
		for (int k = 0; k < i && owner == i; k++)
			if (shape[k].owner == k && shape[k].tlen == tlen &&
			    strcasecmp(mods[k]->mod_type, t) == 0)
				owner = k;
		for (int j = 0; mods[i]->mod_bvalues && mods[i]->mod_bvalues[j]; j++)
			vals += tlv_size(mods[i]->mod_bvalues[j]->bv_len);
		shape[i] = (struct mod_shape){owner, tlen, vals};
		if (owner >= 0 && owner != i)
			shape[owner].vals += vals;
	}
}

/* Writes at *p the values of attribute i: those of every mod it owns. */
static void attr_values(LDAPMod **mods, int n, const struct mod_shape *shape, int i,
                        unsigned char **p)
{
	for (int m = i; m < n; m++) {
		if (shape[m].owner != i)
			continue;
		for (int j = 0; mods[m]->mod_bvalues && mods[m]->mod_bvalues[j]; j++) {
			const struct berval *v = mods[m]->mod_bvalues[j];
			put_head(p, 0x04, v->bv_len);
			memcpy(*p, v->bv_val, v->bv_len);
			*p += v->bv_len;
		}
	}
}

/* Mods an entry has without an allocation for encode_op's shape array. */
#define ENCODE_MODS_ON_STACK 64

/*
 * The SearchResultEntry protocolOp, DER as liblber's ber_printf writes it with
 * LBER_USE_DER (minimal lengths), encoded by hand: one pass over mods for the lengths
 * and one writing. Returns 0, or -1 when out of memory or a length does not fit
 * 32 bits.
 */
static int encode_op(struct buf *out, const struct berval *dn, LDAPMod **mods)
{
	int n = 0;
	while (mods && mods[n])
		n++;
	struct mod_shape local[ENCODE_MODS_ON_STACK];
	struct mod_shape *shape =
	    n <= ENCODE_MODS_ON_STACK ? local : malloc((size_t)n * sizeof(*shape));
	if (!shape)
		return -1;
	attr_shapes(mods, n, shape);
	size_t list = 0;
	for (int i = 0; i < n; i++)
		if (shape[i].owner == i)
			list += tlv_size(tlv_size(shape[i].tlen) + tlv_size(shape[i].vals));
	size_t op = tlv_size(dn->bv_len) + tlv_size(list);
	int rc = -1;
	if (tlv_size(op) > UINT32_MAX || buf_reserve(out, tlv_size(op)) < 0)
		goto out;
	unsigned char *start = out->data + out->len, *p = start;
	put_head(&p, 0x64, op); /* [APPLICATION 4] */
	put_head(&p, 0x04, dn->bv_len);
	memcpy(p, dn->bv_val, dn->bv_len);
	p += dn->bv_len;
	put_head(&p, 0x30, list);
	for (int i = 0; i < n; i++) {
		if (shape[i].owner != i)
			continue;
		size_t tlen = shape[i].tlen;
		put_head(&p, 0x30, tlv_size(tlen) + tlv_size(shape[i].vals));
		put_head(&p, 0x04, tlen);
		memcpy(p, mods[i]->mod_type, tlen);
		p += tlen;
		put_head(&p, 0x31, shape[i].vals);
		attr_values(mods, n, shape, i, &p);
	}
	out->len += (size_t)(p - start);
	rc = 0;
out:
	if (shape != local)
		free(shape);
	return rc;
}

int entry_encode_uuid(struct buf *out, entry_id parent, const unsigned char uuid[16],
                      const unsigned char *key, size_t keylen, const struct berval *dn,
                      LDAPMod **mods)
{
	if (keylen > UINT16_MAX)
		return -1;
	uint16_t k = (uint16_t)keylen;
	size_t was = out->len;
	if (buf_append(out, &parent, 4) < 0 || buf_append(out, uuid, 16) < 0 ||
	    buf_append(out, &k, 2) < 0 || buf_append(out, key, keylen) < 0 ||
	    encode_op(out, dn, mods) < 0) {
		out->len = was;
		return -1;
	}
	return 0;
}
