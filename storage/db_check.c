/* A walk of every table of a database file: db_check.h. */
#include "storage/db_check.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

/*
 * Where the walk is, for its message. LMDB meets some damaged pages with an assertion
 * (mdb_cursor_next: "IS_LEAF(mp)"), which would abort the process: its assert callback
 * (mdb_env_set_assert) jumps back to db_check_pages instead, which reports where, closes
 * the walk's cursors and ends its read-only transaction (which frees them and its reader
 * slot without reading a page). The callers stop after a failed check.
 */
struct walk_state {
	const char *table;
	size_t n;
	char lastkey[64];
	bool have_key;
	char lmdb[256];          /* the assertion LMDB reported */
	MDB_cursor *cur, *names; /* open cursors, closed after a jump */
	sigjmp_buf jump;
};
static _Thread_local struct walk_state *walking;

static void on_assert(MDB_env *env, const char *msg)
{
	(void)env;
	if (!walking)
		return; /* not ours: LMDB aborts as it would */
	snprintf(walking->lmdb, sizeof(walking->lmdb), "LMDB: %s", msg);
	siglongjmp(walking->jump, 1);
}

/* The first bytes of k into ws->lastkey, printable ones as they are, others as '.'. */
static void note_key(struct walk_state *ws, const MDB_val *k)
{
	size_t cap = sizeof(ws->lastkey), n = k->mv_size < cap - 1 ? k->mv_size : cap - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char b = ((const unsigned char *)k->mv_data)[i];
		ws->lastkey[i] = isprint(b) ? (char)b : '.';
	}
	ws->lastkey[n] = '\0';
	ws->have_key = true;
}

/* Every record of dbi, named table in ws. 0, or the LMDB error. */
static int walk(MDB_txn *txn, MDB_dbi dbi, const char *table, struct walk_state *ws, size_t *count)
{
	ws->table = table;
	ws->n = 0;
	ws->have_key = false;
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn, dbi, &cur);
	if (rc)
		return rc;
	ws->cur = cur;
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
	ws->cur = NULL;
	mdb_cursor_close(cur);
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
	    (rc = mdb_cursor_open(txn, main_dbi, &names)))
		return rc;
	ws->names = names;
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
	ws->names = NULL;
	mdb_cursor_close(names);
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
	walking = &ws;
	mdb_env_set_assert(db->env, on_assert);
	if (sigsetjmp(ws.jump, 0) == 0) {
		rc = walk_all(txn, &ws, records);
	} else { /* from on_assert */
		rc = MDB_CORRUPTED;
		if (ws.cur)
			mdb_cursor_close(ws.cur);
		if (ws.names)
			mdb_cursor_close(ws.names);
	}
	mdb_txn_abort(txn);
	mdb_env_set_assert(db->env, NULL);
	walking = NULL;
	if (rc)
		snprintf(why, cap, "table \"%s\": after %zu records%s%s%s: %s", ws.table, ws.n,
		         ws.have_key ? ", key \"" : "", ws.have_key ? ws.lastkey : "",
		         ws.have_key ? "\"" : "", ws.lmdb[0] ? ws.lmdb : mdb_strerror(rc));
	return rc;
}
