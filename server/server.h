/*
 * The server: configuration, database and a pool of workers. Each worker runs
 * its own epoll loop over its own listening sockets (SO_REUSEPORT, so the
 * kernel spreads new connections) and the connections it accepted; a request
 * is read, decoded, searched and answered on that thread, with no queue or
 * hand-off (DESIGN.md, "Threads").
 */
#ifndef MINIDIR_SERVER_SERVER_H
#define MINIDIR_SERVER_SERVER_H

#include <lber.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "conf/config.h"
#include "server/policy.h"
#include "server/stats.h"
#include "storage/db.h"

struct conn;

struct worker {
	int id;
	struct server *srv;
	pthread_t thread;
	int epfd;
	int wakefd; /* eventfd: the main thread asks the loop to stop */
	int listenfd[CONFIG_MAX_LISTEN];
	int nlisten;
	int reservefd;      /* spare descriptor, freed to shed a connection at EMFILE */
	MDB_txn *txn;       /* this worker's read transaction, reset between slices */
	BerElement *ber;    /* reused by every request decode */
	struct buf scratch; /* filter evaluation work space */
	struct conn *conns; /* all connections of this worker */
	struct conn *ready; /* connections with a search to continue */
	struct worker_stats stats;
};

struct server {
	struct config cfg;
	struct db db;
	const struct send_policy *policy;
	struct worker *workers;
	int nworkers;
	struct buf rootdse; /* the root DSE as a stored SearchResultEntry protocolOp */
	time_t started;
	volatile int stopping;
};

/*
 * Opens the database, builds the root DSE and binds every listening socket
 * for every worker. Returns 0, or -1 after logging why.
 */
int server_init(struct server *srv);
/* Starts the workers; returns 0 or -1. */
int server_start(struct server *srv);
/* Asks every worker to stop, waits for them, and frees everything. */
void server_stop(struct server *srv);

#endif
