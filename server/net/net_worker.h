/*
 * The event loop's part of a worker (struct net_worker), owned by server/net/, apart
 * from the loop's functions (worker.h) so that the engines (engine.h), which the loop
 * calls, can read it too. A header of data only.
 */
#ifndef MINIDIR_SERVER_NET_NET_WORKER_H
#define MINIDIR_SERVER_NET_NET_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "conf/config.h"
#include "protocol/buf.h"
#include "server/db/db.h"
#include <pthread.h>

#include "server/net/slab.h"
#include "server/server.h"

struct engine_ops;
struct conn;
struct conn_impl;
struct conn_wake;
struct worker_hooks;

/*
 * The event loop's part of a worker, owned by server/net/: the database's part first
 * (struct db_worker, itself beginning with the struct worker every room reads), then
 * what only the loop and its connections use. Every worker is one (srv->workers);
 * net_worker(w) is the way from a struct worker.
 */
struct net_worker {
	struct db_worker db;             /* first: net_worker() casts to it and back */
	const struct engine_ops *engine; /* epoll or io_uring (engine.h) */
	void *engine_state;              /* the engine's own */
	int wakefd;                      /* eventfd: the main thread asks the loop to stop */
	int listenfd[CONFIG_MAX_LISTEN];
	const struct listen_addr *listen_addr[CONFIG_MAX_LISTEN]; /* what each listener is
	                                                            (srv->cfg's) */
	int nlisten;
	int reservefd;       /* spare descriptor, freed to shed connections at EMFILE; -1: lost */
	bool listen_paused;  /* listeners not watched until a descriptor is free */
	bool listen_held;    /* not listening yet (listen_after_refresh); atomic */
	bool listen_release; /* listeners_open asks the worker to watch them; atomic */
	/* clock_ns() when the loop last woke: a request read in that round counts its
	 * latency from there (one clock read a round, not one a request) */
	uint64_t round_ns;
	struct buf tls_in;       /* ciphertext just received, before decryption (conn_tls.c) */
	struct buf sasl_scratch; /* bytes a SASL layer wraps or unwraps (conn_sasl.c) */
	struct conn_impl *conns; /* all connections of this worker */
	/* Held by the worker while it links or unlinks a connection or changes its bound
	 * identity, and by conn_list (another thread) while it copies them: never on a
	 * search's path, and contended only while cn=Monitor is read (conn_list.h). */
	pthread_mutex_t conns_lock;
	struct slab conn_slab;  /* where they are allocated */
	struct slab ident_slab; /* their bound identities (conn_set_identity) */
	size_t trim_bytes;  /* heap bytes its connections gave back since the last malloc_trim */
	size_t trim_last;   /* trim_bytes at the last sweep (conn_life.c) */
	size_t input_bytes; /* request bytes buffered on its connections (conn_input.c,
	                       conn_account_input) */
	struct conn_impl *ready; /* connections with a search to continue */
	/* Tasks that resume at a given time (conn_wake.c), first due first, and the first
	 * one's time: the loop waits no longer than that (0: none waits). */
	struct conn_wake *waking, *waking_last;
	uint64_t wake_ns;
	const struct worker_hooks *hooks; /* the layer above the loop (worker.h) */
};

/* w's event-loop part: w is the base of a struct net_worker, as every worker is. */
static inline struct net_worker *net_worker(struct worker *w)
{
	return (struct net_worker *)w;
}

#endif
