/*
 * Generations of the database: each file minidir-import renames over the
 * database path is opened as a new generation, and a search reads one
 * generation from its start to its end, however long it pauses (slow client,
 * paged results), while new operations read the newest.
 *
 * A generation is refcounted. The server holds the current one (srv->gen);
 * each worker holds the one it serves (struct db_worker's gen, with its txn on
 * that environment) and moves to the current one between operations
 * (db_gen_worker_switch, from the event loop). A search borrows the worker's
 * reference through a db_hold: no atomic and no allocation while the worker
 * stays on the search's generation; when the worker moves on, the holds still
 * on the old generation each take a reference of their own. The last release
 * closes the environment (unmaps the file).
 *
 * The bound on old generations: a search may hold the current generation or
 * the one before it. At a reload, holds two generations old are expired by
 * their worker within a second (db_gen_worker_sweep calls their expire hook),
 * so at most two database files stay mapped, plus, for under a second, those
 * being let go.
 *
 * Thread rules: db_gen_open, db_gen_publish in the main thread; holds, the
 * switch and the sweep in the worker that owns them; db_gen_release anywhere.
 */
#ifndef MINIDIR_SERVER_DB_GENERATION_H
#define MINIDIR_SERVER_DB_GENERATION_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "conf/config.h"
#include "server/server.h"
#include "storage/cursor_pool.h"
#include "storage/db.h"

struct db_hold;

/*
 * The database's part of a worker, owned by server/db/: a struct worker first (what
 * every room reads, server/server.h), then the generation it serves and its read
 * transaction. The parts of a worker stack in the order of the rooms: struct
 * net_worker (server/net/net_worker.h) begins with this one, and every worker is one,
 * so db_worker(w) is a cast, no pointer to follow.
 */
struct db_worker {
	struct worker base;         /* first: db_worker() casts to it and back */
	struct db_gen *gen;         /* the database generation it serves, held */
	struct db_read *txn;        /* its read transaction on gen (db_gen_txn_begin, _end) */
	bool txn_open;              /* txn is open, not reset: kept between operations on a file
	                               that never changes in place */
	bool txn_failed;            /* a read in txn failed (db_gen_txn_failed): renew it */
	struct cursor_pool cursors; /* searches' spare cursors on gen's environment */
	struct db_hold *holds;      /* operations reading a generation over several rounds */
};

/* w's database part: w is the base of a struct db_worker, as every worker is. */
static inline struct db_worker *db_worker(struct worker *w)
{
	return (struct db_worker *)w;
}

struct db_gen {
	struct db db;
	unsigned long refs; /* atomic */
	uint64_t number;    /* 1: the database opened at start-up; one more per reload */
	dev_t dev;          /* the file mapped */
	ino_t ino;
	int map_slot;     /* its address range in the fault handler (db_watch.h); -1: none */
	char *bind_decoy; /* op_bind_prepare's, for this data */
	size_t bind_decoy_len;
	uint64_t bind_decoy_ns; /* how long checking a password against it takes */
	uint64_t
	    bind_pad_ns; /* a failed bind is answered this long after it was read (op_bind.c) */
};

/*
 * Opens the database file at path read-only as a new generation (one
 * reference, number 0 until published) and checks it: that it is whole (not cut
 * short: db_open), its format, and that it holds suffix (as the config names it). Its
 * memos take memo_bytes at most (memo_bytes; storage/db.h's db_open_served; CONFIG_MEMO_AUTO:
 * memo_auto_bytes's budget, logged). The file is
 * read with the kernel's read-ahead or without it as readahead decides for its size
 * (server/db/readahead.h), which is logged. Returns NULL with the reason in err.
 */
struct db_gen *db_gen_open(const char *path, const char *suffix, size_t memo_bytes,
                           enum db_readahead readahead, char *err, size_t errlen);

static inline void db_gen_hold(struct db_gen *g)
{
	__atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
}

/* Drops a reference; the last closes the environment and frees g. */
void db_gen_release(struct db_gen *g);

/*
 * Makes g (opened, checked, with its decoy; the caller's reference passes to
 * the server) the current generation, numbered one past the last, and releases
 * the server's reference to the previous one. From now on workers move to g
 * between operations, and holds older than the previous generation expire.
 */
void db_gen_publish(struct server *srv, struct db_gen *g);

/* The current generation with a reference of the caller's (any thread). */
struct db_gen *db_gen_current(struct server *srv);

/* --- holds: an operation that reads one generation over several loop rounds --------- */

struct db_hold {
	struct db_gen *gen;
	bool owned; /* a reference of its own (its worker moved on); else the worker's */
	struct db_hold *prev, *next; /* the worker's holds */
	/* The generation is two reloads old, or the operation has pinned a snapshot of a
	 * database changed in place for longer than DB_SNAPSHOT_MAX_SECONDS: end the
	 * operation now if it waits for its client (db_hold_end follows), or let it see
	 * db_hold_expired at its next step. */
	void (*expire)(struct db_hold *h);
	time_t pinned_since; /* when the operation began to keep its snapshot; 0: it does not */
};

/* How long a search may keep its view of a database that changes in place (a replica)
 * while it waits for its client or its next page: a read transaction held open keeps
 * LMDB from reusing the pages the writer has freed since. */
#define DB_SNAPSHOT_MAX_SECONDS 60

/* h holds w's generation, for an operation that runs on w. */
void db_hold_begin(struct worker *w, struct db_hold *h, void (*expire)(struct db_hold *h));
/* Lets go of h's generation (the last reference closes it). */
void db_hold_end(struct worker *w, struct db_hold *h);
/* True if h's generation is older than a search may keep (see the bound above). */
bool db_hold_expired(struct server *srv, const struct db_hold *h);

/* --- the worker's side ----------------------------------------------------------------- */

/* On w's own thread, before its first operation: the memos' hits and misses of its lookups
 * are counted in w->stats.memo (storage/memo_counts.h). */
void db_gen_worker_start(struct worker *w);
/*
 * Moves w to the current generation if it is not on it: between operations
 * only (from the event loop). db_worker(w)->txn becomes a transaction of the new
 * environment. On failure (out of memory) w stays where it is and tries again
 * at the next round.
 */
void db_gen_worker_switch(struct worker *w);
/*
 * db_worker(w)->txn for an operation: renewed, or still open from the last one on a file that
 * never changes in place (an imported one: there is nothing new to see, and keeping
 * it spares the renewal and LMDB's look-up of each table's root in every new
 * transaction) unless a read in it failed (db_gen_txn_failed). Returns 0 or an LMDB
 * error.
 */
int db_gen_txn_begin(struct worker *w);
/*
 * A read in db_worker(w)->txn failed (an LMDB error other than DB_NOTFOUND: a damaged page,
 * DB_CORRUPTED or DB_PAGE_NOTFOUND, after which LMDB refuses the transaction; or an
 * assertion, storage/db_fault.h, which may have left it half-way through a read): the next
 * db_gen_txn_begin resets and renews it, logged. Called by each operation where its reads
 * in the worker's transaction fail; a failure an operation does not see (an access rule's
 * lookup that fails counts as no access) is seen by the next operation's read, which
 * fails with DB_BAD_TXN and calls it.
 */
void db_gen_txn_failed(struct worker *w);
/* The operation is done with db_worker(w)->txn: reset where the file changes in place (a
 * replica's: the next operation sees the consumer's writes, and no old snapshot stays
 * pinned), kept open otherwise. */
void db_gen_txn_end(struct worker *w);
/* True if db changes in place (a replica's, written by the consumer); an imported
 * file never does (it is opened MDB_NOLOCK and replaced whole). */
bool db_changes_in_place(const struct db *db);
/* Once a second: expires w's holds on generations too old to keep. */
void db_gen_worker_sweep(struct worker *w);

#endif
