/*
 * An authz_regexp rule's LDAP URL form (authz_map.h): ldap:///BASE??SCOPE?FILTER searched
 * in the directory for the entry a SASL identity binds as, as slapd's search-based
 * mapping: exactly one entry found is the DN; none, or more than one, is no mapping (the
 * identity binds as its own DN). The search is the server's own, without access rules,
 * planned as a client's is (an equality index answers (uid=alice)); it examines at most
 * AUTHZ_URL_MAX_EXAMINED candidates: a URL whose filter no index answers, over a larger
 * scope, fails the bind (logged).
 *
 * Runs on c's worker, in its read transaction (begun and ended here).
 */
#ifndef MINIDIR_SERVER_OPS_AUTHZ_URL_H
#define MINIDIR_SERVER_OPS_AUTHZ_URL_H

#include "protocol/buf.h"

struct conn;

#define AUTHZ_URL_MAX_EXAMINED 1000

/*
 * Searches url (NUL-terminated) for c's worker: 1 with the entry's DN (normal form) and
 * reversed key appended to ndn and key (the caller's) when it finds exactly one; 0 when it
 * finds none or several; -1 (logged: not a URL, a base or filter that does not parse, too
 * many candidates, a read error, out of memory).
 */
int authz_url_search(struct conn *c, const char *url, struct buf *ndn, struct buf *key);

#endif
