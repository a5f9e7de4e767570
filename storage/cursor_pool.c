#include "storage/cursor_pool.h"

#include "storage/db_fault.h"
#include "storage/db_impl.h"

int cursor_pool_take(struct cursor_pool *p, MDB_txn *txn, MDB_dbi dbi, MDB_cursor **out)
{
	if (p && p->env == mdb_txn_env(txn)) {
		for (int i = p->n - 1; i >= 0; i--) {
			if (mdb_cursor_dbi(p->spare[i]) != dbi)
				continue;
			MDB_cursor *c = p->spare[i];
			p->spare[i] = p->spare[--p->n];
			int rc = mdb_cursor_renew(txn, c);
			if (rc != 0) {
				mdb_cursor_close(c);
				return rc;
			}
			db_cursor_track(c);
			*out = c;
			return 0;
		}
	}
	return db_cursor_open(txn, dbi, out);
}

void cursor_pool_give(struct cursor_pool *p, MDB_cursor *c)
{
	if (p && p->env && p->n < CURSOR_POOL_MAX && mdb_txn_env(mdb_cursor_txn(c)) == p->env) {
		db_cursor_untrack(c); /* a spare: nothing to close after a fault */
		p->spare[p->n++] = c;
	} else {
		db_cursor_close(c);
	}
}

void cursor_pool_reset(struct cursor_pool *p, const struct db *db)
{
	/* A read-only transaction's cursor may be closed after the transaction ended. */
	while (p->n > 0)
		mdb_cursor_close(p->spare[--p->n]);
	p->env = db ? db->env : NULL;
}
