/* nodelay-once: TCP_NODELAY once per connection, one send per PDU (as OpenLDAP slapd). */
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "server/conn.h"

static int nodelay_accept(struct conn *c)
{
	return policy_set_tcp_option(c, TCP_NODELAY, 1);
}

static void nodelay_response_begin(struct conn *c)
{
	(void)c;
}

static void nodelay_pdu_end(struct conn *c, bool last)
{
	(void)last;
	conn_flush(c, 0);
}

const struct send_policy policy_nodelay_once = {
    .name = "nodelay-once",
    .id = SEND_NODELAY_ONCE,
    .accept = nodelay_accept,
    .response_begin = nodelay_response_begin,
    .pdu_end = nodelay_pdu_end,
};
