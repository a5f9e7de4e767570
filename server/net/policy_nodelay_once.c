/* nodelay-once: TCP_NODELAY once per connection, one send per PDU (as OpenLDAP slapd). */
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/policy.h"

static void nodelay_pdu_end(struct conn *c, bool last, bool more_requests)
{
	(void)more_requests;
	(void)last;
	conn_flush(c, 0);
}

const struct send_policy policy_nodelay_once = {
    .id = SEND_NODELAY_ONCE, .accept = policy_accept_nodelay, .pdu_end = nodelay_pdu_end};
