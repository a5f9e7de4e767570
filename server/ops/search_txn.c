#include "server/ops/search_txn.h"

#include "server/clock.h"
#include "server/log.h"

void search_txn_start(struct search_txn *t, struct worker *w, void (*expire)(struct db_hold *h))
{
	db_hold_begin(w, &t->hold, expire);
	t->db = &db_worker(w)->gen->db;
}

void search_txn_planned(struct search_txn *t, struct worker *w)
{
	t->txn = db_worker(w)->txn;
	t->live = true;
}

/* Inlined into search_run (with LTO) whoever else calls them (the persistent search):
 * out of line, a lookup cost 40 instructions more (bench/perf_check.sh). */
__attribute__((always_inline)) inline int search_txn_slice_begin(struct search_txn *t,
                                                                 struct worker *w)
{
	int rc = 0;
	if (t->live) {
		/* the transaction it planned in, or the snapshot it keeps: as it was */
	} else if (t->hold.gen == db_worker(w)->gen) {
		t->txn = db_worker(w)->txn;
		rc = db_gen_txn_begin(w);
	} else if (t->own_txn) {
		t->txn = t->own_txn;
		rc = db_read_renew(t->txn);
	} else {
		rc = db_read_begin(&t->hold.gen->db, &t->own_txn);
		t->txn = t->own_txn;
	}
	return rc;
}

__attribute__((always_inline)) inline void search_txn_slice_end(struct search_txn *t,
                                                                struct worker *w, bool goes_on)
{
	if (!t->txn)
		return;
	if (goes_on && db_changes_in_place(t->db)) {
		if (t->txn != db_worker(w)->txn) { /* its own already */
			t->live = true;
		} else {
			struct db_read *fresh;
			if (db_read_begin(&db_worker(w)->gen->db, &fresh) == 0) {
				db_read_reset(fresh);
				if (t->own_txn)
					db_read_end(t->own_txn);
				t->own_txn = t->txn;
				db_worker(w)->txn = fresh;
				db_worker(w)->txn_open = false;
				t->live = true;
			}
		}
		if (t->live) {
			if (!t->hold.pinned_since)
				t->hold.pinned_since = clock_seconds();
			return;
		}
		log_debug("search: cannot keep a snapshot (no reader slot); the next slice reads "
		          "the newest data");
	}
	if (t->txn == db_worker(w)->txn)
		db_gen_txn_end(w);
	else
		db_read_reset(t->txn);
	t->live = false;
}

void search_txn_failed(struct search_txn *t, struct worker *w)
{
	if (t->txn == db_worker(w)->txn)
		db_gen_txn_failed(w);
	else if (t->txn)
		db_read_reset(t->txn); /* its own: aborted by search_txn_end */
	t->live = false;
}

void search_txn_end(struct search_txn *t, struct worker *w)
{
	if (t->live && t->txn == db_worker(w)->txn)
		db_gen_txn_end(w); /* ended before its first slice */
	if (t->own_txn)
		db_read_end(t->own_txn);
	db_hold_end(w, &t->hold);
}
