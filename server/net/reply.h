/*
 * The reply API: the one door through which operations answer. An operation
 * never touches a connection's output buffer or socket; it calls
 *
 *   reply_begin                 a response starts (the send policy may cork)
 *   reply_entry ...             zero or more SearchResultEntry PDUs
 *   reply_result                the final PDU, which ends the response
 *
 * or reply_done for a response of one PDU. Each PDU is encoded into the
 * connection's output and handed to its send policy, which decides when it
 * leaves. If a PDU cannot be encoded (out of memory, a stored entry that does
 * not parse), the connection is marked closing and the call returns -1.
 *
 * All calls run on the connection's worker thread.
 */
#ifndef MINIDIR_SERVER_NET_REPLY_H
#define MINIDIR_SERVER_NET_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/response.h"

struct conn;

/* A response to one request starts. */
void reply_begin(struct conn *c);

/*
 * A SearchResultEntry for msgid: the stored entry st (a record's protocolOp and its
 * parts, storage/entry.h), with the attributes sel selects, and extra[0..extralen)
 * (attributes as response_put_attr writes them; NULL, 0 for none) added at the end.
 * The bytes are copied. Returns 0 or -1.
 */
int reply_entry(struct conn *c, int32_t msgid, const struct stored_entry *st,
                const struct attr_select *sel, const unsigned char *extra, size_t extralen);

/*
 * A Content Synchronization search's PDUs (server/ops/search_sync.h): reply_entry with the
 * [0] Controls element ctl[0..clen) (its Sync State control); a SearchResultEntry of dn
 * alone (no attributes) with ctl; an IntermediateResponse (a Sync Info message): with
 * flush, it ends what the send policy holds as a response's last PDU would (a
 * persistent search's changes go out at once), without ending the operation. 0 or -1.
 */
int reply_entry_ctl(struct conn *c, int32_t msgid, const struct stored_entry *st,
                    const struct attr_select *sel, const unsigned char *extra, size_t extralen,
                    const void *ctl, size_t clen);
int reply_bare_entry(struct conn *c, int32_t msgid, const void *dn, size_t dnlen, const void *ctl,
                     size_t clen);
int reply_intermediate(struct conn *c, int32_t msgid, const char *oid, const void *value,
                       size_t vlen, bool flush);
/*
 * The final PDU: an LDAPResult-shaped response (BindResponse, SearchResultDone,
 * CompareResponse, ExtendedResponse, ...) with tag optag and result code rc.
 * matched and message may be NULL; x (ExtendedResponse name and value, response
 * controls) may be NULL. Returns 0 or -1.
 */
int reply_result(struct conn *c, int32_t msgid, unsigned char optag, int rc, const char *matched,
                 const char *message, const struct result_extra *x);

/* reply_begin and reply_result: a response of one PDU. */
int reply_done(struct conn *c, int32_t msgid, unsigned char optag, int rc, const char *matched,
               const char *message);

#endif
