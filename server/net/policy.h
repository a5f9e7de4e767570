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
#include "server/net/conn.h"

/* The policy for a config value (every value of enum send_policy_id has one). */
const struct send_policy *policy_for(enum send_policy_id id);

/* policy_tcp.c: setsockopt(IPPROTO_TCP, opt, on), counted in the worker's stats. Returns
 * its result. */
int policy_set_tcp_option(struct conn *c, int opt, int on);
/* An accept function for policies that want TCP_NODELAY once per connection. */
int policy_accept_nodelay(struct conn *c);

#endif
