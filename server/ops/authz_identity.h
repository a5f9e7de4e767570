/*
 * Who a SASL bind binds as (op_bind_sasl.c): the DN of the user a mechanism
 * authenticated, through authz_regexp (authz_map.h, authz_url.h), and, when the client
 * names an authorization identity to act as (RFC 4513 5.2.1.8: "dn:DN" or "u:USER"),
 * whether it may: under authz_policy = to, when a value of the authenticated entry's
 * authzTo allows the identity asked for, in slapd's forms:
 *
 *   dn:DN, dn.exact:DN, dn.base:DN           that DN
 *   dn.onelevel:DN, dn.children:DN           an entry just below it / anywhere below it
 *   dn.subtree:DN                            it, or anywhere below it
 *   dn.regex:RE                              a DN whose normal form RE matches (extended,
 *                                            without case)
 *   u:USER                                   the DN user USER binds as (as above)
 *
 * Other values (an LDAP URL, a group) allow nothing here. Under authz_policy = none
 * nothing is allowed, as slapd's default.
 *
 * Runs on c's worker; reads the directory in its read transaction (begun and ended here).
 */
#ifndef MINIDIR_SERVER_OPS_AUTHZ_IDENTITY_H
#define MINIDIR_SERVER_OPS_AUTHZ_IDENTITY_H

#include <stdbool.h>

#include "protocol/buf.h"

struct conn;

/*
 * The DN user (as the mechanism names it: "alice", "carol@OTHER.COM") of realm (NULL:
 * none) binds as, for mechanism mech ("gssapi"): its normal form and reversed key
 * appended to ndn and key (the caller's). A user of realm itself is named without it. 0,
 * or -1 (a name no DN can hold, a rule that made what is not a DN or a search that failed:
 * logged; out of memory).
 */
int authz_user_dn(struct conn *c, const char *user, const char *realm, const char *mech,
                  struct buf *ndn, struct buf *key);

/*
 * Whether the entry at authc_key (the authenticated identity's DN key) may act as authzid
 * ("dn:DN" or "u:USER", as the client sent it), under c's server's authz_policy. True with
 * the identity's DN and key appended to ndn and key; false when it may not, or authzid is
 * malformed.
 */
bool authz_proxy_allowed(struct conn *c, const struct buf *authc_key, const char *authzid,
                         const char *realm, const char *mech, struct buf *ndn, struct buf *key);

#endif
