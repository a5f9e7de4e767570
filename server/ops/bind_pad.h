/*
 * A failed simple bind's answer (invalidCredentials), sent at the time every failed bind
 * is answered: at least the generation's bind_pad_ns after the request was read (measured
 * at start-up from the costliest password check the file needs), more while checks take
 * longer, so that its time tells neither the password scheme nor whether the DN exists
 * (docs/ldap.md). Until then the answer waits as c's task; the worker serves its other
 * connections meanwhile. Shared by op_bind.c and bind_passthrough.c.
 *
 * Thread rules: c's worker.
 */
#ifndef MINIDIR_SERVER_OPS_BIND_PAD_H
#define MINIDIR_SERVER_OPS_BIND_PAD_H

#include <stdint.h>

#include "protocol/buf.h"
#include "server/net/conn.h"

/* Answers invalidCredentials to the bind msgid once its time has come, with controls (a
 * whole [0] Controls, empty: none; taken and emptied here). */
void bind_fail_padded(struct conn *c, int32_t msgid, struct buf *controls);

#endif
