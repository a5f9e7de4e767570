/*
 * server/ops's own part of the server: what the room keeps from start-up to shut-down,
 * reached through struct server's opaque ops pointer (server/server.h). Private to the
 * room: scripts/layers.sh refuses it to files of any other room, so the access rules in
 * force and the root DSE and cn=Subschema records are changed only by server/ops, under
 * its own lock, never under another room's.
 *
 * Owned by the server from ops_start (which makes it) to ops_stop (which frees it and
 * everything in it); the records are read by every worker, written only by the main
 * thread before the workers start (op_rootdse_build, op_subschema_build).
 */
#ifndef MINIDIR_SERVER_OPS_OPS_IMPL_H
#define MINIDIR_SERVER_OPS_OPS_IMPL_H

#include <pthread.h>

#include "protocol/buf.h"
#include "server/server.h"

struct access_rules;
struct authz_rules;
struct sasl_pool;

struct ops_shared {
	/* The access rules in force (access_rules.h): access_publish stores a set under lock
	 * and releases the one it replaces; an operation's start loads it atomically and, when
	 * it changed, takes a reference under lock (access.c's take_current_rules). */
	pthread_mutex_t lock;
	struct access_rules *access;
	struct buf rootdse;          /* the root DSE, as a stored entry record */
	struct buf subschema;        /* cn=Subschema, as a stored entry record */
	struct authz_rules *authz;   /* authz_regexp, compiled (authz_map.h); NULL: none */
	struct sasl_pool *sasl_pool; /* SASL bind steps' threads (sasl_pool.h), with srv->sasl */
};

/* srv's server/ops part (NULL before ops_start and after ops_stop). */
static inline struct ops_shared *ops_shared(const struct server *srv)
{
	return srv->ops;
}

/* A zeroed part with its lock made, or NULL when out of memory; freed by ops_shared_free
 * (which frees its records and releases its access rules). For ops_start, and for the
 * room's unit tests that build records without starting a server. */
struct ops_shared *ops_shared_new(void);
void ops_shared_free(struct ops_shared *s);

#endif
