/* A walk of every table of a database file: db_check.h. */
#include "storage/db_impl.h"
#include "storage/db_check.h"
#include "storage/db_fault.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/*
 * LMDB's page header, as its data format (0.9) lays it out on disk: the page's own number
 * (8 bytes), 2 bytes of padding, the flags, then (an overflow page) how many pages its run
 * takes. Each page LMDB writes carries its own number; a run's later pages carry data
 * only. What the walk cannot name, the pages can: the first whose header does not hold its
 * own number is where a disk or a stray write left zeroes or other bytes.
 */
#define PAGE_OVERFLOW 0x04
struct page_head {
	uint64_t pgno;
	uint16_t pad, flags;
	uint32_t pages;
};

/* The damaged pages of db's file (headers not their own, up to LMDB's last page used):
 * how many, and the first's number in *first; 0 when none (or the file cannot be read). */
static size_t find_bad_pages(const struct db *db, uint64_t *first)
{
	MDB_envinfo info;
	MDB_stat st;
	int fd;
	if (mdb_env_info(db->env, &info) || mdb_env_stat(db->env, &st) ||
	    mdb_env_get_fd(db->env, &fd) || st.ms_psize < sizeof(struct page_head))
		return 0;
	size_t bad = 0;
	for (uint64_t p = 0; p <= (uint64_t)info.me_last_pgno;) {
		struct page_head h;
		if (pread(fd, &h, sizeof(h), (off_t)(p * st.ms_psize)) != (ssize_t)sizeof(h))
			break;
		if (h.pgno != p) {
			if (!bad++)
				*first = p;
			p++;
		} else {
			p += (h.flags & PAGE_OVERFLOW) && h.pages ? h.pages : 1; /* past its data */
		}
	}
	return bad;
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
	if (!rc)
		return 0;
	int len = snprintf(why, cap, "table \"%s\": after %zu records%s%s%s: %s", ws.table, ws.n,
	                   ws.have_key ? ", key \"" : "", ws.have_key ? ws.lastkey : "",
	                   ws.have_key ? "\"" : "", f.lmdb[0] ? f.lmdb : mdb_strerror(rc));
	uint64_t first = 0;
	size_t bad = find_bad_pages(db, &first);
	MDB_stat st;
	if (bad && len > 0 && (size_t)len < cap && mdb_env_stat(db->env, &st) == 0)
		snprintf(
		    why + len, cap - (size_t)len,
		    "; %zu page%s of the file not what LMDB wrote (zeroed or overwritten), the "
		    "first at offset %llu (page %llu)",
		    bad, bad == 1 ? "" : "s", (unsigned long long)(first * st.ms_psize),
		    (unsigned long long)first);
	return rc;
}
