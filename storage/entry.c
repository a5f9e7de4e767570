#include "storage/entry.h"

#include <string.h>

int entry_parse(const void *data, size_t len, struct entry_view *e)
{
	const unsigned char *p = data, *end = p + len;
	uint16_t klen;
	if (len < 6)
		return -1;
	memcpy(&e->parent, p, 4);
	memcpy(&klen, p + 4, 2);
	p += 6;
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
		if (ber_printf(ber, "{s[", mods[i]->mod_type) < 0)
			goto out;
		for (int j = 0; mods[i]->mod_bvalues && mods[i]->mod_bvalues[j]; j++)
			if (ber_printf(ber, "O", mods[i]->mod_bvalues[j]) < 0)
				goto out;
		if (ber_printf(ber, "]}") < 0)
			goto out;
	}
	if (ber_printf(ber, "}}") < 0 || ber_flatten(ber, &flat) < 0)
		goto out;
	uint16_t k = (uint16_t)keylen;
	if (buf_append(out, &parent, 4) < 0 || buf_append(out, &k, 2) < 0 ||
	    buf_append(out, key, keylen) < 0 || buf_append(out, flat->bv_val, flat->bv_len) < 0)
		goto out;
	rc = 0;
out:
	ber_bvfree(flat);
	ber_free(ber, 1);
	return rc;
}
