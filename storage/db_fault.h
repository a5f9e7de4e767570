/*
 * A thread's way back from LMDB's assertions. LMDB meets some damaged pages (zeroed or
 * overwritten by a bad disk or a stray write) with an assertion rather than an error:
 * mdb_cursor_next stepping onto a page that is not a leaf ("IS_LEAF(mp)"), and its default
 * is abort(), the whole process. Every environment db_open makes calls db_fault_assert
 * instead: on a thread that has set a recovery point (struct db_fault) it jumps back there
 * with LMDB's message; on any other thread it returns, and LMDB aborts as it always did.
 *
 * What the jump leaves behind: LMDB holds no lock in a read-only transaction's reads (a
 * lock file's mutex is taken only when a reader slot is first claimed, in mdb_txn_begin
 * and mdb_txn_renew), so none is held across it; the transaction itself may be half-way
 * through loading a table's root, so the code that set the point resets it before it is
 * read again. The cursors open through db_cursor_open (and the cursor pool's) are
 * tracked per thread: their owners close the ones they know of (a cursor used at the
 * jump is never given back to a pool), and db_fault_end closes those opened since the
 * point was set that nobody closed (a function's own cursor, whose frame the jump left).
 * Other memory a function between the point and LMDB holds for itself would be lost: the
 * points are set where none is (server/ops/search_run.c, op_search.c;
 * storage/db_check.c).
 *
 * Thread rules: a recovery point, and the cursors tracked, belong to the thread that set
 * or opened them.
 */
#ifndef MINIDIR_STORAGE_DB_FAULT_H
#define MINIDIR_STORAGE_DB_FAULT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

/* LMDB's, defined by storage/db_impl.h only (db.h is not included: db.c includes this). */
struct MDB_env;
struct MDB_txn;
struct MDB_cursor;

/* Cursors tracked per thread: more than a thread ever has open at once (a search's
 * candidates, an access rule's and a computed attribute's); one past it is not tracked. */
#define DB_FAULT_CURSORS 16

/* A recovery point: on the caller's stack, from db_fault_begin to db_fault_end. */
struct db_fault {
	sigjmp_buf jump;
	char lmdb[256];        /* LMDB's assertion, after a jump */
	struct db_fault *prev; /* the point it stands in front of (points nest) */
	int cursors;           /* cursors tracked when it was set */
};

/*
 * Setting a point, in the function that must stay on the stack until db_fault_end:
 *
 *     struct db_fault f;
 *     db_fault_begin(&f);
 *     if (sigsetjmp(f.jump, 0) != 0) {
 *             ... LMDB asserted (f.lmdb): close what is known, reset the transaction ...
 *             db_fault_end(&f);
 *             return;
 *     }
 *     ... reads ...
 *     db_fault_end(&f);
 *
 * sigsetjmp cannot go into a function of this module: it must be called in the frame the
 * jump comes back to. Locals changed between the two and read after the jump must be
 * volatile.
 */
void db_fault_begin(struct db_fault *f);
/* Takes f away (the point before it is the thread's again); after a jump, closes the
 * tracked cursors opened since f was set that are still open. */
void db_fault_end(struct db_fault *f);

/* LMDB's assert callback (MDB_assert_func), set on every environment by db_open. Jumps to
 * the thread's point if it has one (never returns then); returns otherwise. */
void db_fault_assert(struct MDB_env *env, const char *msg);

/* mdb_cursor_open and mdb_cursor_close, the cursor tracked in between (see above). */
int db_cursor_open(struct MDB_txn *txn, unsigned int dbi, struct MDB_cursor **cur);
void db_cursor_close(struct MDB_cursor *cur);
/* Tracks c (a cursor renewed for use), or stops tracking it (kept for reuse, unused):
 * the cursor pool's. */
void db_cursor_track(struct MDB_cursor *c);
void db_cursor_untrack(struct MDB_cursor *c);

/* The first bytes of key[0..len) for a log line: printable ones as they are, others as '.',
 * at most cap - 1 of them and a NUL, into out. */
void db_key_printable(const void *key, size_t len, char *out, size_t cap);

#endif
