/* What an Active Directory DC says of itself: see ad_dc.h. */
#include "server/replica/ad_dc.h"
#include "server/replica/ds389.h"

#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first value of type attr of the base object at dn (attrs: {attr, ...}) into *out
 * (the caller's to ldap_value_free_len), the whole entry's message in *res (the caller's
 * to ldap_msgfree); NULL when none. */
static struct berval **base_values(struct replica *r, const char *dn, char **attrs,
                                   const char *attr, LDAPMessage **res)
{
	struct timeval t = {r->conf->network_timeout + 25, 0};
	*res = NULL;
	if (ldap_search_ext_s(r->ld, dn, LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, NULL, NULL,
	                      &t, 1, res) != LDAP_SUCCESS)
		return NULL;
	LDAPMessage *e = ldap_first_entry(r->ld, *res);
	struct berval **v = e ? ldap_get_values_len(r->ld, e, attr) : NULL;
	if (v && !v[0]) {
		ldap_value_free_len(v);
		v = NULL;
	}
	return v;
}

/* The invocationId of the NTDS Settings object at dn as text into out, or "". */
static void invocation_id(struct replica *r, const char *dn, char *out, size_t cap)
{
	static char *attrs[] = {"invocationId", NULL};
	LDAPMessage *res;
	struct berval **v = base_values(r, dn, attrs, attrs[0], &res);
	const unsigned char *g = v ? (const unsigned char *)v[0]->bv_val : NULL;
	out[0] = '\0';
	if (g && v[0]->bv_len == 16)
		snprintf(out, cap,
		         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		         g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11],
		         g[12], g[13], g[14], g[15]);
	ldap_value_free_len(v);
	ldap_msgfree(res);
}

long long ad_dc_usn(struct replica *r, char *invocation, size_t cap)
{
	static char *attrs[] = {"highestCommittedUSN", "dsServiceName", NULL};
	LDAPMessage *res;
	struct berval **v = base_values(r, "", attrs, attrs[0], &res);
	long long usn = v ? ds389_decimal(v[0]->bv_val, v[0]->bv_len) : -1;
	ldap_value_free_len(v);
	if (invocation) {
		LDAPMessage *e = res ? ldap_first_entry(r->ld, res) : NULL;
		struct berval **s = e ? ldap_get_values_len(r->ld, e, attrs[1]) : NULL;
		char *dn = s && s[0] ? strndup(s[0]->bv_val, s[0]->bv_len) : NULL;
		invocation[0] = '\0';
		if (dn)
			invocation_id(r, dn, invocation, cap);
		free(dn);
		ldap_value_free_len(s);
	}
	ldap_msgfree(res);
	return usn;
}
