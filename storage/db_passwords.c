/* A file's password classes in meta's "passwords" record (db_passwords.h). */
#include "storage/db_impl.h"
#include "storage/db_passwords.h"

#include <string.h>

int db_passwords_get(const struct db *db, struct db_read *rd, struct password_record *p, char *why,
                     size_t whylen)
{
	MDB_txn *txn = db_read_txn(rd);
	MDB_val k = {sizeof(DB_META_PASSWORDS) - 1, DB_META_PASSWORDS}, v;
	memset(p, 0, sizeof(*p));
	int rc = mdb_get(txn, db->meta, &k, &v);
	if (rc)
		return rc;
	return password_record_decode(p, v.mv_data, v.mv_size, why, whylen) < 0 ? MDB_CORRUPTED : 0;
}

int db_passwords_put(const struct db *db, struct db_write *wr, const struct password_record *p)
{
	MDB_txn *txn = db_write_txn(wr);
	struct buf b = {0};
	int rc = password_record_encode(p, &b);
	MDB_val k = {sizeof(DB_META_PASSWORDS) - 1, DB_META_PASSWORDS}, v = {b.len, b.data};
	if (rc == 0)
		rc = mdb_put(txn, db->meta, &k, &v, 0);
	buf_free(&b);
	return rc;
}

/* Every entry of txn's id2entry counted into p. */
static int scan_txn(struct db *db, MDB_txn *txn, struct password_record *p)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc = mdb_cursor_open(txn, db->id2entry, &cur);
	for (int op = MDB_FIRST; !rc; op = MDB_NEXT) {
		struct entry_view e;
		if ((rc = mdb_cursor_get(cur, &k, &v, op)) == 0)
			rc = entry_parse(v.mv_data, v.mv_size, &e) < 0
			         ? MDB_CORRUPTED
			         : password_record_entry(p, &e, 1);
	}
	if (!cur)
		return rc;
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int db_passwords_scan(struct db *db, struct password_record *p, bool store)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, store ? 0 : MDB_RDONLY, &txn);
	if (rc)
		return rc;
	/* Counted apart from p (which may hold the caller's rootpw): the record holds the
	 * file's values only. */
	struct password_record found = {.n = 0};
	if ((rc = scan_txn(db, txn, &found)) == 0 && store)
		rc = db_passwords_put(db, db_write_of(txn), &found);
	if (rc == 0 && store) {
		rc = mdb_txn_commit(txn);
		txn = NULL;
	}
	if (txn)
		mdb_txn_abort(txn);
	if (rc == 0)
		rc = password_record_merge(p, &found);
	password_record_free(&found);
	return rc;
}

/* True if a and b hold the same userPassword values (both none included). */
static bool same_passwords(const struct entry_view *a, const struct entry_view *b)
{
	const unsigned char *av = NULL, *bv = NULL;
	size_t alen = 0, blen = 0;
	bool ha = a && entry_find_attr(a, "userPassword", 12, &av, &alen);
	bool hb = b && entry_find_attr(b, "userPassword", 12, &bv, &blen);
	return ha == hb && alen == blen && (!ha || memcmp(av, bv, alen) == 0);
}

int db_passwords_update(const struct db *db, struct db_write *wr, const struct entry_view *old,
                        const struct entry_view *new_entry)
{
	MDB_txn *txn = db_write_txn(wr);
	if (same_passwords(old, new_entry))
		return 0; /* most changes: nothing to read or write */
	struct password_record p;
	char why[200];
	int rc = db_passwords_get(db, db_write_reads(wr), &p, why, sizeof(why));
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc == MDB_CORRUPTED) {
		MDB_val k = {sizeof(DB_META_PASSWORDS) - 1, DB_META_PASSWORDS};
		rc = mdb_del(txn, db->meta, &k, NULL);
		return rc == MDB_NOTFOUND ? 0 : rc;
	}
	if (rc == 0 && old)
		rc = password_record_entry(&p, old, -1);
	if (rc == 0 && new_entry)
		rc = password_record_entry(&p, new_entry, 1);
	if (rc == 0)
		rc = db_passwords_put(db, wr, &p);
	password_record_free(&p);
	return rc;
}
