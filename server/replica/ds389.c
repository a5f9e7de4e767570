/* A 389 Directory Server provider: see ds389.h. */
#include "server/replica/ds389.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/sync.h"

/* UUIDs asked again in one search: a filter of about 5 KB. */
#define REFETCH_BATCH 100

long long ds389_decimal(const char *text, size_t len)
{
	if (len == 0 || len > 18)
		return -1;
	long long n = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -1;
		n = n * 10 + (text[i] - '0');
	}
	return n;
}

long long ds389_cookie(const char *cookie, size_t len)
{
	if (len >= 4 && strncasecmp(cookie, "rid=", 4) == 0)
		return -1;
	/* Two '#', a ':' before the first, and a change number (digits) after the last. */
	const char *first = memchr(cookie, '#', len);
	const char *last = NULL;
	for (size_t i = len; i > 0; i--)
		if (cookie[i - 1] == '#') {
			last = cookie + i - 1;
			break;
		}
	if (!first || last == first || !memchr(cookie, ':', (size_t)(first - cookie)))
		return -1;
	return ds389_decimal(last + 1, (size_t)(cookie + len - last - 1));
}

char **ds389_root_attrs(void)
{
	static char *const want[] = {"vendorName", "vendorVersion", "firstchangenumber",
	                             "lastchangenumber", NULL};
	return (char **)want;
}

/* The first value of attr in e as a change number into *n (-1 when none or not one). */
static void change_number(LDAP *ld, LDAPMessage *e, const char *attr, long long *n)
{
	struct berval **v = ldap_get_values_len(ld, e, attr);
	*n = v && v[0] ? ds389_decimal(v[0]->bv_val, v[0]->bv_len) : -1;
	ldap_value_free_len(v);
}

void ds389_root_parse(LDAP *ld, LDAPMessage *res, struct ds389_root *out)
{
	*out = (struct ds389_root){.first_change = -1, .last_change = -1};
	LDAPMessage *e = ldap_first_entry(ld, res);
	if (!e)
		return;
	out->answered = true;
	struct berval **v = ldap_get_values_len(ld, e, "vendorName");
	if (v && v[0])
		out->is389 |=
		    v[0]->bv_len == 11 && strncasecmp(v[0]->bv_val, "389 Project", 11) == 0;
	ldap_value_free_len(v);
	v = ldap_get_values_len(ld, e, "vendorVersion");
	if (v && v[0]) {
		out->is389 |=
		    v[0]->bv_len >= 14 && strncasecmp(v[0]->bv_val, "389-Directory/", 14) == 0;
		snprintf(out->version, sizeof(out->version), "%.*s", (int)v[0]->bv_len,
		         v[0]->bv_val);
	}
	ldap_value_free_len(v);
	change_number(ld, e, "firstchangenumber", &out->first_change);
	change_number(ld, e, "lastchangenumber", &out->last_change);
}

void ds389_read_root(LDAP *ld, int timeout_s, struct ds389_root *out)
{
	struct timeval t = {timeout_s, 0};
	LDAPMessage *res = NULL;
	*out = (struct ds389_root){.first_change = -1, .last_change = -1};
	if (ldap_search_ext_s(ld, "", LDAP_SCOPE_BASE, "(objectClass=*)", ds389_root_attrs(), 0,
	                      NULL, NULL, &t, 1, &res) == LDAP_SUCCESS)
		ds389_root_parse(ld, res, out);
	ldap_msgfree(res);
}

char **ds389_attrs(void)
{
	/* The names storage/entry_opattrs.h keeps that 389-ds has (its account lock, lockout,
	 * password expiry and the policy entry an account names among them: what a bind
	 * honours; its entryUUID plugin's value, which is not
	 * the nsUniqueId its Sync State controls name). */
	static char *const names[] = {"*",
	                              "createTimestamp",
	                              "modifyTimestamp",
	                              "creatorsName",
	                              "modifiersName",
	                              "nsAccountLock",
	                              "accountUnlockTime",
	                              "passwordExpirationTime",
	                              "passwordGraceUserTime",
	                              "pwdPolicySubentry",
	                              "nsUniqueId",
	                              "entryUUID",
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

/* The UUID of an answer's entry, from its nsUniqueId. False when it has none. */
static bool entry_uuid(LDAP *ld, LDAPMessage *e, unsigned char *uuid)
{
	struct berval **id = ldap_get_values_len(ld, e, "nsUniqueId");
	bool named = id && id[0] && parse_unique_id(id[0], uuid) == 0;
	ldap_value_free_len(id);
	return named;
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
	LDAPControl manage = {.ldctl_oid = LDAP_CONTROL_MANAGEDSAIT, .ldctl_iscritical = 0};
	LDAPControl *ctrls[] = {&manage, NULL};
	struct timeval t = {s->network_timeout + 25, 0};
	LDAPMessage *res = NULL;
	int rc = ldap_search_ext_s(ld, s->searchbase, syncrepl_ldap_scope(s), f, attrs, 0, ctrls,
	                           NULL, &t, 0, &res);
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
		char *dn = ldap_get_dn(ld, e);
		if (entry_uuid(ld, e, uuid) &&
		    dn) /* (else not an entry of the refresh: left alone) */
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

int ds389_list_ids(LDAP *ld, const struct syncrepl_conf *s, ds389_id_fn fn, void *arg, char *why,
                   size_t cap)
{
	static char *const attrs[] = {"nsUniqueId", NULL};
	LDAPControl manage = {.ldctl_oid = LDAP_CONTROL_MANAGEDSAIT, .ldctl_iscritical = 0};
	LDAPControl *ctrls[] = {&manage, NULL};
	int msgid = 0;
	int rc = ldap_search_ext(ld, s->searchbase, syncrepl_ldap_scope(s), s->filter,
	                         (char **)attrs, 0, ctrls, NULL, NULL, 0, &msgid);
	if (rc != LDAP_SUCCESS) {
		snprintf(why, cap, "listing the provider's entries: %s", ldap_err2string(rc));
		return -1;
	}
	/* Each message within the session's answer time; the whole bounded by the count. */
	struct timeval t = {s->network_timeout + 25, 0};
	for (;;) {
		LDAPMessage *m = NULL;
		int type = ldap_result(ld, msgid, LDAP_MSG_ONE, &t, &m);
		if (type <= 0) {
			ldap_msgfree(m);
			if (type == 0)
				ldap_abandon_ext(ld, msgid, NULL, NULL);
			snprintf(why, cap, "listing the provider's entries: %s",
			         type == 0 ? "no answer in time" : "connection lost");
			return -1;
		}
		if (type == LDAP_RES_SEARCH_ENTRY) {
			unsigned char uuid[SYNC_UUID_LEN];
			int status = 0;
			if (!entry_uuid(ld, m, uuid)) {
				char *dn = ldap_get_dn(ld, m);
				snprintf(why, cap,
				         "listing the provider's entries: %.300s has no "
				         "nsUniqueId",
				         dn ? dn : "?");
				ldap_memfree(dn);
				status = -1;
			} else {
				status = fn(arg, uuid, why, cap);
			}
			ldap_msgfree(m);
			if (status < 0) {
				ldap_abandon_ext(ld, msgid, NULL, NULL);
				return -1;
			}
			continue;
		}
		if (type != LDAP_RES_SEARCH_RESULT) {
			ldap_msgfree(m);
			continue; /* a reference: not an entry of the replica */
		}
		int err = LDAP_OTHER;
		ldap_parse_result(ld, m, &err, NULL, NULL, NULL, NULL, 1);
		if (err != LDAP_SUCCESS) {
			snprintf(why, cap, "listing the provider's entries: %s (%d)%s",
			         ldap_err2string(err), err,
			         err == LDAP_SIZELIMIT_EXCEEDED
			             ? ": the binddn needs no size limit (nsSizeLimit: -1)"
			             : "");
			return -1;
		}
		return 0;
	}
}
