/*
 * tests/integration/syncprobe.c: one refreshOnly LDAP Content Synchronization
 * (RFC 4533) search against a provider, with protocol/sync.c's request control,
 * and every sync value the provider sends back decoded by protocol/sync.c. For
 * sync_test.sh, which runs it against a real OpenLDAP slapd with syncprov.
 *
 *   syncprobe URI BINDDN PASSWORD BASE [COOKIE]
 *
 * Prints one line per message:
 *   entry DN state=add|modify|present|delete uuid=HEX entryUUID=same|differs|absent
 *   info newcookie|refreshDelete|refreshPresent|syncIdSet done=0|1 deletes=0|1 uuids=N
 *   id HEX                 (each UUID of a syncIdSet, after its info line)
 *   done rc=N cookie=TEXT deletes=0|1
 * and "error: ..." (exit 1) for anything not decodable or a failed search.
 */
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/sync.h"

static const char *const state_names[] = {"present", "add", "modify", "delete"};

static void hex(const unsigned char *u, char *out)
{
	for (int i = 0; i < SYNC_UUID_LEN; i++)
		sprintf(out + 2 * i, "%02x", u[i]);
}

/* entryUUID's text ("8-4-4-4-12") without dashes, lowercased, into out. */
static void uuid_text(const char *in, char *out)
{
	size_t n = 0;
	for (; *in && n < 2 * SYNC_UUID_LEN; in++)
		if (*in != '-')
			out[n++] = (char)(*in | 0x20);
	out[n] = '\0';
}

static int print_entry(LDAP *ld, LDAPMessage *m)
{
	LDAPControl **ctrls = NULL;
	char *dn = ldap_get_dn(ld, m);
	if (ldap_get_entry_controls(ld, m, &ctrls) != LDAP_SUCCESS) {
		printf("error: entry %s: no controls\n", dn);
		return -1;
	}
	LDAPControl *c = ldap_control_find(SYNC_STATE_OID, ctrls, NULL);
	enum sync_state state;
	const unsigned char *uuid;
	struct berval cookie;
	if (!c || sync_state_decode(&c->ldctl_value, &state, &uuid, &cookie) < 0) {
		printf("error: entry %s: %s\n", dn, c ? "bad sync state value" : "no sync state");
		return -1;
	}
	char got[2 * SYNC_UUID_LEN + 1], want[2 * SYNC_UUID_LEN + 1] = "";
	hex(uuid, got);
	struct berval **vals = ldap_get_values_len(ld, m, "entryUUID");
	if (vals && vals[0])
		uuid_text(vals[0]->bv_val, want);
	printf("entry %s state=%s uuid=%s entryUUID=%s\n", dn, state_names[state], got,
	       !want[0]                 ? "absent"
	       : strcmp(got, want) == 0 ? "same"
	                                : "differs");
	ldap_value_free_len(vals);
	ldap_controls_free(ctrls);
	ldap_memfree(dn);
	return 0;
}

static int print_info(LDAP *ld, LDAPMessage *m)
{
	char *oid = NULL;
	struct berval *data = NULL;
	struct sync_info info;
	int rc = ldap_parse_intermediate(ld, m, &oid, &data, NULL, 0);
	if (rc != LDAP_SUCCESS || !oid || strcmp(oid, SYNC_INFO_OID) != 0 || !data ||
	    sync_info_decode(data, &info) < 0) {
		printf("error: intermediate %s: not a decodable sync info\n", oid ? oid : "?");
		rc = -1;
	} else {
		static const char *const kinds[] = {"newcookie", "refreshDelete", "refreshPresent",
		                                    "syncIdSet"};
		printf("info %s done=%d deletes=%d uuids=%zu\n", kinds[info.kind],
		       info.refresh_done, info.refresh_deletes, info.n);
		for (size_t i = 0; i < info.n; i++) {
			char h[2 * SYNC_UUID_LEN + 1];
			hex(info.uuids[i], h);
			printf("id %s\n", h);
		}
		sync_info_free(&info);
		rc = 0;
	}
	ldap_memfree(oid);
	ber_bvfree(data);
	return rc;
}

static int print_done(LDAP *ld, LDAPMessage *m)
{
	int err = 0;
	LDAPControl **ctrls = NULL;
	if (ldap_parse_result(ld, m, &err, NULL, NULL, NULL, &ctrls, 0) != LDAP_SUCCESS) {
		printf("error: result not parsed\n");
		return -1;
	}
	LDAPControl *c = ldap_control_find(SYNC_DONE_OID, ctrls, NULL);
	struct berval cookie = {0, NULL};
	bool deletes = false;
	if (c && sync_done_decode(&c->ldctl_value, &cookie, &deletes) < 0) {
		printf("error: bad sync done value\n");
		return -1;
	}
	printf("done rc=%d cookie=%.*s deletes=%d\n", err, (int)cookie.bv_len,
	       cookie.bv_val ? cookie.bv_val : "", deletes);
	ldap_controls_free(ctrls);
	return err == LDAP_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: syncprobe URI BINDDN PASSWORD BASE [COOKIE]\n");
		return 2;
	}
	LDAP *ld = NULL;
	int v3 = LDAP_VERSION3;
	struct berval pw = {strlen(argv[3]), argv[3]};
	if (ldap_initialize(&ld, argv[1]) != LDAP_SUCCESS ||
	    ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3) != LDAP_SUCCESS ||
	    ldap_sasl_bind_s(ld, argv[2], LDAP_SASL_SIMPLE, &pw, NULL, NULL, NULL) !=
	        LDAP_SUCCESS) {
		printf("error: bind to %s failed\n", argv[1]);
		return 1;
	}
	struct berval cookie = {argc == 6 ? strlen(argv[5]) : 0, argc == 6 ? argv[5] : NULL};
	struct berval *value = NULL;
	LDAPControl *ctrl = NULL;
	if (sync_request_encode(SYNC_REFRESH_ONLY, &cookie, false, &value) < 0 ||
	    ldap_control_create(SYNC_REQUEST_OID, 1, value, 1, &ctrl) != LDAP_SUCCESS) {
		printf("error: sync request control not made\n");
		return 1;
	}
	LDAPControl *ctrls[] = {ctrl, NULL};
	char *attrs[] = {"*", "entryUUID", NULL};
	int msgid;
	if (ldap_search_ext(ld, argv[4], LDAP_SCOPE_SUBTREE, "(objectClass=*)", attrs, 0, ctrls,
	                    NULL, NULL, 0, &msgid) != LDAP_SUCCESS) {
		printf("error: search not sent\n");
		return 1;
	}
	int status = 0;
	for (bool done = false; !done && status == 0;) {
		LDAPMessage *m = NULL;
		struct timeval tv = {30, 0};
		int t = ldap_result(ld, msgid, LDAP_MSG_ONE, &tv, &m);
		switch (t) {
		case LDAP_RES_SEARCH_ENTRY:
			status = print_entry(ld, m);
			break;
		case LDAP_RES_INTERMEDIATE:
			status = print_info(ld, m);
			break;
		case LDAP_RES_SEARCH_RESULT:
			status = print_done(ld, m);
			done = true;
			break;
		default:
			printf("error: ldap_result %d\n", t);
			status = -1;
		}
		ldap_msgfree(m);
	}
	ldap_control_free(ctrl);
	ber_bvfree(value);
	ldap_unbind_ext_s(ld, NULL, NULL);
	return status == 0 ? 0 : 1;
}
