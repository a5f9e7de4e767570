/*
 * Counters a worker keeps about its own work: what its send policy cost and
 * which operations it served. Each worker writes only its own counters; the
 * monitor reads all of them, so each update is a relaxed atomic store (no
 * lock prefix: one writer) and each read a relaxed atomic load.
 */
#ifndef MINIDIR_SERVER_STATS_H
#define MINIDIR_SERVER_STATS_H

#include <stdint.h>

#include "conf/config.h"

enum stat_op {
	STAT_OP_BIND,
	STAT_OP_SEARCH,
	STAT_OP_UNBIND,
	STAT_OP_ABANDON,
	STAT_OP_OTHER,
	STAT_OP_N
};

struct send_stats {
	uint64_t responses;  /* complete responses (results of an operation) */
	uint64_t pdus;       /* LDAPMessages queued for sending */
	uint64_t bytes;      /* bytes the kernel accepted */
	uint64_t send_calls; /* send/sendmsg system calls */
	uint64_t setsockopt_calls;
	uint64_t eagain;  /* sends refused with EAGAIN */
	uint64_t partial; /* sends that took only part of the bytes */
};

struct worker_stats {
	struct send_stats send[SEND_POLICY_N]; /* by enum send_policy_id */
	uint64_t connections_by_policy[SEND_POLICY_N];
	uint64_t ops[STAT_OP_N];
	uint64_t connections_total;
	uint64_t connections_current;
	uint64_t connections_shed; /* closed unserved: out of file descriptors */
	uint64_t entries_sent;
};

#define STAT_ADD(field, n)                                                                         \
	__atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n),              \
	                 __ATOMIC_RELAXED)
#define STAT_READ(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

#endif
