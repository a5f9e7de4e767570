/*
 * The DN a SASL bind's identity binds as (server/net/sasl.h), as slapd makes it: the
 * authentication DN uid=USER,cn=REALM,cn=MECH,cn=auth (cn=REALM left out when the session
 * names no realm), then the first authz_regexp rule (conf/config.h) whose expression
 * matches its normal form, its replacement with $0-$9 filled in: the DN it binds as, or
 * an LDAP URL whose search finds it (authz_url.h); no rule matches: the authentication DN
 * itself.
 *
 * Owns: the compiled rules (authz_map_compile to authz_map_free), read by every worker
 * (regexec on a compiled expression is thread-safe). Fails: out of memory, a replacement
 * that is not a DN (logged once per rule).
 */
#ifndef MINIDIR_SERVER_OPS_AUTHZ_MAP_H
#define MINIDIR_SERVER_OPS_AUTHZ_MAP_H

#include "protocol/buf.h"

struct config;
struct authz_rules;

/* cfg's authz_regexp rules compiled into *out (NULL: none). Returns 0, or -1 (logged: an
 * expression that does not compile, out of memory). */
int authz_map_compile(const struct config *cfg, struct authz_rules **out);
void authz_map_free(struct authz_rules *r);

/*
 * The authentication DN of user in realm (NULL: none) for mechanism mech ("gssapi"), its
 * normal form appended to authdn (the caller's). Returns 0, or -1 (not a DN: a name with
 * bytes a DN cannot hold; out of memory).
 */
int authz_auth_dn(const char *user, const char *realm, const char *mech, struct buf *authdn);

/* What authz_map made of an authentication DN. */
enum authz_mapped {
	AUTHZ_UNMAPPED, /* no rule matched */
	AUTHZ_TO_DN,    /* the replacement is a DN (not checked here) */
	AUTHZ_TO_URL,   /* the replacement is an LDAP URL (authz_url_search) */
};

/*
 * The first rule's replacement for the authentication DN authdn (a normal form), with the
 * match's groups filled in, appended to out (the caller's) and NUL-terminated. Returns an
 * enum authz_mapped, or -1 (out of memory).
 */
int authz_map(const struct authz_rules *rules, const struct buf *authdn, struct buf *out);

#endif
