/*
 * cork-toggle: Nagle left on; TCP_CORK set before a response's first PDU and
 * cleared after its last, one send per PDU. Two setsockopt calls per response:
 * the classic 389 Directory Server behaviour this project measures against.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/policy.h"

static void cork_response_begin(struct conn *c)
{
	policy_set_tcp_option(c, TCP_CORK, 1);
}

static void cork_pdu_end(struct conn *c, bool last, bool more_requests)
{
	(void)more_requests;
	conn_flush(c, 0);
	if (last)
		policy_set_tcp_option(c, TCP_CORK, 0);
}

const struct send_policy policy_cork_toggle = {
    .id = SEND_CORK_TOGGLE, .response_begin = cork_response_begin, .pdu_end = cork_pdu_end};
