#include "protocol/dn.h"

#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/match.h"

static int ava_cmp(const void *a, const void *b)
{
	const LDAPAVA *x = *(LDAPAVA *const *)a, *y = *(LDAPAVA *const *)b;
	size_t n = x->la_attr.bv_len < y->la_attr.bv_len ? x->la_attr.bv_len : y->la_attr.bv_len;
	int c = memcmp(x->la_attr.bv_val, y->la_attr.bv_val, n);
	if (c)
		return c;
	if (x->la_attr.bv_len != y->la_attr.bv_len)
		return x->la_attr.bv_len < y->la_attr.bv_len ? -1 : 1;
	/* Same type twice (cn=a+cn=b): order by value. */
	n = x->la_value.bv_len < y->la_value.bv_len ? x->la_value.bv_len : y->la_value.bv_len;
	c = memcmp(x->la_value.bv_val, y->la_value.bv_val, n);
	if (c)
		return c;
	return (x->la_value.bv_len > y->la_value.bv_len) -
	       (x->la_value.bv_len < y->la_value.bv_len);
}

/* Rewrites every AVA of dn in its normal form (see dn.h). */
static int normalize_avas(LDAPDN dn)
{
	struct buf tmp = {0};
	for (int i = 0; dn[i]; i++) {
		LDAPRDN rdn = dn[i];
		int navas = 0;
		for (; rdn[navas]; navas++) {
			LDAPAVA *ava = rdn[navas];
			match_lower(ava->la_attr.bv_val, ava->la_attr.bv_len);
			if (ava->la_flags & LDAP_AVA_BINARY)
				continue; /* #hex form: kept as given */
			tmp.len = 0;
			enum match_rule rule =
			    match_rule_for(ava->la_attr.bv_val, ava->la_attr.bv_len);
			if (rule == MATCH_DN)
				rule = MATCH_CASE_IGNORE;
			if (match_normalize(rule, ava->la_value.bv_val, ava->la_value.bv_len,
			                    &tmp) < 0) {
				buf_free(&tmp);
				return -1;
			}
			/* Normal forms are never longer, so rewriting in place is safe. */
			memcpy(ava->la_value.bv_val, tmp.data, tmp.len);
			ava->la_value.bv_len = tmp.len;
		}
		if (navas > 1)
			qsort(rdn, (size_t)navas, sizeof(rdn[0]), ava_cmp);
	}
	buf_free(&tmp);
	return 0;
}

int dn_normalize(const char *dn, size_t len, struct buf *ndn, struct buf *key)
{
	if (len == 0)
		return 0; /* the root DSE: empty normal form, empty key */
	/* libldap may point AVAs into its input; give it a copy we may rewrite. */
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, dn, len);
	copy[len] = '\0';
	struct berval in = {len, copy};
	LDAPDN parsed = NULL;
	int rc = -1;
	if (memchr(dn, '\0', len) ||
	    ldap_bv2dn(&in, &parsed, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
		goto out;
	if (!parsed || normalize_avas(parsed) < 0)
		goto out;
	size_t ndn_len0 = ndn ? ndn->len : 0, key_len0 = key ? key->len : 0;
	if (ndn) {
		struct berval bv = {0, NULL};
		if (ldap_dn2bv(parsed, &bv, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
			goto out;
		int r = buf_append(ndn, bv.bv_val, bv.bv_len);
		ldap_memfree(bv.bv_val);
		if (r < 0)
			goto out;
	}
	if (key) {
		int n = 0;
		while (parsed[n])
			n++;
		for (int i = n - 1; i >= 0; i--) {
			struct berval bv = {0, NULL};
			if (ldap_rdn2bv(parsed[i], &bv, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
				goto undo;
			int r = buf_append(key, bv.bv_val, bv.bv_len);
			ldap_memfree(bv.bv_val);
			if (r < 0 || buf_append(key, "", 1) < 0)
				goto undo;
		}
	}
	rc = 0;
	goto out;
undo:
	if (ndn)
		ndn->len = ndn_len0;
	key->len = key_len0;
out:
	if (parsed)
		ldap_dnfree(parsed);
	free(copy);
	return rc;
}

size_t dn_key_parent_len(const unsigned char *key, size_t len)
{
	if (len == 0)
		return 0;
	size_t i = len - 1; /* key[len-1] is the last RDN's terminator */
	while (i > 0 && key[i - 1] != '\0')
		i--;
	return i;
}

int dn_key_in_subtree(const unsigned char *key, size_t len, const unsigned char *base, size_t blen)
{
	return len >= blen && memcmp(key, base, blen) == 0;
}
