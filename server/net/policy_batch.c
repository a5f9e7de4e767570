/*
 * batch: TCP_NODELAY at accept; a response's PDUs gather in the output buffer
 * and leave with one send when the response ends or batch_bytes are waiting
 * (then with MSG_MORE, as the response goes on). Such a send stops at a
 * segment boundary and the rest joins the next one (whole_segments), so the
 * kernel is never left a short tail that an ACK would push out on its own.
 * When further complete requests are already buffered on the connection, the
 * flush waits for their responses too (conn_input.c flushes after the last one).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "protocol/buf.h"
#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/policy.h"

static void batch_pdu_end(struct conn *c, bool last, bool more_requests)
{
	/* A full buffer mid-response goes with MSG_MORE: the kernel keeps the tail
	 * of the last segment for the bytes that follow instead of sending it short. */
	if (buf_pending(&CI(c)->out) >= server_batch_bytes(c->w->srv))
		conn_flush(c, last ? 0 : MSG_MORE);
	else if (last && !more_requests)
		conn_flush(c, 0);
}

const struct send_policy policy_batch = {.id = SEND_BATCH,
                                         .accept = policy_accept_nodelay,
                                         .pdu_end = batch_pdu_end,
                                         .whole_segments = true};
