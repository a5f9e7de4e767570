/* Transactions handed out as handles (storage/db.h), the file padded after a commit, and
 * LMDB's error texts. */
#include <errno.h>

#include "storage/db.h"
#include "storage/db_file.h"
#include "storage/db_impl.h"

/* db.h names LMDB's types and codes without including lmdb.h; they must be LMDB's. */
_Static_assert(_Generic((MDB_dbi)0, db_table : 1, default : 0), "db_table is MDB_dbi");
_Static_assert(DB_NOTFOUND == MDB_NOTFOUND, "DB_NOTFOUND is MDB_NOTFOUND");
_Static_assert(DB_KEYEXIST == MDB_KEYEXIST, "DB_KEYEXIST is MDB_KEYEXIST");
_Static_assert(DB_CORRUPTED == MDB_CORRUPTED, "DB_CORRUPTED is MDB_CORRUPTED");
_Static_assert(DB_PAGE_NOTFOUND == MDB_PAGE_NOTFOUND, "DB_PAGE_NOTFOUND is MDB_PAGE_NOTFOUND");
_Static_assert(DB_MAP_FULL == MDB_MAP_FULL, "DB_MAP_FULL is MDB_MAP_FULL");
_Static_assert(DB_BAD_TXN == MDB_BAD_TXN, "DB_BAD_TXN is MDB_BAD_TXN");

int db_read_begin(const struct db *db, struct db_read **r)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
	if (rc == 0)
		*r = db_read_of(txn);
	return rc;
}

void db_read_reset(struct db_read *r)
{
	mdb_txn_reset(db_read_txn(r));
}

int db_read_renew(struct db_read *r)
{
	return mdb_txn_renew(db_read_txn(r));
}

void db_read_end(struct db_read *r)
{
	mdb_txn_abort(db_read_txn(r));
}

int db_write_begin(struct db *db, struct db_write **w)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, 0, &txn);
	if (rc == 0)
		*w = db_write_of(txn);
	return rc;
}

/* The file padded to what its meta now says it needs (db_file.h: a commit that freed the
 * pages it took past the file's end did not write them). 0 or an errno. */
static int pad_file(MDB_env *env)
{
	MDB_envinfo info;
	MDB_stat st;
	mdb_filehandle_t fd;
	int rc = mdb_env_info(env, &info);
	if (rc || (rc = mdb_env_stat(env, &st)) || (rc = mdb_env_get_fd(env, &fd)))
		return rc;
	return db_file_pad(fd, ((uint64_t)info.me_last_pgno + 1) * st.ms_psize);
}

int db_write_commit(struct db_write *w)
{
	MDB_txn *txn = db_write_txn(w);
	MDB_env *env = mdb_txn_env(txn);
	int rc = mdb_txn_commit(txn);
	return rc ? rc : pad_file(env);
}

void db_write_abort(struct db_write *w)
{
	mdb_txn_abort(db_write_txn(w));
}

const char *db_error_text(int rc)
{
	return mdb_strerror(rc); /* LMDB's own codes, and strerror for an errno */
}

int db_copy_to_fd(const struct db *db, int fd)
{
	return mdb_env_copyfd2(db->env, fd, MDB_CP_COMPACT);
}

int db_file_fd(const struct db *db)
{
	int fd;
	int rc = mdb_env_get_fd(db->env, &fd);
	if (rc != 0) {
		errno = rc == EINVAL ? EBADF : rc;
		return -1;
	}
	return fd;
}
