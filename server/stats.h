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
	uint64_t eagain;      /* sends refused with EAGAIN */
	uint64_t partial;     /* sends that took only part of the bytes */
	uint64_t tls_records; /* TLS records written (bytes counts their ciphertext) */
};

/* TLS sessions of one worker. */
struct tls_stats {
	uint64_t connections; /* connections that started TLS (ldaps:// or StartTLS) */
	uint64_t handshakes;  /* completed, of which resumed (tickets): */
	uint64_t resumed;
	uint64_t failures; /* handshakes that failed or timed out */
	uint64_t starttls; /* StartTLS operations that succeeded */
	uint64_t ktls;     /* connections whose sends the kernel encrypts (tls_ktls) */
};

/*
 * Operation latency as the server sees it: from the moment the request was
 * taken from the input to the moment its final response PDU was handed to the
 * send policy. Bucket i counts operations that took less than 2^i microseconds
 * and not less than 2^(i-1); the last bucket counts the rest.
 */
#define STAT_LATENCY_BUCKETS 25

struct worker_stats {
	uint64_t latency[STAT_LATENCY_BUCKETS];
	uint64_t latency_max_ns;
	struct send_stats send[SEND_POLICY_N]; /* by enum send_policy_id */
	uint64_t connections_by_policy[SEND_POLICY_N];
	uint64_t ops[STAT_OP_N];
	uint64_t connections_total;
	uint64_t connections_current;
	uint64_t connections_shed; /* closed unserved: out of file descriptors */
	uint64_t pdu_timeouts;     /* closed: a request not whole within pdu_timeout */
	uint64_t input_shed;       /* closed: the worker buffered max_input_bytes_per_worker */
	uint64_t proxy_refused;    /* closed: a pldap(s):// connection not from proxy_from */
	uint64_t proxy_malformed;  /* closed: a PROXY header malformed, or not whole in time */
	struct tls_stats tls;
	uint64_t entries_sent;
	uint64_t io_sends;      /* sends given to the kernel by the engine (engine.h) */
	uint64_t io_sends_more; /* of which with MSG_MORE */
	uint64_t io_waits;      /* epoll_wait or io_uring_enter calls of the loop */
};

#define STAT_ADD(field, n)                                                                         \
	__atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n),              \
	                 __ATOMIC_RELAXED)
/* Counts one operation of ns nanoseconds. */
static inline void stat_latency(struct worker_stats *s, uint64_t ns)
{
	uint64_t us = ns / 1000;
	int b = 0;
	while (b < STAT_LATENCY_BUCKETS - 1 && us >= ((uint64_t)1 << b))
		b++;
	STAT_ADD(s->latency[b], 1);
	if (ns > __atomic_load_n(&s->latency_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&s->latency_max_ns, ns, __ATOMIC_RELAXED);
}

#define STAT_READ(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

#endif
