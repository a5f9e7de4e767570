/*
 * The read transaction a search reads through, from one slice to the next (search_run.c):
 * the database generation it holds (server/db/generation.h: it reads that file to its end,
 * however long it pauses) and, on a database changed in place (a replica, written by the
 * consumer), one snapshot from its start to its end: the transaction the search planned
 * in serves its first slice, and a search that pauses (a full socket, a yield to other
 * connections) or parks for its next page keeps that transaction as its own while the
 * worker takes a new one. The generations' sweep (db_gen_worker_sweep) ends a search that
 * keeps one longer than DB_SNAPSHOT_MAX_SECONDS. On an imported file (which never changes)
 * the worker's transaction stays open from slice to slice and from one operation to the
 * next (db_gen_txn_begin): the usual search allocates nothing here.
 *
 * Thread rules: the worker that runs the search.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_TXN_H
#define MINIDIR_SERVER_OPS_SEARCH_TXN_H

#include <stdbool.h>

#include "server/db/db.h"

struct search_txn {
	struct db_hold hold;     /* the generation it reads, from start to end */
	const struct db *db;     /* hold's database */
	struct db_read *txn;     /* the read transaction of the slice running */
	struct db_read *own_txn; /* its own: on hold's generation once the worker moved on, or the
	                     snapshot it keeps (live); or NULL */
	bool live;               /* txn is open on the snapshot the search began on: the next
	                            slice reads it as it is, without a renew */
};

/* t holds w's generation from now on; expire is db_hold's (see server/db/generation.h). */
void search_txn_start(struct search_txn *t, struct worker *w, void (*expire)(struct db_hold *h));

/* The search planned in w's transaction (renewed, not reset): its first slice goes on
 * in it. */
void search_txn_planned(struct search_txn *t, struct worker *w);

/* Sets t->txn for a slice: as it is (live), the worker's renewed, or t's own (made the
 * first time the worker has moved to a newer generation). Returns 0 or an LMDB error. */
int search_txn_slice_begin(struct search_txn *t, struct worker *w);

/* Ends a slice: resets the transaction, or, when the search goes on over a database
 * changed in place, keeps it as t's own snapshot (the worker gets a new one). */
void search_txn_slice_end(struct search_txn *t, struct worker *w, bool goes_on);

/* LMDB asserted in the slice's transaction (storage/db_fault.h): it is not read again (the
 * search is to end); the worker's is renewed by its next operation (db_gen_txn_failed), the
 * search's own reset now. */
void search_txn_failed(struct search_txn *t, struct worker *w);

/* The search ends: its transactions and its hold go (the last reference to an old
 * generation closes it). */
void search_txn_end(struct search_txn *t, struct worker *w);

#endif
