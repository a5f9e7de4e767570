/*
 * The monitoring room's public header: cn=monitor (monitor.c: minidir's own entries,
 * monitor_slapd.c: slapd's back-monitor tree beside them) and the operators' HTTP
 * endpoint (http.h: /metrics, /healthz, /readyz on a thread of its own, metrics.h what
 * they answer). It ranks above server/net/ (its search answers through the reply API,
 * reads the connections and TLS) and below server/ops/, whose search dispatch
 * (op_search.c) sends a base in cn=monitor here; start-up runs the endpoint
 * (http_start, http_stop). It calls nothing of server/ops/: who may read cn=monitor is
 * monitor_access (server_monitor_access), not the access rules.
 *
 * What other rooms use: monitor_holds and monitor_search (server/ops/), and http.h
 * (start-up). monitor_entry.h and metrics.h are the room's own.
 */
#ifndef MINIDIR_SERVER_MONITOR_MONITOR_H
#define MINIDIR_SERVER_MONITOR_MONITOR_H

#include <stdbool.h>

#include "protocol/buf.h"
#include "protocol/request.h"
#include "server/monitor/http.h" /* the HTTP endpoint start-up runs (http_start, http_stop) */
#include "server/net/conn.h"

/* --- monitor.c: cn=monitor ------------------------------------------------------------- */

/* True if the reversed DN key lies in the cn=monitor subtree. */
bool monitor_holds(const struct buf *key);
/* Answers a search whose base (reversed key, borrowed) is in cn=monitor, on c's worker:
 * refused unless monitor_access lets c's identity read it. */
void monitor_search(struct conn *c, struct ldap_request *req, const struct buf *key);

#endif
