/*
 * bind_passthrough (minidir.conf(5)): a simple bind of an entry that has no password on
 * this replica, or of no entry here, checked by the provider: an Active Directory DC
 * (type=dirSync) never gives out its password hashes, so only it can say whether a
 * password is right. The bind is sent to the provider as the client gave it, by the
 * chain threads (server/replica/replica.h: CHAIN_VERIFY, a connection each, at most
 * CHAIN_MAX_JOBS at a time and CHAIN_MAX_JOBS_PER_USER of one DN; more are answered busy),
 * while the request waits as c's task, looking at the job from the worker's waking queue
 * every millisecond, never blocking the loop. The provider's 0 binds the connection
 * as the entry; its 49 is answered as any failed bind here (the bind-timing pad, the
 * bind limits counting it); a provider that cannot be reached or answers otherwise gives
 * unavailable (52). An account refused here (disabled, locked) never gets this far:
 * op_bind.c refuses it without asking.
 *
 * Thread rules: c's worker.
 */
#ifndef MINIDIR_SERVER_OPS_BIND_PASSTHROUGH_H
#define MINIDIR_SERVER_OPS_BIND_PASSTHROUGH_H

#include <ldap.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "server/net/conn.h"

/* What op_bind.c hands over. dn, cred and key are borrowed (copied); controls (a whole [0]
 * Controls for the answer, empty: none) is taken and emptied. */
struct passthrough_bind {
	int32_t msgid;
	const struct berval *dn, *cred;
	const struct buf *key;     /* the DN's reversed key */
	struct buf *controls;      /* the answer's controls */
	uint64_t dn_key, addr_key; /* bind_fail_limit's keys (0: none) */
	uint64_t user;             /* limit_key_dn of the DN: the pool's share of one DN */
};

/* Sends b to the provider and answers it when the provider has (c's task meanwhile). */
void bind_passthrough(struct conn *c, struct passthrough_bind *b);

#endif
