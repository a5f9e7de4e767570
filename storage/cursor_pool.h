/*
 * Read-only LMDB cursors kept for reuse. Opening a cursor allocates and closing
 * it frees; a 1-entry lookup opens one (its index set) and that pair was about
 * 250 instructions of 9,200. A cursor of a read-only transaction may instead be
 * renewed onto the next read-only transaction of the same environment
 * (mdb_cursor_renew), so a worker keeps the cursors its searches are done with.
 *
 * A pool serves one environment (cursor_pool_reset names it): a cursor of another
 * one is opened and closed as without a pool. Read-only transactions only.
 *
 * Thread rules: a pool belongs to one thread (a worker's).
 */
#ifndef MINIDIR_STORAGE_CURSOR_POOL_H
#define MINIDIR_STORAGE_CURSOR_POOL_H

#include "storage/db.h"

/* Spare cursors kept: one per table a search reads through a cursor is plenty. */
#define CURSOR_POOL_MAX 4

/* A zeroed pool serves no environment (everything is opened and closed). */
struct cursor_pool {
	struct MDB_env *env;
	struct MDB_cursor *spare[CURSOR_POOL_MAX];
	int n;
};

/*
 * A cursor on table dbi in read-only txn in *out: a spare one renewed, or a new one.
 * p may be NULL (always a new one). Returns 0 or an LMDB error.
 */
int cursor_pool_take(struct cursor_pool *p, struct MDB_txn *txn, db_table dbi,
                     struct MDB_cursor **out);
/* c is done with (call while its transaction is still open): kept if p serves its
 * environment and has room, closed otherwise. p may be NULL. */
void cursor_pool_give(struct cursor_pool *p, struct MDB_cursor *c);
/* Closes every spare cursor; from now on p serves db's file (NULL: none). take and give are
 * candidates.c's (storage/), in the transaction its handle stands for. */
void cursor_pool_reset(struct cursor_pool *p, const struct db *db);

#endif
