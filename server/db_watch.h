/*
 * Watching the database file while it is served. minidir-import replaces the
 * file by rename, so the file a server has mapped never changes. Written in
 * place instead (`cp other.mdb DATABASE`, truncate), its mapped pages would
 * change or vanish under the workers: LMDB would read garbage or die of
 * SIGBUS. The server holds a read lease on the file: the kernel tells it
 * (DB_WATCH_SIGNAL) when another process opens the file for writing or
 * truncates it, and holds that process back until the lease is released (up to
 * /proc/sys/fs/lease-break-time seconds), so the server can stop cleanly first.
 * Where a lease cannot be had (another owner, a network file system), a fault
 * in the mapped file stops the server with a clear line rather than a crash.
 */
#ifndef MINIDIR_SERVER_DB_WATCH_H
#define MINIDIR_SERVER_DB_WATCH_H

#include <signal.h>

#include "server/state.h"

/* The signal a lease break sends; the main thread waits for it with sigwait. */
#define DB_WATCH_SIGNAL (SIGRTMIN + 1)

/*
 * Takes the lease on srv->cfg.database (after the database is open) and
 * installs the fault handler. Logs, and carries on without the lease, when it
 * cannot be had. DB_WATCH_SIGNAL must be blocked in every thread.
 */
void db_watch_start(struct server *srv);
/* Releases the lease (lets a waiting writer go on). */
void db_watch_stop(struct server *srv);

#endif
