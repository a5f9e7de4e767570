/*
 * The database room's public header: generations of the database file served
 * (generation.h: which file a search reads, and when an old one is let go) and
 * the guard on the file mapped (db_watch.h, the file guard: a lease against writes in place,
 * and a clear stop on a fault in a mapped page). The LMDB environment itself is
 * storage/db.h's.
 *
 * An umbrella of the room's two headers, both public: generation.h for server/ops/ (a
 * search's generation and read transaction: db_gen_txn_begin, db_gen_hold, db_hold_*),
 * the net room's loop (db_gen_worker_switch, db_gen_worker_sweep), start-up
 * (db_gen_open, db_gen_publish, db_gen_current) and the replica (struct db_gen: the
 * environment it writes); db_watch.h for start-up and main
 * (the lease and the fault handler: db_watch_*, DB_WATCH_SIGNAL). The room has no
 * header of its own beyond them.
 */
#ifndef MINIDIR_SERVER_DB_DB_H
#define MINIDIR_SERVER_DB_DB_H

#include "server/db/db_watch.h"
#include "server/db/generation.h"

#endif
