/* Recovery points from LMDB's assertions, and the cursors tracked for them: db_fault.h. */
#include "storage/db_impl.h"
#include "storage/db_fault.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static _Thread_local struct db_fault *point;
static _Thread_local struct {
	MDB_cursor *open[DB_FAULT_CURSORS];
	int n;
} tracked;

void db_fault_begin(struct db_fault *f)
{
	f->lmdb[0] = '\0';
	f->prev = point;
	f->cursors = tracked.n;
	point = f;
}

void db_fault_end(struct db_fault *f)
{
	point = f->prev;
	/* After a jump, what is still tracked above f's mark lost its owner's frame. */
	while (f->lmdb[0] && tracked.n > f->cursors)
		mdb_cursor_close(tracked.open[--tracked.n]);
}

void db_fault_assert(MDB_env *env, const char *msg)
{
	(void)env;
	struct db_fault *f = point;
	if (!f)
		return; /* no point set on this thread: LMDB aborts */
	snprintf(f->lmdb, sizeof(f->lmdb), "LMDB: %s", msg);
	point = f->prev; /* the code after the jump runs in front of the point before */
	siglongjmp(f->jump, 1);
}

void db_cursor_track(MDB_cursor *c)
{
	if (tracked.n < DB_FAULT_CURSORS)
		tracked.open[tracked.n++] = c;
}

void db_cursor_untrack(MDB_cursor *c)
{
	/* The last opened is the usual one to go: searched from the top. */
	for (int i = tracked.n - 1; i >= 0; i--)
		if (tracked.open[i] == c) {
			memmove(&tracked.open[i], &tracked.open[i + 1],
			        (size_t)(tracked.n - 1 - i) * sizeof(tracked.open[0]));
			tracked.n--;
			return;
		}
}

int db_cursor_open(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cur)
{
	int rc = mdb_cursor_open(txn, dbi, cur);
	if (rc == 0)
		db_cursor_track(*cur);
	return rc;
}

void db_cursor_close(MDB_cursor *cur)
{
	db_cursor_untrack(cur);
	mdb_cursor_close(cur);
}

void db_key_printable(const void *key, size_t len, char *out, size_t cap)
{
	size_t n = len < cap - 1 ? len : cap - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char b = ((const unsigned char *)key)[i];
		out[i] = isprint(b) ? (char)b : '.';
	}
	out[n] = '\0';
}
