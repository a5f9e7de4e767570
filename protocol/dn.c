#include "protocol/dn.h"

#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/schema.h"
#include "protocol/value.h"

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
	/* libldap gives an empty value at the end of the DN a NULL pointer: no memcmp then. */
	n = x->la_value.bv_len < y->la_value.bv_len ? x->la_value.bv_len : y->la_value.bv_len;
	c = n ? memcmp(x->la_value.bv_val, y->la_value.bv_val, n) : 0;
	if (c)
		return c;
	return (x->la_value.bv_len > y->la_value.bv_len) -
	       (x->la_value.bv_len < y->la_value.bv_len);
}

/*
 * Attribute names longer than what libldap parsed ("gn" -> "givenname"). libldap
 * keeps la_attr inside the AVA's own allocation and ldap_dnfree never frees a
 * separate one (it ignores LDAP_AVA_FREE_ATTR), so these belong to dn_normalize:
 * a list freed after the parsed DN.
 */
struct attr_mem {
	struct attr_mem *next;
	char text[];
};

static void attr_mem_free(struct attr_mem *m)
{
	while (m) {
		struct attr_mem *next = m->next;
		free(m);
		m = next;
	}
}

/* Points ava's type at name (lowercased), in memory of *owned when it is longer. */
static int replace_attr(LDAPAVA *ava, const char *name, struct attr_mem **owned)
{
	size_t len = strlen(name);
	if (len > ava->la_attr.bv_len) {
		struct attr_mem *m = malloc(sizeof(*m) + len + 1);
		if (!m)
			return -1;
		m->next = *owned;
		*owned = m;
		ava->la_attr.bv_val = m->text;
	}
	memcpy(ava->la_attr.bv_val, name, len);
	ava->la_attr.bv_val[len] = '\0';
	ava->la_attr.bv_len = len;
	value_lower(ava->la_attr.bv_val, len);
	return 0;
}

/* Puts text[0..len) into the AVA's value: in place when it fits, else in memory libldap frees. */
static int replace_value(LDAPAVA *ava, const void *text, size_t len)
{
	struct berval *bv = &ava->la_value;
	if (len > bv->bv_len) {
		char *mem = ber_memalloc(len + 1);
		if (!mem)
			return -1;
		if (ava->la_flags & LDAP_AVA_FREE_VALUE)
			ber_memfree(bv->bv_val);
		mem[len] = '\0';
		bv->bv_val = mem;
		ava->la_flags |= LDAP_AVA_FREE_VALUE; /* ldap_dnfree frees the value */
	}
	if (len)
		memcpy(bv->bv_val, text, len);
	bv->bv_len = len;
	return 0;
}

/*
 * Rewrites every AVA of dn in its normal form (see dn.h): the attribute type as
 * the schema's name, lowercased ("2.5.4.11" and "organizationalUnitName" are
 * "ou"), the value in the normal form of the type's equality rule.
 */
static int normalize_avas(LDAPDN dn, struct attr_mem **owned)
{
	struct buf tmp = {0};
	int rc = 0;
	for (int i = 0; dn[i] && rc == 0; i++) {
		LDAPRDN rdn = dn[i];
		int navas = 0;
		for (; rdn[navas] && rc == 0; navas++) {
			LDAPAVA *ava = rdn[navas];
			const struct schema_attr *at =
			    schema_attr_find(ava->la_attr.bv_val, ava->la_attr.bv_len);
			if (!at && schema_loaded()) {
				rc = -1; /* an attribute type the schema does not define */
				break;
			}
			if (at && replace_attr(ava, at->name, owned) < 0) {
				rc = -1;
				break;
			}
			if (!at)
				value_lower(ava->la_attr.bv_val, ava->la_attr.bv_len);
			if (ava->la_flags & LDAP_AVA_BINARY)
				continue; /* #hex form: kept as given */
			enum match_rule rule =
			    at ? at->eq : value_rule_for(ava->la_attr.bv_val, ava->la_attr.bv_len);
			if (rule == MATCH_DN || rule == MATCH_NONE)
				rule = MATCH_CASE_IGNORE;
			tmp.len = 0;
			if (value_normalize(rule, ava->la_value.bv_val, ava->la_value.bv_len,
			                    &tmp) < 0 ||
			    replace_value(ava, tmp.data, tmp.len) < 0)
				rc = -1;
		}
		if (rc == 0 && navas > 1)
			qsort(rdn, (size_t)navas, sizeof(rdn[0]), ava_cmp);
	}
	buf_free(&tmp);
	return rc;
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
	struct attr_mem *owned = NULL;
	int rc = -1;
	if (memchr(dn, '\0', len) ||
	    ldap_bv2dn(&in, &parsed, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
		goto out;
	if (!parsed || normalize_avas(parsed, &owned) < 0)
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
	attr_mem_free(owned);
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
	return blen == 0 || (len >= blen && memcmp(key, base, blen) == 0); /* "" may be NULL */
}
