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
#include "storage/memo_counts.h"

/* Operations by type, as slapd's cn=Operations,cn=Monitor names them (the writes are
 * refused: read-only, but counted). cn=monitor's opsOther is the sum of the six last. */
enum stat_op {
	STAT_OP_BIND,
	STAT_OP_SEARCH,
	STAT_OP_UNBIND,
	STAT_OP_ABANDON,
	STAT_OP_COMPARE,
	STAT_OP_MODIFY,
	STAT_OP_MODRDN,
	STAT_OP_ADD,
	STAT_OP_DELETE,
	STAT_OP_EXTENDED,
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

/* Results by kind and code: bind, search and the rest (compare, extended, writes refused);
 * codes 0..STAT_RESULT_CODES-2 each at its own index, any other code (4096+: cancel's) in
 * the last. Unbind and abandon have no result. */
enum stat_result_kind { STAT_RES_BIND, STAT_RES_SEARCH, STAT_RES_OTHER, STAT_RES_N };
#define STAT_RESULT_CODES 128

struct worker_stats {
	uint64_t latency[STAT_LATENCY_BUCKETS];
	uint64_t latency_max_ns;
	uint64_t latency_sum_ns;               /* of all operations counted in latency[] */
	struct send_stats send[SEND_POLICY_N]; /* by enum send_policy_id */
	uint64_t connections_by_policy[SEND_POLICY_N];
	uint64_t ops[STAT_OP_N];      /* taken (slapd's monitorOpInitiated) */
	uint64_t ops_done[STAT_OP_N]; /* answered: final response queued, or for Unbind and
	                                 Abandon (no response) done (monitorOpCompleted) */
	uint64_t results[STAT_RES_N][STAT_RESULT_CODES]; /* stat_result */
	uint64_t connections_total;
	uint64_t connections_current;
	uint64_t connections_shed;      /* closed unserved: out of file descriptors */
	uint64_t pdu_timeouts;          /* closed: a request not whole within pdu_timeout */
	uint64_t input_shed;            /* closed: the worker buffered max_input_bytes_per_worker */
	uint64_t conns_per_ip_refused;  /* closed at accept: max_conns_per_ip from that address */
	uint64_t binds_limited;         /* binds refused unchecked: bind_fail_limit reached */
	uint64_t binds_refused_account; /* binds refused: the account locked, disabled, expired */
	uint64_t binds_replayed;        /* binds replayed to the provider (chain_bind_failures) */
	uint64_t binds_replay_dropped;  /* not replayed: the pool full or the DN's share taken */
	uint64_t proxy_refused;         /* closed: a pldap(s):// connection not from proxy_from */
	uint64_t proxy_malformed;       /* closed: a PROXY header malformed, or not whole in time */
	struct tls_stats tls;
	uint64_t entries_sent;
	uint64_t io_sends;      /* sends given to the kernel by the engine (engine.h) */
	uint64_t io_sends_more; /* of which with MSG_MORE */
	uint64_t io_waits;      /* epoll_wait or io_uring_enter calls of the loop */
	/* The memos' hits and misses (storage/memo_counts.h): the worker's thread points
	 * db_memo_counts here (db_gen_worker_start). */
	struct db_memo_counts memo;
};

#define STAT_ADD(field, n)                                                                         \
	__atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n),              \
	                 __ATOMIC_RELAXED)
/* Counts one operation of ns nanoseconds. */
static inline void stat_latency(struct worker_stats *s, uint64_t ns)
{
	uint64_t us = ns / 1000;
	/* The first b with us < 2^b: us's bit length, found at once (a loop took ~45
	 * instructions per operation, bench/instructions.sh). */
	int b = us ? 64 - __builtin_clzll(us) : 0;
	if (b > STAT_LATENCY_BUCKETS - 1)
		b = STAT_LATENCY_BUCKETS - 1;
	STAT_ADD(s->latency[b], 1);
	STAT_ADD(s->latency_sum_ns, ns);
	if (ns > __atomic_load_n(&s->latency_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&s->latency_max_ns, ns, __ATOMIC_RELAXED);
}

/* Counts one result rc of an operation whose result tag is optag (LDAP_RES_*: 0x61 bind,
 * 0x65 search; the values are RFC 4511's, written here so this header needs no ldap.h). */
static inline void stat_result(struct worker_stats *s, unsigned optag, int rc)
{
	int k = optag == 0x61 ? STAT_RES_BIND : optag == 0x65 ? STAT_RES_SEARCH : STAT_RES_OTHER;
	unsigned i = rc >= 0 && rc < STAT_RESULT_CODES - 1 ? (unsigned)rc : STAT_RESULT_CODES - 1;
	STAT_ADD(s->results[k][i], 1);
}

#define STAT_READ(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

#endif
