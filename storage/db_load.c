/* A new file filled by one writer, in ID order (storage/db_load.h). */
#include "storage/db_load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/db_impl.h"

struct db_load {
	struct db *db;
	MDB_txn *txn;
	MDB_cursor *c_id2entry, *c_dn2id, *c_children, *c_uuid2id, *c_index[DB_MAX_INDEX];
};

int db_load_begin(struct db *db, struct db_load **out)
{
	struct db_load *l = calloc(1, sizeof(*l));
	if (!l)
		return ENOMEM;
	int rc = mdb_txn_begin(db->env, NULL, 0, &l->txn);
	if (rc) {
		free(l);
		return rc;
	}
	l->db = db;
	*out = l;
	return 0;
}

struct db_write *db_load_write(struct db_load *l)
{
	return db_write_of(l->txn);
}

/* The cursor *c on dbi, opened at its first use. */
static int cursor(struct db_load *l, MDB_dbi dbi, MDB_cursor **c)
{
	return *c ? 0 : mdb_cursor_open(l->txn, dbi, c);
}

int db_load_dn(struct db_load *l, const void *key, size_t len, entry_id id)
{
	MDB_val k = {len, (void *)key}, v = {sizeof(id), &id};
	int rc = cursor(l, l->db->dn2id, &l->c_dn2id);
	return rc ? rc : mdb_cursor_put(l->c_dn2id, &k, &v, MDB_NOOVERWRITE);
}

int db_load_entry(struct db_load *l, entry_id id, const void *rec, size_t len, const void **end)
{
	MDB_val k = {sizeof(id), &id}, v = {len, (void *)rec};
	int rc = cursor(l, l->db->id2entry, &l->c_id2entry);
	if (!rc)
		rc = mdb_cursor_put(l->c_id2entry, &k, &v, MDB_APPEND);
	if (!rc && end)
		*end = mdb_cursor_get(l->c_id2entry, &k, &v, MDB_GET_CURRENT) == 0
		           ? (const char *)v.mv_data + v.mv_size
		           : NULL;
	return rc;
}

int db_load_child(struct db_load *l, entry_id parent, entry_id id)
{
	MDB_val k = {sizeof(parent), &parent}, v = {sizeof(id), &id};
	int rc = cursor(l, l->db->children, &l->c_children);
	return rc ? rc : mdb_cursor_put(l->c_children, &k, &v, MDB_APPENDDUP);
}

int db_load_uuid(struct db_load *l, const unsigned char uuid[16], entry_id id)
{
	MDB_val k = {16, (void *)uuid}, v = {sizeof(id), &id};
	int rc = cursor(l, l->db->uuid2id, &l->c_uuid2id);
	return rc ? rc : mdb_cursor_put(l->c_uuid2id, &k, &v, MDB_NOOVERWRITE);
}

int db_load_index_key(struct db_load *l, const struct db_index *ix, const void *key, size_t len,
                      entry_id id)
{
	MDB_cursor **c = &l->c_index[ix - l->db->index];
	MDB_val k = {len, (void *)key}, v = {sizeof(id), &id};
	int rc = cursor(l, ix->dbi, c);
	/* IDs grow: this entry's ID goes after every one the key has. */
	if (!rc && (rc = mdb_cursor_put(*c, &k, &v, MDB_APPENDDUP)) == MDB_KEYEXIST)
		rc = 0; /* two values of the entry with one normal form */
	return rc;
}

int db_load_meta(struct db_load *l, const char *name, const void *value, size_t len)
{
	MDB_val k = {strlen(name), (void *)name}, v = {len, (void *)value};
	return mdb_put(l->txn, l->db->meta, &k, &v, 0);
}

/* Closes the cursors (a commit or an abort would free them too). */
static void close_cursors(struct db_load *l)
{
	MDB_cursor *all[] = {l->c_id2entry, l->c_dn2id, l->c_children, l->c_uuid2id};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i])
			mdb_cursor_close(all[i]);
	for (int i = 0; i < DB_MAX_INDEX; i++)
		if (l->c_index[i])
			mdb_cursor_close(l->c_index[i]);
}

int db_load_finish(struct db_load *l)
{
	struct db *db = l->db;
	int rc = mdb_txn_commit(l->txn), fd;
	free(l);
	MDB_envinfo info;
	MDB_stat st;
	if (rc == 0 && (rc = mdb_env_info(db->env, &info)) == 0 &&
	    (rc = mdb_env_stat(db->env, &st)) == 0 && (rc = mdb_env_get_fd(db->env, &fd)) == 0) {
		size_t used = (size_t)(info.me_last_pgno + 1) * st.ms_psize;
		/* Nothing maps past the cut from here. */
		if (ftruncate(fd, (off_t)used) < 0)
			rc = errno;
		else if ((rc = mdb_env_sync(db->env, 1)) == 0 && fsync(fd) < 0)
			rc = errno;
	}
	return rc;
}

void db_load_drop(struct db_load *l, bool faulted)
{
	if (faulted)
		close_cursors(l);
	else
		mdb_txn_abort(l->txn);
	free(l);
}

int db_load_page_error(const struct db *db, void *addr)
{
	void *map;
	size_t len;
	MDB_stat st;
	int fd;
	if (db_map(db, &map, &len) < 0 || mdb_env_stat(db->env, &st) != 0 ||
	    mdb_env_get_fd(db->env, &fd) != 0)
		return EIO;
	off_t off = (off_t)((char *)addr - (char *)map);
	off -= off % (off_t)st.ms_psize;
	int rc = posix_fallocate(fd, off < 0 ? 0 : off, st.ms_psize);
	return rc ? rc : EIO;
}
