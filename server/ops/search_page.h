/*
 * What a paged search's cookie is good for (RFC 2696 3: the client sends the same
 * request again, all but the cookie and the page size): a digest of the request as sent
 * (base, scope, derefAliases, typesOnly, filter, attributes; not the size and time limits,
 * which op_search.c keeps from the first page or takes per page), its controls but the
 * paged one, and the identity that asks. op_search.c keeps the first page's and answers a cookie
 * used with a request of another digest with unwillingToPerform, so that a cookie never goes on
 * with an old search under a new base, filter, control or identity.
 *
 * Thread rules: no state; any thread (each call has its own digest context).
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_PAGE_H
#define MINIDIR_SERVER_OPS_SEARCH_PAGE_H

#include "protocol/request.h"
#include "server/net/conn.h"

#define SEARCH_PAGE_DIGEST 32 /* SHA-256 */

/* The digest of search req from c (its current identity) into out. Returns 0, or -1 when
 * out of memory (out unset). */
int search_page_digest(const struct conn *c, const struct ldap_request *req,
                       unsigned char out[SEARCH_PAGE_DIGEST]);

#endif
