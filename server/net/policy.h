/*
 * Send policies: how the PDUs of a response reach TCP. One is chosen by
 * send_policy in the config; each lives in its own policy_*.c file.
 *
 * Responses are encoded into the connection's output buffer (conn->out). After
 * each PDU the reply layer (reply.c) calls pdu_end(), which decides whether to
 * flush now and with which flags; conn_flush() (conn_output.c) does the sending
 * and keeps what the kernel did not take, with its "more follows" flag, for
 * EPOLLOUT.
 *
 *   cork-toggle   Nagle on; TCP_CORK set by response_begin, cleared after the last PDU
 *   nodelay-once  TCP_NODELAY at accept; one send per PDU
 *   msg-more      TCP_NODELAY at accept; MSG_MORE on every PDU but a response's last
 *   batch         TCP_NODELAY at accept; one send per response, or per batch_bytes
 *                 (such a send ends on a TCP segment boundary, the rest joins the
 *                 next); responses to requests already buffered share one send
 */
#ifndef MINIDIR_SERVER_NET_POLICY_H
#define MINIDIR_SERVER_NET_POLICY_H

#include <stdbool.h>

#include "conf/config.h"

struct conn;

/*
 * A send policy: the hooks through which the layer above decides when the
 * connection's output leaves (the list and the rules are above).
 * The connection calls accept (conn_life.c), the reply layer the others (reply.c).
 * server/net/policy_<ident>.c defines `const struct send_policy
 * policy_<ident>` for each line of conf/send_policies.h; nothing else lists them.
 */
struct send_policy {
	enum send_policy_id id; /* its config name: config_policy_name(id) */
	/* Socket options for a new connection. Returns 0 or -1 (close it). NULL: none. */
	int (*accept)(struct conn *c);
	/* A response starts (before its first PDU is queued). NULL: nothing to do. */
	void (*response_begin)(struct conn *c);
	/* A PDU was appended to c->out; last marks a response's final PDU, and
	 * more_requests (only with last) says that further complete requests are already
	 * buffered on the connection, whose responses will follow at once. */
	void (*pdu_end)(struct conn *c, bool last, bool more_requests);
	/* A send with MSG_MORE takes only what ends on a TCP segment boundary; the rest
	 * waits in out for the next send (conn_output.c, whole_segments). */
	bool whole_segments;
};

/* policy_for, the policy for a config value, is in net.h (start-up chooses it). */

/* policy_tcp.c: setsockopt(IPPROTO_TCP, opt, on), counted in the worker's stats. Returns
 * its result. */
int policy_set_tcp_option(struct conn *c, int opt, int on);
/* An accept function for policies that want TCP_NODELAY once per connection. */
int policy_accept_nodelay(struct conn *c);

#endif
