/* A 389 Directory Server provider: see ds389.h. */
#include "server/replica/ds389.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/sync.h"

/* UUIDs asked again in one search: a filter of about 5 KB. */
#define REFETCH_BATCH 100

bool ds389_cookie(const char *cookie, size_t len)
{
	if (len >= 4 && strncasecmp(cookie, "rid=", 4) == 0)
		return false;
	/* Two '#', a ':' before the first, and a change number (digits) after the last. */
	const char *first = memchr(cookie, '#', len);
	const char *last = NULL;
	for (size_t i = len; i > 0; i--)
		if (cookie[i - 1] == '#') {
			last = cookie + i - 1;
			break;
		}
	if (!first || last == first || !memchr(cookie, ':', (size_t)(first - cookie)))
		return false;
	const char *end = cookie + len;
	if (last + 1 == end)
		return false;
	for (const char *p = last + 1; p < end; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

bool ds389_detect(LDAP *ld, int timeout_s, const char *cookie, size_t len, char *version,
                  size_t cap)
{
	static char *const want[] = {"vendorName", "vendorVersion", NULL};
	struct timeval t = {timeout_s, 0};
	LDAPMessage *res = NULL;
	bool is389 = false, answered = false;
	version[0] = '\0';
	if (ldap_search_ext_s(ld, "", LDAP_SCOPE_BASE, "(objectClass=*)", (char **)want, 0, NULL,
	                      NULL, &t, 1, &res) == LDAP_SUCCESS) {
		LDAPMessage *e = ldap_first_entry(ld, res);
		for (int i = 0; e && want[i]; i++) {
			struct berval **v = ldap_get_values_len(ld, e, want[i]);
			if (v && v[0]) {
				answered = true;
				const struct berval *b = v[0];
				if (i == 0)
					is389 |= b->bv_len == 11 &&
					         strncasecmp(b->bv_val, "389 Project", 11) == 0;
				else {
					is389 |= b->bv_len >= 14 &&
					         strncasecmp(b->bv_val, "389-Directory/", 14) == 0;
					snprintf(version, cap, "%.*s", (int)b->bv_len, b->bv_val);
				}
			}
			ldap_value_free_len(v);
		}
	}
	ldap_msgfree(res);
	return answered ? is389 : ds389_cookie(cookie, len);
}

char **ds389_attrs(void)
{
	/* The names storage/entry_opattrs.h keeps that 389-ds has (its account lock and
	 * lockout among them: what a bind honours). */
	static char *const names[] = {"*",
	                              "createTimestamp",
	                              "modifyTimestamp",
	                              "creatorsName",
	                              "modifiersName",
	                              "nsAccountLock",
	                              "accountUnlockTime",
	                              NULL};
	return (char **)names;
}

/* nsUniqueId's form of a UUID: 8-8-8-8 hexadecimal digits (72f0ffb2-f1b411f1-...). */
static void unique_id(const unsigned char *uuid, char out[36])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;
	for (int i = 0; i < SYNC_UUID_LEN; i++) {
		if (i && i % 4 == 0)
			*p++ = '-';
		*p++ = hex[uuid[i] >> 4];
		*p++ = hex[uuid[i] & 15];
	}
	*p = '\0';
}

/* The UUID of an nsUniqueId value; -1 when it is not one. */
static int parse_unique_id(const struct berval *v, unsigned char *uuid)
{
	int n = 0;
	for (ber_len_t i = 0; i < v->bv_len; i++) {
		char c = v->bv_val[i];
		if (c == '-')
			continue;
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0 || n == 2 * SYNC_UUID_LEN)
			return -1;
		if (n % 2 == 0)
			uuid[n / 2] = (unsigned char)(d << 4);
		else
			uuid[n / 2] |= (unsigned char)d;
		n++;
	}
	return n == 2 * SYNC_UUID_LEN ? 0 : -1;
}

/* One search for uuids[0..n): 0, or -1 with why set. */
static int refetch_batch(LDAP *ld, const struct syncrepl_conf *s, char **search_attrs,
                         const unsigned char *uuids, size_t n, ds389_store_fn store, void *arg,
                         char *why, size_t cap)
{
	/* The session's filter (with the parentheses libldap lets it go without) and the
	 * nsUniqueIds. */
	bool bare = s->filter[0] != '(';
	size_t fcap = strlen(s->filter) + n * 50 + 16, off;
	char *f = malloc(fcap);
	if (!f) {
		snprintf(why, cap, "out of memory asking again for changed entries");
		return -1;
	}
	off = (size_t)snprintf(f, fcap, "(&%s%s%s(|", bare ? "(" : "", s->filter, bare ? ")" : "");
	for (size_t i = 0; i < n; i++) {
		char id[36];
		unique_id(uuids + i * SYNC_UUID_LEN, id);
		off += (size_t)snprintf(f + off, fcap - off, "(nsUniqueId=%s)", id);
	}
	snprintf(f + off, fcap - off, "))");
	/* The attributes of the sync search, and nsUniqueId to name each answer. */
	char *attrs[72];
	int na = 0;
	for (char **a = search_attrs; a && *a && na < 70; a++)
		attrs[na++] = *a;
	attrs[na++] = "nsUniqueId";
	attrs[na] = NULL;
	static const int scopes[] = {LDAP_SCOPE_BASE, LDAP_SCOPE_ONELEVEL, LDAP_SCOPE_SUBTREE,
	                             LDAP_SCOPE_SUBORDINATE};
	LDAPControl manage = {.ldctl_oid = LDAP_CONTROL_MANAGEDSAIT, .ldctl_iscritical = 0};
	LDAPControl *ctrls[] = {&manage, NULL};
	struct timeval t = {s->network_timeout + 25, 0};
	LDAPMessage *res = NULL;
	int rc = ldap_search_ext_s(ld, s->searchbase, scopes[s->scope], f, attrs, 0, ctrls, NULL,
	                           &t, 0, &res);
	free(f);
	if (rc != LDAP_SUCCESS && rc != LDAP_NO_SUCH_OBJECT) {
		snprintf(why, cap,
		         "asking again for %zu changed entries (their operational "
		         "attributes): %s",
		         n, ldap_err2string(rc));
		ldap_msgfree(res);
		return -1;
	}
	int status = 0;
	for (LDAPMessage *e = ldap_first_entry(ld, res); e && status == 0;
	     e = ldap_next_entry(ld, e)) {
		unsigned char uuid[SYNC_UUID_LEN];
		struct berval **id = ldap_get_values_len(ld, e, "nsUniqueId");
		bool named = id && id[0] && parse_unique_id(id[0], uuid) == 0;
		ldap_value_free_len(id);
		char *dn = ldap_get_dn(ld, e);
		if (named && dn) /* (else not an entry of the refresh: left alone) */
			status = store(arg, e, uuid, dn, why, cap);
		ldap_memfree(dn);
	}
	ldap_msgfree(res);
	return status;
}

int ds389_refetch(LDAP *ld, const struct syncrepl_conf *s, char **attrs, const unsigned char *uuids,
                  size_t n, ds389_store_fn store, void *arg, char *why, size_t cap)
{
	int status = 0;
	for (size_t i = 0; i < n && status == 0; i += REFETCH_BATCH)
		status = refetch_batch(ld, s, attrs, uuids + i * SYNC_UUID_LEN,
		                       n - i < REFETCH_BATCH ? n - i : REFETCH_BATCH, store, arg,
		                       why, cap);
	return status;
}
