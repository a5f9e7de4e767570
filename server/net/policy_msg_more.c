/*
 * msg-more: TCP_NODELAY at accept; every PDU of a response but the last is
 * sent with MSG_MORE, so the kernel fills whole segments and pushes once per
 * response (the ceph messenger's MSG_SENDPAGE_NOTLAST technique). No
 * setsockopt per response.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/policy.h"

static void msg_more_pdu_end(struct conn *c, bool last, bool more_requests)
{
	(void)more_requests;
	conn_flush(c, last ? 0 : MSG_MORE);
}

const struct send_policy policy_msg_more = {
    .id = SEND_MSG_MORE, .accept = policy_accept_nodelay, .pdu_end = msg_more_pdu_end};
