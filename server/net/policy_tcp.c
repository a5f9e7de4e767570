/*
 * What the send policies share: their TCP options, set through the worker's engine
 * and counted. Apart from the policy table (policy.c), which lists the policies, so
 * that a policy calls down to this file and nothing calls back up.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/engine.h"
#include "server/net/policy.h"

int policy_set_tcp_option(struct conn *c, int opt, int on)
{
	STAT_ADD(CI(c)->stats->setsockopt_calls, 1);
	return engine_set_option(c->w, c->fd, IPPROTO_TCP, opt, on);
}

int policy_accept_nodelay(struct conn *c)
{
	return policy_set_tcp_option(c, TCP_NODELAY, 1);
}
