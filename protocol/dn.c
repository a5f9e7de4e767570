#include "protocol/dn.h"

#include <ldap.h>
#include <stdbool.h>
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

/* The rule an AVA's value is normalized with: its type's equality rule (AT, or by the
 * lowercased TYPE without a schema), caseIgnoreMatch where that is none or a DN rule. */
static enum match_rule ava_rule(const struct schema_attr *at, const char *type, size_t len)
{
	enum match_rule rule = at ? at->eq : value_rule_for(type, len);
	return rule == MATCH_DN || rule == MATCH_NONE ? MATCH_CASE_IGNORE : rule;
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
			    ava_rule(at, ava->la_attr.bv_val, ava->la_attr.bv_len);
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

/*
 * The plain DN, what nearly every request names ("uid=user.1,ou=people,dc=example,dc=com"):
 * RDNs of one AVA each, joined by bare commas, each a letter-led type of letters, digits
 * and hyphens and a value of letters, digits, inner spaces and ".-_@". Such text is its
 * own parse (RFC 4514 escapes none of it), so it is normalized here without libldap's
 * parser and its allocations, with the same rules as normalize_avas (a unit test checks
 * both ways agree). Returns 1 (done, as dn_normalize), 0 (not plain: nothing appended),
 * -1 (invalid: nothing appended).
 */
#define PLAIN_MAX_RDNS 32

static bool plain_type_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

static bool plain_value_char(char c)
{
	return plain_type_char(c) || c == ' ' || c == '.' || c == '_' || c == '@';
}

/* Where pending byte P of b is (buf_reserve may compact b, moving its bytes down). */
#define AT_PENDING(b, p) ((b)->data + (b)->off + (p))

/* Appends the AVA type[0..tlen)=value[0..vlen) in normal form to out, after a comma
 * unless it is the first; *rdn_at: where the RDN starts (pending bytes before it). */
static int append_plain_ava(struct buf *out, bool first, const char *type, size_t tlen,
                            const char *value, size_t vlen, size_t *rdn_at)
{
	const struct schema_attr *at = schema_attr_find(type, tlen);
	if (!at && schema_loaded())
		return -1; /* an attribute type the schema does not define */
	const char *name = at ? at->name : type;
	size_t nlen = at ? strlen(at->name) : tlen;
	/* One reservation for all of it: a value's normal form is never longer than it. */
	if (buf_reserve(out, 1 + nlen + 1 + vlen) < 0)
		return -1;
	char *p = (char *)out->data + out->len;
	if (!first)
		*p++ = ',';
	*rdn_at = buf_pending(out) + !first;
	memcpy(p, name, nlen);
	value_lower(p, nlen);
	p[nlen] = '=';
	out->len += !first + nlen + 1;
	return value_normalize(ava_rule(at, p, nlen), value, vlen, out);
}

static int normalize_plain(const char *dn, size_t len, struct buf *ndn, struct buf *key)
{
	struct buf *out = ndn ? ndn : key; /* the forward form; in key only as scratch */
	size_t start = buf_pending(out), rdn_at[PLAIN_MAX_RDNS], rdn_len[PLAIN_MAX_RDNS];
	int n = 0, rc = 1;
	for (size_t i = 0; rc == 1;) {
		size_t t = i;
		while (i < len && plain_type_char(dn[i]))
			i++;
		size_t tlen = i - t, v = i + 1;
		if (tlen == 0 || !plain_type_char(dn[t]) || (dn[t] >= '0' && dn[t] <= '9') ||
		    dn[t] == '-' || i >= len || dn[i] != '=' || n == PLAIN_MAX_RDNS) {
			rc = 0;
			break;
		}
		for (i = v; i < len && plain_value_char(dn[i]);)
			i++;
		if (i == v || dn[v] == ' ' || dn[i - 1] == ' ' || (i < len && dn[i] != ',')) {
			rc = 0;
			break;
		}
		if (append_plain_ava(out, n == 0, dn + t, tlen, dn + v, i - v, &rdn_at[n]) < 0) {
			rc = -1;
			break;
		}
		rdn_len[n] = buf_pending(out) - rdn_at[n];
		n++;
		if (i == len)
			break;
		i++; /* the comma */
		if (i == len)
			rc = 0; /* a trailing comma: libldap's to judge */
	}
	size_t forward = buf_pending(out) - start, klen = 0;
	for (int j = 0; j < n; j++)
		klen += rdn_len[j] + 1;
	if (rc == 1 && key && buf_reserve(key, klen) < 0)
		rc = -1;
	if (rc != 1) {
		out->len = out->off + start;
		return rc;
	}
	if (!key)
		return 1;
	/* The key: the RDNs from the root down, each with its NUL, after what key holds
	 * (after the forward form when that is in key too, then moved down over it). */
	unsigned char *k = key->data + key->len;
	for (int j = n - 1; j >= 0; j--) {
		memcpy(k, AT_PENDING(out, rdn_at[j]), rdn_len[j]);
		k[rdn_len[j]] = '\0';
		k += rdn_len[j] + 1;
	}
	if (out == key) {
		memmove(key->data + key->len - forward, key->data + key->len, klen);
		key->len -= forward;
	}
	key->len += klen;
	return 1;
}

int dn_normalize(const char *dn, size_t len, struct buf *ndn, struct buf *key)
{
	if (len == 0)
		return 0;       /* the root DSE: empty normal form, empty key */
	struct buf check = {0}; /* the forward form when only validity is asked */
	int plain = normalize_plain(dn, len, ndn || key ? ndn : &check, key);
	buf_free(&check);
	if (plain != 0)
		return plain < 0 ? -1 : 0;
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

int dn_key_normal(const unsigned char *key, size_t len, struct buf *ndn)
{
	size_t len0 = ndn->len;
	/* Each RDN ends with its NUL; from the last one back to the first. */
	for (size_t end = len; end > 0;) {
		size_t start = end - 1;
		while (start > 0 && key[start - 1] != '\0')
			start--;
		if ((ndn->len > len0 && buf_append(ndn, ",", 1) < 0) ||
		    buf_append(ndn, key + start, end - 1 - start) < 0) {
			ndn->len = len0;
			return -1;
		}
		end = start;
	}
	return 0;
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
