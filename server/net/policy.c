/* The policy table: every policy_<ident> of conf/send_policies.h, by its id. What the
 * policies share (their TCP options) is policy_tcp.c's. */
#include "server/net/net.h"
#include "server/net/policy.h"

#define SEND_POLICY_EXTERN(E, ident, name) extern const struct send_policy policy_##ident;
SEND_POLICY_LIST(SEND_POLICY_EXTERN)
#undef SEND_POLICY_EXTERN

static const struct send_policy *const policies[SEND_POLICY_N] = {
#define SEND_POLICY_ENTRY(E, ident, name) [SEND_##E] = &policy_##ident,
    SEND_POLICY_LIST(SEND_POLICY_ENTRY)
#undef SEND_POLICY_ENTRY
};

const char *policy_name(const struct send_policy *p)
{
	return config_policy_name(p->id);
}

const struct send_policy *policy_for(enum send_policy_id id)
{
	return policies[id < SEND_POLICY_N ? id : SEND_BATCH];
}
