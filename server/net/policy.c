/* The policy table and what the policies share. */
#include "server/net/policy.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "server/net/conn.h"
#include "server/net/engine.h"

#define SEND_POLICY_EXTERN(E, ident, name) extern const struct send_policy policy_##ident;
SEND_POLICY_LIST(SEND_POLICY_EXTERN)
#undef SEND_POLICY_EXTERN

static const struct send_policy *const policies[SEND_POLICY_N] = {
#define SEND_POLICY_ENTRY(E, ident, name) [SEND_##E] = &policy_##ident,
    SEND_POLICY_LIST(SEND_POLICY_ENTRY)
#undef SEND_POLICY_ENTRY
};

const struct send_policy *policy_for(enum send_policy_id id)
{
	return policies[id < SEND_POLICY_N ? id : SEND_BATCH];
}

int policy_set_tcp_option(struct conn *c, int opt, int on)
{
	STAT_ADD(c->stats->setsockopt_calls, 1);
	return engine_set_option(c->w, c->fd, IPPROTO_TCP, opt, on);
}

int policy_accept_nodelay(struct conn *c)
{
	return policy_set_tcp_option(c, TCP_NODELAY, 1);
}
