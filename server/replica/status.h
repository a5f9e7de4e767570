/* What the syncrepl consumer reports (replica.h: replica_status; cn=replication,cn=monitor). */
#ifndef MINIDIR_SERVER_REPLICA_STATUS_H
#define MINIDIR_SERVER_REPLICA_STATUS_H

#include <stdint.h>
#include <time.h>

struct replica_status {
	const char *state; /* "refreshing", "persisting", "retrying", "idle" or "stopped" */
	char provider[1024];
	time_t last_change;   /* when a change was last committed (0: none yet) */
	uint64_t changes;     /* entries added, modified or deleted since start-up */
	uint64_t refreshes;   /* refreshes completed since start-up */
	char last_error[256]; /* "" when none */
	char cookie[256];     /* the cookie committed last ("" when none) */
	char context_csn[64]; /* its csn= part: the provider's contextCSN ("" when none) */
	/* From the provider's commit of the last change applied (its CSN's time) to the
	 * replica's commit of it, in milliseconds; -1 when unknown. Both clocks count: on
	 * two machines, their skew is in it. */
	int64_t lag_ms;
	/* Changes (entries added, modified or deleted) received from the provider and not
	 * yet committed: in a refresh, all it has brought so far (a refresh commits at its
	 * end, with its cookie); persisting, those waiting for their cookie or their batch.
	 * 0 when every change received is served. */
	uint64_t lag_entries;
	/* A 389-ds provider: its last change number (lastchangenumber, read at each session's
	 * start and by the probe) minus the committed cookie's; -1 when unknown. */
	int64_t lag_changes;
	/* Entries the provider sent that the replica could not store and went on without
	 * (committed; server/replica/apply.c says which): their count since start-up, the
	 * last one's DN and why ("" when none). */
	uint64_t skipped;
	char last_skipped[512];
	char last_skipped_why[256];
	/* When the state was entered (clock_ns()/1000000: CLOCK_MONOTONIC milliseconds). */
	int64_t state_since_ms;
	/* Persisting with the HTTP endpoint on (metrics_listen), the consumer asks the provider
	 * a small question now and then on its session (replica.c: the probe), since
	 * refreshAndPersist has no heartbeat and a quiet provider sends nothing: when the
	 * question still waiting for its answer was asked (same clock), 0 when none waits. */
	int64_t probe_sent_ms;
	uint64_t probes; /* questions answered since start-up */
};

#endif
