/*
 * The open connections of all workers, copied for cn=Monitor's connection entries
 * (server/monitor/monitor_slapd.c), from the thread answering that search.
 *
 * Each worker's list is copied under its conns_lock (net_worker.h), which the worker
 * takes only to link or unlink a connection and to change its bound identity: a copy
 * holds one worker at a time, for as long as copying its connections takes (at most
 * max of them in all).
 */
#ifndef MINIDIR_SERVER_NET_CONN_LIST_H
#define MINIDIR_SERVER_NET_CONN_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "server/server.h"

/* One connection as cn=Monitor shows it: texts NUL-terminated, as slapd writes them. */
struct conn_info {
	uint64_t id;           /* its number in the access log */
	uint64_t ops_taken;    /* operations taken */
	uint64_t ops_answered; /* of which answered (or, Unbind and Abandon, done) */
	time_t accepted;       /* when it was accepted (wall clock, time(2)) */
	time_t active;         /* when a request was last read or answered (the same) */
	char peer[80];         /* "IP=host:port", "PATH=socket" (ldapi) */
	char local[80];        /* the same, for our end ("" when the kernel does not say) */
	char listener[96];     /* the listener's URL: "ldap://host:port/" */
	char authz[256];       /* the bound DN ("" anonymous; cut to fit) */
};

/* Copies up to max connections, worker after worker, into out. Returns how many. */
size_t conn_list(struct server *srv, struct conn_info *out, size_t max);

#endif
