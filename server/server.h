/*
 * The state the server's rooms share: struct server (configuration, database,
 * built entries, what SIGHUP may change), struct worker (what every room reads of
 * a worker; the event loop's part is server/net/worker.h's), and the atomic
 * getters of the runtime values. A header of data only, the shared ground at the
 * bottom of server/: every room includes it, and it includes no room of server/ (a
 * connection is only a pointer here, a send policy too). server/start/startup.h is the
 * start-up and shut-down API above them all.
 */
#ifndef MINIDIR_SERVER_SERVER_H
#define MINIDIR_SERVER_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "conf/config.h"
#include "protocol/arena.h"
#include "protocol/buf.h"
#include "server/stats.h"
#include "storage/db.h"

/* The subschema subentry's DN (RFC 4512 4.2): the record of cn=Subschema (server/ops/'s
 * op_subschema_build), named by every entry's subschemaSubentry, cn=monitor's too. */
#define SUBSCHEMA_DN "cn=Subschema"

struct send_policy;
struct tls_server;
struct sasl_server;
struct ops_shared;
struct conn;
struct ldap_request;
struct db_gen;
struct bind_limit;
struct addr_conns;

/*
 * A worker: one thread, its event loop, and what its connections and operations keep
 * between requests. This is the part every room reads (the shared ground below them
 * all): its number and server, the request decoding's work space, its access log lines
 * and its counters. The rooms' own parts stack on it in the rooms' order, each
 * beginning with the one below: struct db_worker (server/db/generation.h: the
 * generation served and the read transaction), struct net_worker
 * (server/net/net_worker.h: engine, listeners, connections and their slabs, the ready
 * list and the waking queue), struct ops_worker (server/ops/ops.h: the operations'
 * caches). Each worker is a struct ops_worker (srv->workers[i] points to one), so a room
 * reaches its part from a struct worker by a cast (db_worker(w), net_worker(w),
 * ops_worker(w)): no pointer to follow.
 */
struct worker {
	int id;
	struct server *srv;
	pthread_t thread;
	/* A request's filter: reset before each decode (server/net/conn_input.c), lent to a
	 * search. */
	struct arena req_mem;
	struct buf scratch;          /* request decoding and filter evaluation work space */
	struct buf access_log;       /* access log lines not yet written (access_log.h) */
	uint64_t access_log_flushed; /* clock_ns() of the last write */
	unsigned access_log_gen;     /* the srv->access_log_gen it writes under (atomic) */
	time_t access_log_second;    /* the second access_log_stamp is of */
	char access_log_stamp[24];   /* "2026-11-30T13:51:14" */
	char access_log_zone[8];     /* "+00:00" */
	struct worker_stats stats;
};

/*
 * What SIGHUP may change while workers run. The main thread stores, workers
 * load; each field is read atomically on its own (see server_reload).
 */
/* The runtime values but the policy, in struct runtime's order: each is the config key of
 * the same name and type (struct config), copied at start-up and by server_reload, which
 * logs a change as "SIGHUP: NAME = " fmt with shown, an expression of the struct config
 * *cfg in scope where the list is expanded. */
#define SERVER_RUNTIME_VALUES(X)                                                                   \
	X(size_t, batch_bytes, "%zu", cfg->batch_bytes)                                            \
	X(size_t, max_pending_bytes, "%zu", cfg->max_pending_bytes)                                \
	X(enum monitor_access, monitor_access, "%s",                                               \
	  config_monitor_access_name(cfg->monitor_access))                                         \
	X(int, write_timeout, "%d", cfg->write_timeout)                                            \
	X(int, idle_timeout, "%d", cfg->idle_timeout)                                              \
	X(int, sizelimit, "%d (0: unlimited)", cfg->sizelimit)                                     \
	X(int, timelimit, "%d (0: unlimited)", cfg->timelimit)                                     \
	X(size_t, max_filter_items, "%zu (0: unlimited)", cfg->max_filter_items)                   \
	X(unsigned long long, max_search_work, "%llu (0: unlimited)", cfg->max_search_work)        \
	X(size_t, inchain_max, "%zu (0: unlimited)", cfg->inchain_max)                             \
	X(bool, allow_anonymous, "%s", cfg->allow_anonymous ? "yes" : "no")                        \
	X(bool, require_tls, "%s", cfg->require_tls ? "yes" : "no")                                \
	X(int, tls_handshake_timeout, "%d", cfg->tls_handshake_timeout)                            \
	X(int, pdu_timeout, "%d", cfg->pdu_timeout)                                                \
	X(size_t, memo_bytes, "%s (for the next database file opened)",                            \
	  config_memo_bytes_text(cfg->memo_bytes, (char[CONFIG_MEMO_TEXT]){0}))

struct runtime {
	const struct send_policy *policy; /* for connections accepted from now on */
#define SERVER_RUNTIME_FIELD(type, field, fmt, shown) type field;
	SERVER_RUNTIME_VALUES(SERVER_RUNTIME_FIELD)
#undef SERVER_RUNTIME_FIELD
};

struct server {
	struct config cfg; /* as loaded at start-up (its access rules moved into access);
	                      runtime holds what reloads change */
	bool check_only;   /* minidir -t: server_init creates no file (no access log) */
	struct runtime runtime;
	const struct send_policy *local_policy; /* ldapi:// connections' (batch: no TCP options) */
	struct db_gen
	    *gen; /* the current database generation (server/db/generation.h): under gen_lock */
	struct replica *replica;  /* the syncrepl consumer (replica/replica.h), NULL when none */
	struct change_feed *feed; /* its changes for sync_provider's searches (change_feed.h), NULL
	                             when off; set before the workers start */
	struct chain_pool *chain; /* chain_passwd's threads (replica/replica.h), NULL when off;
	                            set after the workers start (atomic: replica/chain.c) */
	struct http_server *http; /* the HTTP endpoint (monitor/http.h), NULL when none */
	pthread_mutex_t gen_lock;
	uint64_t gen_min; /* the oldest generation a search may still hold (atomic) */
	uint64_t reloads; /* database files picked up since start-up (atomic) */
	struct db_refused {
		dev_t dev; /* a new file at the database path that was refused, */
		ino_t ino; /* not tried again while it stays as it is */
		off_t size;
		struct timespec mtime;
	} db_refused;
	/* nworkers of them, each the base of its struct ops_worker (server/ops/ops.h) */
	struct worker **workers;
	int nworkers;
	int db_watch_fd; /* holds the read lease on the database file (server/db/db_watch.h); -1:
	                    none */
	/* server/ops's own part (server/ops/ops_impl.h, private to the room): the access
	 * rules in force, the root DSE and cn=Subschema records. Made by ops_start, freed by
	 * ops_stop. */
	struct ops_shared *ops;
	struct tls_server *tls;   /* the TLS context (net/tls.h), NULL when TLS is not configured */
	struct sasl_server *sasl; /* SASL GSSAPI (net/sasl.h), NULL when not offered */
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
	/* A worker whose wait failed for good sets it and sends the process SIGTERM
	 * (worker.c); the main loop then stops the server with status 1, rather than serve on
	 * without that worker. */
	_Atomic int worker_failed;
	/* Runs a decoded request (ops_dispatch): how the connection layer, below the
	 * operations, hands them requests; called only by server/net/conn_input.c's
	 * conn_dispatch_request, the one upward call of server/net/. */
	void (*dispatch)(struct conn *c, struct ldap_request *req);
	/* Read-locked around every accept, write-locked around the spare-descriptor shedding
	 * (net/worker.c), so a descriptor number one worker frees is not taken by another's
	 * accept, while the workers' accepts (each on its own socket) run at once: a mutex
	 * made them take turns (docs/multicore.md). */
	pthread_rwlock_t accept_lock;
	/* The abuse limits (server/bind_limit.h, server/addr_conns.h), made at start-up when
	 * bind_fail_limit or max_conns_per_ip is set; NULL: off. */
	struct bind_limit *bind_limit;
	struct addr_conns *addr_conns;
};

/*
 * Reading what SIGHUP may change, from any thread: server_policy(srv) (acquire:
 * the policy it points to is complete), and server_batch_bytes(srv),
 * server_max_pending_bytes, server_sizelimit, server_timelimit,
 * server_max_filter_items, server_max_search_work, server_inchain_max,
 * server_allow_anonymous, server_idle_timeout, server_write_timeout,
 * server_monitor_access, server_require_tls, server_tls_handshake_timeout,
 * server_pdu_timeout, server_memo_bytes
 * (relaxed: each value stands alone).
 */
static inline const struct send_policy *server_policy(struct server *srv)
{
	return __atomic_load_n(&srv->runtime.policy, __ATOMIC_ACQUIRE);
}
#define SERVER_RUNTIME_GETTER(type, field, fmt, shown)                                             \
	static inline type server_##field(struct server *srv)                                      \
	{                                                                                          \
		return __atomic_load_n(&srv->runtime.field, __ATOMIC_RELAXED);                     \
	}
SERVER_RUNTIME_VALUES(SERVER_RUNTIME_GETTER)
#undef SERVER_RUNTIME_GETTER

#endif
