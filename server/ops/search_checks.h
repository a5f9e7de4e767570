/*
 * What a search checks on its base entry and its controls before it runs (op_search.c):
 * search access on the base (access.h), the assertion control (RFC 4528; a compare
 * checks it on its entry too) and the Matched Values control (RFC 3876).
 *
 * Thread rules: the worker that runs the search, inside its read transaction (db_worker(w)->txn
 * on w's generation) for the first two.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_CHECKS_H
#define MINIDIR_SERVER_OPS_SEARCH_CHECKS_H

#include "protocol/buf.h"
#include "protocol/filter.h"
#include "protocol/request.h"
#include "server/ops/access.h"
#include "server/server.h"
#include "storage/entry.h"

/*
 * Search access on the base entry for aop's client: LDAP_SUCCESS; else noSuchObject, or
 * insufficientAccess when the client may know that the entry exists (disclose);
 * LDAP_OTHER when the entry cannot be read.
 */
int search_base_access(struct access_op *aop, struct worker *w, entry_id base);

/*
 * The assertion control of req, if any: its filter must hold on entry base (a search's
 * base, or the entry a compare names), as aop's client may search it. LDAP_SUCCESS (or no
 * control), LDAP_ASSERTION_FAILED (122), LDAP_PROTOCOL_ERROR (a malformed control) or
 * LDAP_OTHER.
 */
int search_assertion(const struct ldap_request *req, struct access_op *aop, struct worker *w,
                     entry_id base);

/* The same on an entry outside the database (the root DSE, cn=Subschema): e, evaluated
 * with ctx (borrowed; its scratch is used to decode the filter too). */
int search_assertion_on(const struct ldap_request *req, const struct entry_view *e,
                        const struct filter_ctx *ctx);

/*
 * The Matched Values control of req into *values, decoded into mem (the caller's, as
 * filter_decode_values with scratch; NULL without the control). Returns 0, or -1 when it
 * is malformed (*values NULL).
 */
int search_matched_values(const struct ldap_request *req, struct arena *mem, struct buf *scratch,
                          struct filter **values);

#endif
