/* The policy table and what the policies share. */
#include "server/policy.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "server/conn.h"

const struct send_policy *policy_for(enum send_policy_id id)
{
	switch (id) {
	case SEND_CORK_TOGGLE:
		return &policy_cork_toggle;
	case SEND_MSG_MORE:
		return &policy_msg_more;
	case SEND_BATCH:
		return &policy_batch;
	case SEND_NODELAY_ONCE:
	case SEND_POLICY_N:
		break;
	}
	return &policy_nodelay_once;
}

int policy_set_tcp_option(struct conn *c, int opt, int on)
{
	STAT_ADD(c->stats->setsockopt_calls, 1);
	return setsockopt(c->fd, IPPROTO_TCP, opt, &on, sizeof(on));
}
