/*
 * The state the server's layers share: struct server (configuration, database,
 * built entries, what SIGHUP may change), struct worker (one event loop and what
 * its connections and operations use), and the atomic getters of the runtime
 * values. A header of data only, at the bottom of server/: every layer includes
 * it, and it includes no layer of server/ (a connection is only a pointer here,
 * a send policy too). server.h is the start-up and shut-down API above them all.
 */
#ifndef MINIDIR_SERVER_STATE_H
#define MINIDIR_SERVER_STATE_H

#include <lmdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "conf/config.h"
#include "protocol/arena.h"
#include "server/net/slab.h"
#include "server/stats.h"
#include "storage/cursor_pool.h"
#include "storage/db.h"

struct send_policy;
struct tls_server;
struct access_rules;
struct worker_hooks;
struct engine_ops;
struct conn;
struct conn_wake;
struct ldap_request;
struct db_gen;
struct db_hold;

struct worker {
	int id;
	struct server *srv;
	pthread_t thread;
	const struct engine_ops *engine; /* epoll or io_uring (engine.h) */
	void *engine_state;              /* the engine's own */
	int wakefd;                      /* eventfd: the main thread asks the loop to stop */
	int listenfd[CONFIG_MAX_LISTEN];
	enum listen_scheme listen_scheme[CONFIG_MAX_LISTEN]; /* what each listener speaks */
	int nlisten;
	int reservefd;       /* spare descriptor, freed to shed connections at EMFILE; -1: lost */
	bool listen_paused;  /* listeners not watched until a descriptor is free */
	bool listen_held;    /* not listening yet (listen_after_refresh); atomic */
	bool listen_release; /* listeners_open asks the worker to watch them; atomic */
	struct db_gen *gen;  /* the database generation it serves (db_gen.h), held */
	MDB_txn *txn;        /* its read transaction on gen (db_gen_txn_begin, _end) */
	bool txn_open;       /* txn is open, not reset: kept between operations on a file
	                        that never changes in place */
	struct cursor_pool cursors;         /* searches' spare cursors on gen's environment */
	struct access_anonymous *anonymous; /* an anonymous client's access, decided once
	                                       (server/access.c; NULL until then) */
	struct db_hold *holds; /* operations reading a generation over several rounds */
	struct arena req_mem;  /* a request's filter: reset before each decode, lent to a search */
	struct buf scratch;    /* filter evaluation work space */
	struct buf extra;      /* operational attributes of the entry being sent */
	struct buf base_dn;    /* the last search base as sent, and its key (op_search.c) */
	struct buf base_key;
	struct buf tls_in;           /* ciphertext just received, before decryption */
	struct buf access_log;       /* access log lines not yet written (access_log.h) */
	uint64_t access_log_flushed; /* clock_ns() of the last write */
	unsigned access_log_gen;     /* the srv->access_log_gen it writes under (atomic) */
	/* clock_ns() when the loop last woke: a request read in that round counts its
	 * latency from there (one clock read a round, not one a request) */
	uint64_t round_ns;
	time_t access_log_second;  /* the second access_log_stamp is of */
	char access_log_stamp[24]; /* "2026-11-30T13:51:14" */
	char access_log_zone[8];   /* "+00:00" */
	struct conn *conns;        /* all connections of this worker */
	struct slab conn_slab;     /* where they are allocated */
	struct slab ident_slab;    /* their bound identities (conn_set_identity) */
	size_t trim_bytes;  /* heap bytes its connections gave back since the last malloc_trim */
	size_t trim_last;   /* trim_bytes at the last sweep (conn.c) */
	size_t input_bytes; /* request bytes buffered on its connections (conn.c, account_input) */
	struct conn *ready; /* connections with a search to continue */
	/* Tasks that resume at a given time (conn_wake.c), first due first, and the first
	 * one's time: the loop waits no longer than that (0: none waits). */
	struct conn_wake *waking, *waking_last;
	uint64_t wake_ns;
	uint64_t bind_took_ns; /* how long failed binds take to check, on average (op_bind.c) */
	struct worker_stats stats;
	const struct worker_hooks *hooks; /* the layer above the loop (worker.h) */
};

/*
 * What SIGHUP may change while workers run. The main thread stores, workers
 * load; each field is read atomically on its own (see server_reload).
 */
struct runtime {
	const struct send_policy *policy; /* for connections accepted from now on */
	size_t batch_bytes;
	size_t max_pending_bytes;
	enum monitor_access monitor_access;
	int write_timeout;
	int idle_timeout;
	int sizelimit;
	int timelimit;
	size_t max_filter_items;
	unsigned long long max_search_work;
	bool allow_anonymous;
	bool require_tls;
	int tls_handshake_timeout;
	int pdu_timeout;
};

struct server {
	struct config cfg; /* as loaded at start-up; runtime holds what reloads change */
	struct runtime rt;
	const struct send_policy *local_policy; /* ldapi:// connections' (batch: no TCP options) */
	struct db_gen *gen;      /* the current database generation (db_gen.h): under gen_lock */
	struct replica *replica; /* the syncrepl consumer (replica.h), NULL when none */
	pthread_mutex_t gen_lock;
	uint64_t gen_min; /* the oldest generation a search may still hold (atomic) */
	uint64_t reloads; /* database files picked up since start-up (atomic) */
	struct db_refused {
		dev_t dev; /* a new file at the database path that was refused, */
		ino_t ino; /* not tried again while it stays as it is */
		off_t size;
		struct timespec mtime;
	} db_refused;
	struct worker *workers;
	int nworkers;
	int db_watch_fd;      /* holds the read lease on the database file (db_watch.h); -1: none */
	struct buf rootdse;   /* the root DSE, as a stored entry record */
	struct buf subschema; /* cn=Subschema, as a stored entry record */
	struct tls_server *tls;      /* the TLS context (tls.h), NULL when TLS is not configured */
	struct access_rules *access; /* cfg's access rules compiled (access.h) */
	bool unix_bound[CONFIG_MAX_LISTEN];       /* ldapi:// socket files this server made */
	char listen_urls[CONFIG_MAX_LISTEN][400]; /* each address as a URL, port resolved */
	bool listening;                           /* the listeners listen (atomic; listeners.h) */
	time_t listen_hold_until; /* a replica's hold ends then at the latest (clock_seconds) */
	int access_log;           /* its descriptor, -2 syslog, -1 off (atomic; access_log.h) */
	int access_log_old;       /* the one SIGHUP replaced, closed at the next SIGHUP */
	unsigned access_log_gen;  /* SIGHUPs that put a destination in place (atomic) */
	uint64_t next_conn_id;    /* connection numbers in the access log (atomic) */
	time_t started;
	_Atomic int
	    stopping; /* server_stop sets it, each worker loop reads it (not volatile: a race) */
	/* Runs a decoded request (ops_dispatch): how the connection layer, below the
	 * operations, hands them requests. */
	void (*dispatch)(struct conn *c, struct ldap_request *req);
	/* Taken around every accept and the spare-descriptor shedding (worker.c), so
	 * a descriptor number one worker frees is not taken by another's accept. */
	pthread_mutex_t accept_lock;
};

/*
 * Reading what SIGHUP may change, from any thread: server_policy(srv) (acquire:
 * the policy it points to is complete), and server_batch_bytes(srv),
 * server_max_pending_bytes, server_sizelimit, server_timelimit,
 * server_max_filter_items, server_max_search_work,
 * server_allow_anonymous, server_idle_timeout, server_write_timeout,
 * server_monitor_access, server_require_tls, server_tls_handshake_timeout,
 * server_pdu_timeout
 * (relaxed: each value stands alone).
 */
static inline const struct send_policy *server_policy(struct server *srv)
{
	return __atomic_load_n(&srv->rt.policy, __ATOMIC_ACQUIRE);
}
#define SERVER_RUNTIME_GETTER(type, field)                                                         \
	static inline type server_##field(struct server *srv)                                      \
	{                                                                                          \
		return __atomic_load_n(&srv->rt.field, __ATOMIC_RELAXED);                          \
	}
SERVER_RUNTIME_GETTER(size_t, batch_bytes)
SERVER_RUNTIME_GETTER(size_t, max_pending_bytes)
SERVER_RUNTIME_GETTER(int, sizelimit)
SERVER_RUNTIME_GETTER(int, timelimit)
SERVER_RUNTIME_GETTER(size_t, max_filter_items)
SERVER_RUNTIME_GETTER(unsigned long long, max_search_work)
SERVER_RUNTIME_GETTER(bool, allow_anonymous)
SERVER_RUNTIME_GETTER(int, idle_timeout)
SERVER_RUNTIME_GETTER(int, write_timeout)
SERVER_RUNTIME_GETTER(enum monitor_access, monitor_access)
SERVER_RUNTIME_GETTER(bool, require_tls)
SERVER_RUNTIME_GETTER(int, tls_handshake_timeout)
SERVER_RUNTIME_GETTER(int, pdu_timeout)
#undef SERVER_RUNTIME_GETTER

#endif
