/*
 * The server's start-up and shut-down: configuration, database and a pool of
 * workers. Each worker runs its own event loop (epoll or io_uring: server/net/
 * engine.h) over its own listening sockets (SO_REUSEPORT, so the kernel spreads
 * new connections) and the connections it accepted; a request is read, decoded,
 * searched and answered on that thread, with no queue or hand-off
 * (docs/ARCHITECTURE.md, "Threads and who owns what").
 */
#ifndef MINIDIR_SERVER_START_STARTUP_H
#define MINIDIR_SERVER_START_STARTUP_H

#include "server/server.h"

/*
 * Loads the schema, opens the database, builds the root DSE and prepares the
 * workers (no socket yet: `minidir -t` stops here). Returns 0, or -1 after
 * logging why; server_stop frees what was made either way.
 */
int server_init(struct server *srv);
/* minidir -t: reads every page of the database file server_init opened (storage/db_check.h),
 * logging the table and record where one is damaged. Returns 0, or -1 after that line. */
int server_check_pages(struct server *srv);
/* Starts the workers (after listeners_bind, listeners.h), then the syncrepl consumer of a
 * replica, which opens held listeners once its first refresh has committed; returns 0 or
 * -1. */
int server_start(struct server *srv);
/* Stops the consumer of a replica, asks every worker to stop, waits for them, and
 * frees everything. */
void server_stop(struct server *srv);

/*
 * Re-reads the config file (SIGHUP), on the main thread. The keys of struct
 * runtime take effect at once: send_policy (for connections accepted from then
 * on), batch_bytes, max_pending_bytes, monitor_access, write_timeout,
 * idle_timeout, sizelimit, timelimit, max_filter_items, max_search_work, inchain_max,
 * allow_anonymous, require_tls, tls_handshake_timeout and pdu_timeout (memo_bytes for
 * the next database file opened); the TLS
 * certificate and key are read again, the access log reopened. Other changed
 * keys are logged as needing a restart. A config with errors is logged and ignored.
 * A database file replaced by a new import is picked up (server_db_check).
 * Returns 0 or -1.
 */
int server_reload(struct server *srv);

/*
 * Database reload, on the main thread (once a second and at SIGHUP): if the
 * file at the database path is another than the one served (device, inode),
 * opens it, checks it (format, suffix), builds what depends on its data (the
 * bind decoy) and makes it the current generation (server/db/generation.h); the lease
 * follows it. Logs "database reloaded: PATH (N entries, imported TIME ...)",
 * or why the file was refused (it is not tried again until it changes; the
 * previous one keeps serving). A file another process still has open for
 * writing waits for the next round.
 */
void server_db_check(struct server *srv);

#endif
