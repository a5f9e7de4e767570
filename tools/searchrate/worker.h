/*
 * worker.h: the load threads. Each owns its connections (one LDAP* each) and runs a loop
 * that sends searches (one at a time per thread, or pipelined per connection with
 * --asynchronous, paced by --ratePerSecond), reads the responses, and records each search's
 * result code, entry count and duration (CLOCK_MONOTONIC) into its own struct stats under
 * its own mutex. The main thread takes those counters every interval (workers_collect).
 * A lost connection counts its requests in flight as errors and is re-established with
 * backoff (50 ms doubling to 1 s). With --iterationsBeforeReconnect N a connection is closed
 * and opened anew (TLS handshake and bind included) after N searches; each reopening counts
 * in stats.reconnects.
 *
 * Lifetime: workers_create, workers_connect, workers_start; then the main thread sets
 * run->stop and calls workers_join; workers_free last (also after a failure anywhere).
 */
#ifndef SEARCHRATE_WORKER_H
#define SEARCHRATE_WORKER_H

#include <lber.h>
#include <ldap.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/searchrate/run.h"
#include "tools/searchrate/pace.h"
#include "tools/searchrate/stats.h"
#include "tools/searchrate/tally.h"
#include "tools/searchrate/threads.h"

/* A request in flight. */
struct sr_slot {
	int msgid; /* -1: free */
	uint64_t t0;
	uint64_t entries;
};

struct sr_conn {
	LDAP *ld; /* NULL while down */
	int fd;
	Sockbuf *sb; /* ld's socket buffer: the readahead layer may hold whole messages */
	int outstanding;
	uint64_t sent;         /* searches sent since it was opened (--iterationsBeforeReconnect) */
	struct sr_slot *slots; /* by msgid, linear probing; at least 2x max in flight */
	unsigned mask;         /* slots - 1, a power of two minus one */
	uint64_t retry_at, backoff_ns;
};

struct sr_worker {
	struct sr_thread th; /* first: threads.h */
	struct sr_run *run;
	struct sr_conn *conns;
	int nconns;
	int inflight;
	int thread_max, conn_max; /* requests in flight at most, per thread and per connection */
	uint64_t rng;
	struct sr_pacer pacer;
	int rr; /* the connection to send on first, round robin */
	char *basebuf, *filterbuf;
	struct pollfd *pfd; /* ppoll's set, with the connection of each and whether */
	struct sr_conn **pconn;
	bool *pconn_ready;     /* its readahead layer holds a message already */
	struct sr_tally tally; /* moved out by the main thread every interval */
};

/* Allocates run->workers (cfg.threads of them) and their connections, not yet connected;
 * seed starts the threads' random generators. Exits with status 1 when memory runs out. */
void workers_create(struct sr_run *run, uint64_t seed);

/*
 * Opens (with --useStartTLS secures, with --bindDN binds) every connection. The first must
 * work, else prints "searchrate: cannot connect to URI: ..." (or "StartTLS on HOST:PORT: ...",
 * "cannot bind to URI as DN: ...") to stderr and returns false; a later failure is counted as
 * an error and retried by its thread.
 */
bool workers_connect(struct sr_run *run);

/* Starts the threads; false (and a message on stderr) when one cannot be created. */
bool workers_start(struct sr_run *run);

/* Waits for the started threads to end (after run->stop is set); returns the requests that
 * were still in flight, not counted. */
int workers_join(struct sr_run *run);

/* Moves every thread's counters into into (added), resetting them; scratch is space for one
 * struct stats, so each mutex is held only for a copy. */
void workers_collect(struct sr_run *run, struct stats *into, struct stats *scratch);

/* Closes every connection and frees run->workers (NULL is harmless). */
void workers_free(struct sr_run *run);

/* The functions above, as the libldap engine (run.h). */
extern const struct sr_engine sr_engine_libldap;

#endif
