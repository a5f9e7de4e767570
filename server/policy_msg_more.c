/*
 * msg-more: TCP_NODELAY at accept; every PDU of a response but the last is
 * sent with MSG_MORE, so the kernel fills whole segments and pushes once per
 * response (the ceph messenger's MSG_SENDPAGE_NOTLAST technique). No
 * setsockopt per response.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "server/conn.h"

static int msg_more_accept(struct conn *c)
{
	return policy_set_tcp_option(c, TCP_NODELAY, 1);
}

static void msg_more_response_begin(struct conn *c)
{
	(void)c;
}

static void msg_more_pdu_end(struct conn *c, bool last)
{
	conn_flush(c, last ? 0 : MSG_MORE);
}

const struct send_policy policy_msg_more = {
    .name = "msg-more",
    .id = SEND_MSG_MORE,
    .accept = msg_more_accept,
    .response_begin = msg_more_response_begin,
    .pdu_end = msg_more_pdu_end,
};
