/*
 * The send policies, one line each: X(ENUM, ident, "config name").
 *
 * This list is the only place that names them all: the config's send_policy
 * values, enum send_policy_id (SEND_<ENUM>) and the server's policy table
 * (server/net/policy.c, which expects `policy_<ident>` from server/policy_<ident>.c)
 * are made from it. A new policy is that file and one line here.
 */
#ifndef MINIDIR_CONF_SEND_POLICIES_H
#define MINIDIR_CONF_SEND_POLICIES_H

#define SEND_POLICY_LIST(X)                                                                        \
	X(CORK_TOGGLE, cork_toggle, "cork-toggle")                                                 \
	X(NODELAY_ONCE, nodelay_once, "nodelay-once")                                              \
	X(MSG_MORE, msg_more, "msg-more")                                                          \
	X(BATCH, batch, "batch")

#endif
