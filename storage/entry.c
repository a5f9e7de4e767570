#include "storage/entry.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
	if (!tlv_read(&p, end, &tag, &body, &blen) || tag != LDAP_RES_SEARCH_ENTRY)
		return -1;
	q = body;
	if (!tlv_read(&q, body + blen, &tag, &e->dn, &e->dnlen) ||
	    !tlv_read(&q, body + blen, &tag, &e->attrs, &e->attrslen))
		return -1;
	return 0;
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

/* True if a mod before mods[i] has the same type. */
static bool seen_before(LDAPMod **mods, int i)
{
	for (int k = 0; k < i; k++)
		if (strcasecmp(mods[k]->mod_type, mods[i]->mod_type) == 0)
			return true;
	return false;
}

int entry_encode_uuid(struct buf *out, entry_id parent, const unsigned char uuid[16],
                      const unsigned char *key, size_t keylen, const struct berval *dn,
                      LDAPMod **mods)
{
	if (keylen > UINT16_MAX)
		return -1;
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return -1;
	int rc = -1;
	struct berval *flat = NULL;
	if (ber_printf(ber, "t{O{", (ber_tag_t)LDAP_RES_SEARCH_ENTRY, dn) < 0)
		goto out;
	for (int i = 0; mods && mods[i]; i++) {
		if (strcasecmp(mods[i]->mod_type, "entryUUID") == 0 || seen_before(mods, i))
			continue; /* entryUUID is kept in the record header */
		if (ber_printf(ber, "{s[", mods[i]->mod_type) < 0)
			goto out;
		/* One attribute per type: later mods of the same type ("cn" and "commonName"
		 * once both are named cn) add their values here. */
		for (int m = i; mods[m]; m++) {
			if (m != i && strcasecmp(mods[m]->mod_type, mods[i]->mod_type) != 0)
				continue;
			for (int j = 0; mods[m]->mod_bvalues && mods[m]->mod_bvalues[j]; j++)
				if (ber_printf(ber, "O", mods[m]->mod_bvalues[j]) < 0)
					goto out;
		}
		if (ber_printf(ber, "]}") < 0)
			goto out;
	}
	if (ber_printf(ber, "}}") < 0 || ber_flatten(ber, &flat) < 0)
		goto out;
	uint16_t k = (uint16_t)keylen;
	if (buf_append(out, &parent, 4) < 0 || buf_append(out, uuid, 16) < 0 ||
	    buf_append(out, &k, 2) < 0 || buf_append(out, key, keylen) < 0 ||
	    buf_append(out, flat->bv_val, flat->bv_len) < 0)
		goto out;
	rc = 0;
out:
	ber_bvfree(flat);
	ber_free(ber, 1);
	return rc;
}
