/* A walk of every table of a database file: db_check.h. */
#include "storage/db_check.h"
#include "storage/db_fault.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

/*
 * Where the walk is, for its message. LMDB meets some damaged pages with an assertion
 * (mdb_cursor_next: "IS_LEAF(mp)"), which db_fault.h turns into a jump back to
 * db_check_pages: it reports where, db_fault_end closes the walk's cursors, and the
 * read-only transaction is ended (which frees its reader slot without reading a page).
 * The callers stop after a failed check.
 */
struct walk_state {
	const char *table;
	size_t n;
	char lastkey[64];
	bool have_key;
};

/* k noted as the last key read (printable bytes only). */
static void note_key(struct walk_state *ws, const MDB_val *k)
{
	db_key_printable(k->mv_data, k->mv_size, ws->lastkey, sizeof(ws->lastkey));
	ws->have_key = true;
}

/* Every record of dbi, named table in ws. 0, or the LMDB error. */
static int walk(MDB_txn *txn, MDB_dbi dbi, const char *table, struct walk_state *ws, size_t *count)
{
	ws->table = table;
	ws->n = 0;
	ws->have_key = false;
	MDB_cursor *cur;
	int rc = db_cursor_open(txn, dbi, &cur);
	if (rc)
		return rc;
	MDB_val k, v;
	volatile unsigned char sink = 0;
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		/* Touch the value's last byte: a record on overflow pages reads its last page. */
		if (v.mv_size)
			sink ^= ((const unsigned char *)v.mv_data)[v.mv_size - 1];
		note_key(ws, &k);
		ws->n++;
	}
	(void)sink;
	db_cursor_close(cur);
	*count += ws->n;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The tables named in the main table, walked in turn. 0 or the LMDB error. */
static int walk_all(MDB_txn *txn, struct walk_state *ws, size_t *records)
{
	MDB_dbi main_dbi;
	MDB_cursor *names;
	int rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
	if (rc || (rc = walk(txn, main_dbi, "(main)", ws, records)) ||
	    (rc = db_cursor_open(txn, main_dbi, &names)))
		return rc;
	MDB_val k, v;
	while (rc == 0 && (rc = mdb_cursor_get(names, &k, &v, MDB_NEXT)) == 0) {
		char name[128];
		MDB_dbi dbi;
		if (k.mv_size == 0 || k.mv_size >= sizeof(name) || memchr(k.mv_data, 0, k.mv_size))
			continue; /* not a table's name */
		memcpy(name, k.mv_data, k.mv_size);
		name[k.mv_size] = '\0';
		if (mdb_dbi_open(txn, name, 0, &dbi) != 0)
			continue; /* a record of the main table, not a table */
		rc = walk(txn, dbi, name, ws, records);
	}
	db_cursor_close(names);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int db_check_pages(const struct db *db, size_t *records, char *why, size_t cap)
{
	MDB_txn *txn;
	*records = 0;
	int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
	if (rc) {
		snprintf(why, cap, "%s", mdb_strerror(rc));
		return rc;
	}
	static _Thread_local struct walk_state ws;
	memset(&ws, 0, sizeof(ws));
	ws.table = "(main)";
	struct db_fault f;
	db_fault_begin(&f);
	if (sigsetjmp(f.jump, 0) == 0)
		rc = walk_all(txn, &ws, records);
	else /* LMDB asserted (f.lmdb) */
		rc = MDB_CORRUPTED;
	db_fault_end(&f);
	mdb_txn_abort(txn);
	if (rc)
		snprintf(why, cap, "table \"%s\": after %zu records%s%s%s: %s", ws.table, ws.n,
		         ws.have_key ? ", key \"" : "", ws.have_key ? ws.lastkey : "",
		         ws.have_key ? "\"" : "", f.lmdb[0] ? f.lmdb : mdb_strerror(rc));
	return rc;
}
