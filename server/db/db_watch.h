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
 *
 * A new file renamed over the path is served as a new generation (generation.h):
 * the lease moves to it, and the fault handler knows the ranges of every file
 * still mapped (old generations a running search still reads).
 */
#ifndef MINIDIR_SERVER_DB_DB_WATCH_H
#define MINIDIR_SERVER_DB_DB_WATCH_H

#include <signal.h>

#include "server/server.h"

/* The signal a lease break sends; the main thread waits for it with sigtimedwait
 * (its si_fd tells which lease: one let go at a reload is no alarm). */
#define DB_WATCH_SIGNAL (SIGRTMIN + 1)

/* Database files (generations, generation.h) the fault handler can tell apart. */
#define DB_WATCH_MAPS 8

/*
 * Installs the fault handler, registers the database file (dev, ino: the one
 * srv->cfg.database names, open) with it and takes the lease on it (after the
 * database is open). Logs, and carries on without the lease, when it cannot be
 * had. DB_WATCH_SIGNAL must be blocked in every thread. Returns the file's map
 * slot (for db_watch_map_remove), or -1.
 */
int db_watch_start(struct server *srv, dev_t dev, ino_t ino);

/*
 * Adds the map of the database file (dev, ino) to the ranges the fault handler
 * knows (path: for the log). Returns its slot, or -1 (logged) when it is not
 * mapped or every slot is taken. Any thread.
 */
int db_watch_map_add(dev_t dev, ino_t ino, const char *path);
/* Forgets slot (before the file is unmapped). Any thread; -1 does nothing. */
void db_watch_map_remove(int slot);

/*
 * Opens path and takes a read lease on it, if it is still the file (dev, ino).
 * Returns 0 with the descriptor in *fd; 1 when no lease can be had (errno
 * EAGAIN: another process has the file open for writing; others: the file
 * system refuses leases); -1 when it cannot be opened or is another file
 * (errno ESTALE).
 */
int db_watch_lease(const char *path, dev_t dev, ino_t ino, int *fd);
/* Makes fd (from db_watch_lease; -1: none) the lease the server holds, closing
 * the previous one: its file was replaced. Main thread. */
void db_watch_set(struct server *srv, int fd);

/* Releases the lease (lets a waiting writer go on). */
void db_watch_stop(struct server *srv);

#endif
