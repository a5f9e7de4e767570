/*
 * What the operators' HTTP endpoint (http.h) answers: /metrics in Prometheus' text
 * exposition format 0.0.4, and /readyz's decision. Both read the workers' counters
 * through stats_sum (relaxed loads, no lock a worker takes), the current database
 * generation (db_gen_current: a mutex only database reloads take) and the replica's
 * status (replica_status: the consumer's mutex, which no worker takes); any thread.
 * docs/monitoring.md lists every metric.
 */
#ifndef MINIDIR_SERVER_MONITOR_METRICS_H
#define MINIDIR_SERVER_MONITOR_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"

struct server;

/* The endpoint's own counters (http.c), shown in /metrics. */
struct http_counts {
	uint64_t requests;  /* answered, whatever the status */
	uint64_t busy;      /* answered 503: HTTP_MAX_CONNS open, or out of descriptors */
	uint64_t timeouts;  /* closed: a request not whole within HTTP_READ_TIMEOUT_MS */
	uint64_t too_large; /* answered 431: request line and headers over HTTP_MAX_REQUEST */
};

/* Appends the whole /metrics text to out. 0, or -1 when out of memory. */
int metrics_text(struct server *srv, const struct http_counts *hc, struct buf *out);

/* Why a server is not ready: a fixed code, the whole of what /readyz tells whoever asks,
 * and the reason in words for the operators (it may name the replication bind DN, an
 * entry's DN or the provider, as the replica's last error does). */
struct readiness {
	const char *code; /* "no-database", "replication-stopped", "replication-first-refresh",
	                     "replication-provider-silent", "replication-behind" */
	char why[400];
};

/*
 * /readyz: true when srv can serve fresh data. False, with r filled, when no database is
 * open, or on a replica when its first refresh has not committed, its state is
 * "stopped", or it is behind by more than ready_max_lag_ms as metrics_staleness_ms
 * measures it.
 */
bool metrics_ready(struct server *srv, struct readiness *r);

struct replica_status;
/*
 * How far behind a replica may be, in ms, measured now (clock_ns) from its status:
 *   refreshing or retrying: since it entered that state (it serves what it had then);
 *   persisting: 0, or since the probe awaiting an answer was asked (replica.c's probe:
 *   a quiet provider answers it, a stalled session does not);
 *   idle (refreshOnly between polls): 0.
 * A quiet provider thus never makes a replica stale.
 */
int64_t metrics_staleness_ms(const struct replica_status *st, int64_t now_ms);

#endif
