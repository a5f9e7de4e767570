/*
 * The workers' counters (stats.h) added up, for the two readers of them: cn=monitor
 * (server/monitor/monitor.c) and the HTTP endpoint's /metrics (server/monitor/metrics.c).
 * Any thread: each counter is a relaxed atomic load, no lock is taken, so a reader never
 * holds up a worker (the sum is not one instant's: each counter is read once, in turn).
 */
#ifndef MINIDIR_SERVER_STATS_SUM_H
#define MINIDIR_SERVER_STATS_SUM_H

#include "server/stats.h"

struct server;

/* Fills *out (overwritten) with the sum of srv's workers' counters; latency_max_ns is
 * their largest. The workers must exist (between server_init and server_stop). */
void stats_sum(struct server *srv, struct worker_stats *out);

#endif
