/*
 * Opening a database file, the part of storage/db.h's contract that db_open, db_open_served
 * and db_open_rw declare: the LMDB environment (an existing file checked whole before
 * LMDB maps it, and again once opened: storage/db_file.h), the tables made or found, meta
 * written (a new file) or read back and checked (its format; a replica's suffix), and, on
 * a file opened read-only, what every search would look up read once and the memos sized
 * within their budget. storage/db.c reads a file once it is open; it calls nothing here,
 * and this file calls it only for what any caller may (db_index_find, db_dn2id, db_map,
 * db_close), so the two stay one module to their callers with no circle between them.
 */
#include "storage/db_impl.h"
#include "storage/db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/dn.h"
#include "storage/db_fault.h"
#include "storage/db_file.h"
#include "storage/memo_split.h"
#include "storage/password_record.h"

/* Room for a directory of a few million entries; the file grows as needed. */
#define DB_MAP_SIZE ((size_t)16 << 30)

static int fail(char *err, size_t errlen, const char *what, const char *path, int rc)
{
	snprintf(err, errlen, "%s: %s: %s", path, what, mdb_strerror(rc));
	return -1;
}

static int meta_put(MDB_txn *txn, MDB_dbi dbi, const char *k, const void *v, size_t vlen)
{
	MDB_val key = {strlen(k), (void *)k}, val = {vlen, (void *)v};
	return mdb_put(txn, dbi, &key, &val, 0);
}

static int meta_get(MDB_txn *txn, MDB_dbi dbi, const char *k, MDB_val *v)
{
	MDB_val key = {strlen(k), (void *)k};
	return mdb_get(txn, dbi, &key, v);
}

static int open_index(struct db *db, MDB_txn *txn, const char *attr, size_t len, bool create)
{
	if (db->nindex == DB_MAX_INDEX || len == 0 || len >= DB_MAX_ATTR_NAME)
		return MDB_BAD_VALSIZE;
	struct db_index *ix = &db->index[db->nindex];
	memcpy(ix->attr, attr, len);
	ix->attr[len] = '\0';
	match_lower(ix->attr, len);
	ix->attr_len = strlen(ix->attr);
	ix->rule = match_rule_for(ix->attr, len);
	char name[DB_MAX_ATTR_NAME + 4];
	snprintf(name, sizeof(name), "eq.%s", ix->attr);
	unsigned flags = MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP | (create ? MDB_CREATE : 0);
	int rc = mdb_dbi_open(txn, name, flags, &ix->dbi);
	if (rc == 0)
		db->nindex++;
	return rc;
}

/* Reads suffix and index list back from meta. */
static int load_meta(struct db *db, MDB_txn *txn, const char *path, char *err, size_t errlen)
{
	MDB_val v;
	int rc = meta_get(txn, db->meta, "format", &v);
	if (rc == 0 && v.mv_size > 8 && v.mv_size < 64 && memcmp(v.mv_data, "minidir-", 8) == 0 &&
	    (v.mv_size != strlen(DB_FORMAT) || memcmp(v.mv_data, DB_FORMAT, v.mv_size))) {
		snprintf(err, errlen,
		         "%s: made by another minidir-import (format %.*s, this minidir reads %s): "
		         "import the LDIF again",
		         path, (int)v.mv_size, (const char *)v.mv_data, DB_FORMAT);
		return -1;
	}
	if (rc || v.mv_size != strlen(DB_FORMAT) || memcmp(v.mv_data, DB_FORMAT, v.mv_size)) {
		snprintf(err, errlen, "%s: not a minidir database (format %s expected)", path,
		         DB_FORMAT);
		return -1;
	}
	if ((rc = meta_get(txn, db->meta, "suffix", &v)) != 0)
		return fail(err, errlen, "reading suffix", path, rc);
	if (buf_append(&db->suffix, v.mv_data, v.mv_size) < 0 ||
	    dn_normalize(v.mv_data, v.mv_size, NULL, &db->suffix_key) < 0)
		return fail(err, errlen, "bad suffix", path, MDB_CORRUPTED);
	if ((rc = meta_get(txn, db->meta, "entries", &v)) == 0 && v.mv_size == sizeof(size_t))
		memcpy(&db->entries, v.mv_data, sizeof(size_t));
	if (meta_get(txn, db->meta, "created", &v) == 0 && v.mv_size < sizeof(db->created))
		memcpy(db->created, v.mv_data, v.mv_size);
	if (meta_get(txn, db->meta, "creator", &v) == 0 && v.mv_size < sizeof(db->creator))
		memcpy(db->creator, v.mv_data, v.mv_size);
	if (meta_get(txn, db->meta, DB_META_SCHEMA, &v) == 0 && v.mv_size < sizeof(db->schema))
		memcpy(db->schema, v.mv_data, v.mv_size);
	if ((rc = meta_get(txn, db->meta, "indexes", &v)) != 0)
		return fail(err, errlen, "reading index list", path, rc);
	const char *p = v.mv_data, *end = p + v.mv_size;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if ((rc = open_index(db, txn, p, n, false)) != 0)
			return fail(err, errlen, "opening an index", path, rc);
		p += n + 1;
	}
	return 0;
}

static int init_meta(struct db *db, MDB_txn *txn, const char *suffix, char *const *index,
                     int nindex, const char *path, char *err, size_t errlen)
{
	if (dn_normalize(suffix, strlen(suffix), &db->suffix, &db->suffix_key) < 0 ||
	    db->suffix.len == 0) {
		snprintf(err, errlen, "suffix \"%s\" is not a valid DN", suffix);
		return -1;
	}
	struct buf list = {0};
	int rc = 0;
	for (int i = 0; i <= nindex && rc == 0; i++) {
		const char *name =
		    i < nindex ? index[i] : "memberOf"; /* always: memberof's index */
		if (db_index_find(db, name, strlen(name)))
			continue;
		rc = open_index(db, txn, name, strlen(name), true);
		if (rc == 0 && list.len)
			rc = buf_append(&list, ",", 1) < 0 ? ENOMEM : 0;
		if (rc == 0)
			rc = buf_append(&list, db->index[db->nindex - 1].attr,
			                strlen(db->index[db->nindex - 1].attr)) < 0
			         ? ENOMEM
			         : 0;
	}
	if (rc == 0)
		rc = meta_put(txn, db->meta, "format", DB_FORMAT, strlen(DB_FORMAT));
	if (rc == 0)
		rc = meta_put(txn, db->meta, "suffix", db->suffix.data, db->suffix.len);
	if (rc == 0)
		rc = meta_put(txn, db->meta, "indexes", list.data ? (void *)list.data : "",
		              list.len);
	/* No entries, no passwords: the record a file of this version always has (an import
	 * writes its own at the end, a replica's writes keep it). */
	struct password_record none = {.n = 0};
	list.off = list.len = 0;
	if (rc == 0 && (rc = password_record_encode(&none, &list)) == 0)
		rc = meta_put(txn, db->meta, DB_META_PASSWORDS, list.data, list.len);
	buf_free(&list);
	return rc ? fail(err, errlen, "initialising", path, rc) : 0;
}

enum open_mode { OPEN_READ, OPEN_CREATE, OPEN_RW, OPEN_RW_CREATE };

/*
 * A replica's new file: "created" is now and "creator" empty, as an import of no entries
 * would leave them (import writes its own at its end). createTimestamp and friends of the
 * entries come from them.
 */
static int stamp_created(struct db *db, MDB_txn *txn)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(db->created, sizeof(db->created), "%Y%m%d%H%M%SZ", &tm);
	MDB_val kc = {7, "created"}, vc = {strlen(db->created), db->created};
	MDB_val kw = {7, "creator"}, vw = {0, ""};
	int rc = mdb_put(txn, db->meta, &kc, &vc, 0);
	return rc ? rc : mdb_put(txn, db->meta, &kw, &vw, 0);
}

#define DUP_IDS (MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP)

/* The tables every format-4 file has, opened (made, with c = MDB_CREATE) in txn. */
static int open_tables(struct db *db, MDB_txn *txn, unsigned c)
{
	int rc;
	if ((rc = mdb_dbi_open(txn, "memberof", c | MDB_INTEGERKEY | DUP_IDS, &db->memberof)) ||
	    (rc = mdb_dbi_open(txn, "memberdn", c | DUP_IDS, &db->memberdn)))
		return rc;
	return mdb_dbi_open(txn, "uuid2id", c, &db->uuid2id);
}

bool db_holds_suffix(const struct db *db, const char *suffix)
{
	struct buf want = {0};
	bool same = suffix && dn_normalize(suffix, strlen(suffix), &want, NULL) == 0 &&
	            want.len == db->suffix.len && memcmp(want.data, db->suffix.data, want.len) == 0;
	buf_free(&want);
	return same;
}

/* A replica's file must serve the config's suffix. */
static int check_suffix(const struct db *db, const char *suffix, const char *path, char *err,
                        size_t errlen)
{
	bool ok = db_holds_suffix(db, suffix);
	if (!ok)
		snprintf(err, errlen, "%s: holds suffix \"%.*s\", not \"%s\"", path,
		         (int)db->suffix.len, (const char *)db->suffix.data, suffix ? suffix : "");
	return ok ? 0 : -1;
}

/* The largest ID of id2entry (its last key), *any false when it has none. */
static int last_id(struct db *db, MDB_txn *txn, entry_id *last, bool *any)
{
	MDB_cursor *cur;
	MDB_val k, v;
	*any = false;
	int rc = mdb_cursor_open(txn, db->id2entry, &cur);
	if (rc)
		return rc;
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc || k.mv_size != sizeof(*last))
		return rc ? rc : MDB_CORRUPTED;
	memcpy(last, k.mv_data, sizeof(*last));
	*any = true;
	return 0;
}

/* The memos of a file opened read-only, split within budget as db_open_served says. */
static int alloc_memos(struct db *db, MDB_txn *txn, size_t budget)
{
	entry_id last = 0;
	bool any;
	int rc = last_id(db, txn, &last, &any);
	db->memo_budget = budget;
	if (rc || budget == 0)
		return rc;
	/* records_at_count is an entry_id: an ID of UINT32_MAX has no direct array (it never
	 * fits; with a bound the table takes its place). */
	bool direct_ok = any && last != UINT32_MAX;
	size_t direct = direct_ok ? ((size_t)last + 1) * sizeof(*db->records_at)
	                : any     ? SIZE_MAX
	                          : 0;
	/* Room for two one-ID keys per entry (a uid and a mail, say): four slots, as without a
	 * bound (KEY_MEMO_UNBOUNDED_SLOTS at most). */
	size_t keys = db->entries * 2,
	       key_want = key_memo_bytes_for(keys, KEY_MEMO_UNBOUNDED_SLOTS);
	size_t rec_share, key_share;
	memo_split(budget, direct, direct_ok, key_want, &rec_share, &key_share);
	if (direct_ok && direct <= rec_share) {
		/* calloc of this size maps zero pages: only those written to take memory. */
		db->records_at = calloc((size_t)last + 1, sizeof(*db->records_at));
		if (!db->records_at)
			return ENOMEM;
		db->records_at_count = last + 1;
		db->records_at_bytes = direct;
	} else if (any && budget != DB_MEMO_UNLIMITED &&
	           record_memo_init(&db->record_memo, rec_share) < 0) {
		return ENOMEM;
	}
	return key_memo_init(&db->index_memo, keys, key_share) < 0 ? ENOMEM : 0;
}

/* What ends the line about an existing file cut short (storage/db_file.h). */
static const char *cut_remedy(enum open_mode mode)
{
	return mode == OPEN_RW
	           ? "copy it again, or remove it to refresh the replica from the provider"
	           : "copy it again or import it again";
}

/*
 * An existing file, before LMDB opens it: is it whole (storage/db_file.h)? A file cut
 * short would be a SIGBUS at the first page read past its end; read-write, LMDB would
 * even write meta pages into an empty one. *checked is the file checked (st_ino 0: it
 * could not be opened, and LMDB's open says why).
 */
static int check_whole(const char *path, enum open_mode mode, struct stat *checked, char *err,
                       size_t errlen)
{
	memset(checked, 0, sizeof(*checked));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int rc = db_file_check(fd, path, cut_remedy(mode), NULL, err, errlen);
	if (rc == 0 && fstat(fd, checked) < 0)
		memset(checked, 0, sizeof(*checked));
	close(fd);
	return rc;
}

/*
 * The file LMDB opened, when it is not the one check_whole checked (another was renamed
 * over the path in between: a reload racing an import), is checked in turn, on LMDB's
 * own descriptor, before the first transaction reads its map.
 */
static int check_opened(MDB_env *env, const char *path, enum open_mode mode,
                        const struct stat *checked, char *err, size_t errlen)
{
	int fd;
	struct stat st;
	if (mdb_env_get_fd(env, &fd) != 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot stat the database file", path);
		return -1;
	}
	if (checked->st_ino && st.st_dev == checked->st_dev && st.st_ino == checked->st_ino)
		return 0;
	return db_file_check(fd, path, cut_remedy(mode), NULL, err, errlen);
}

/*
 * The LMDB environment of path, for mode: an existing file checked whole before LMDB maps
 * it and again once opened; a new one made with DB_FILE_MODE exactly. 0, or -1 with err
 * set (db->env may be left open: the caller's db_close closes it).
 */
static int open_env(struct db *db, const char *path, enum open_mode mode, char *err, size_t errlen)
{
	bool create = mode == OPEN_CREATE || mode == OPEN_RW_CREATE;
	int rc;
	struct stat checked = {0};
	if (!create && check_whole(path, mode, &checked, err, errlen) < 0)
		return -1;
	if ((rc = mdb_env_create(&db->env)) != 0)
		return fail(err, errlen, "creating environment", path, rc);
	/* A damaged page LMDB meets with an assertion: a jump back where a thread has set a
	 * point, its abort() elsewhere (db_fault.h). */
	mdb_env_set_assert(db->env, db_fault_assert);
	mdb_env_set_maxdbs(db->env, DB_MAX_INDEX + 8);
	mdb_env_set_mapsize(db->env, DB_MAP_SIZE);
	/* A replica's readers: each worker's transaction, and one per search that keeps its
	 * snapshot while it waits for its client (server/ops/op_search.c). */
	mdb_env_set_maxreaders(db->env, DB_MAX_READERS);
	/* NOLOCK: an imported file is never written once renamed into place (see storage/db.h). */
	db->changes_in_place = !(mode == OPEN_READ || mode == OPEN_CREATE);
	unsigned flags = MDB_NOSUBDIR | (mode == OPEN_READ ? MDB_RDONLY : 0) |
	                 (db->changes_in_place ? MDB_NOTLS : MDB_NOLOCK);
	/* An import's new file: no sync per commit; the importer syncs once before the rename. */
	if (mode == OPEN_CREATE)
		flags |= MDB_NOSYNC | MDB_WRITEMAP;
	/* Every read-only open starts without read-ahead (LMDB's madvise(MADV_RANDOM) of the
	 * whole map): the open reads a few pages at random (meta, the suffix's ID, the memos'
	 * sizes), and with the disk's read-ahead each of those faults would read megabytes
	 * around it before the server can answer. open_mode turns it back on afterwards
	 * unless DB_NO_READAHEAD. */
	if (mode == OPEN_READ)
		flags |= MDB_NORDAHEAD;
	if ((rc = mdb_env_open(db->env, path, flags, DB_FILE_MODE)) != 0)
		return fail(err, errlen, create ? "creating database" : "opening database", path,
		            rc);
	if (!create && check_opened(db->env, path, mode, &checked, err, errlen) < 0)
		return -1;
	/* The umask may have taken bits away (or, at 0, added none): set it exactly. */
	int fd;
	if (create && (mdb_env_get_fd(db->env, &fd) != 0 || fchmod(fd, DB_FILE_MODE) < 0)) {
		snprintf(err, errlen, "%s: chmod: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The tables, in txn: made with meta written (a new file), or opened with meta read and
 * checked (its format; a replica's suffix). 0, or -1 with err set.
 */
static int open_dbis(struct db *db, MDB_txn *txn, enum open_mode mode, const char *suffix,
                     char *const *index, int nindex, const char *path, char *err, size_t errlen)
{
	bool create = mode == OPEN_CREATE || mode == OPEN_RW_CREATE;
	unsigned c = create ? MDB_CREATE : 0;
	int rc;
	if ((rc = mdb_dbi_open(txn, "meta", c, &db->meta)) ||
	    (rc = mdb_dbi_open(txn, "id2entry", c | MDB_INTEGERKEY, &db->id2entry)) ||
	    (rc = mdb_dbi_open(txn, "dn2id", c, &db->dn2id)) ||
	    (rc = mdb_dbi_open(txn, "children", c | MDB_INTEGERKEY | DUP_IDS, &db->children))) {
		if (rc == MDB_NOTFOUND)
			snprintf(err, errlen, "%s: not a minidir database", path);
		else
			fail(err, errlen, "opening tables", path, rc);
		return -1;
	}
	if (create ? init_meta(db, txn, suffix, index, nindex, path, err, errlen)
	           : load_meta(db, txn, path, err, errlen))
		return -1;
	if (mode == OPEN_RW_CREATE && (rc = stamp_created(db, txn)) != 0)
		return fail(err, errlen, "writing meta", path, rc);
	if (mode == OPEN_RW && check_suffix(db, suffix, path, err, errlen) < 0)
		return -1;
	/* After the format check: an older file has no memberof table. */
	if ((rc = open_tables(db, txn, c)) != 0)
		return fail(err, errlen, "opening tables", path, rc);
	/* opattrs came after format 4: made in a file written to, looked for in one read. */
	rc = mdb_dbi_open(txn, "opattrs", MDB_INTEGERKEY | (mode == OPEN_READ ? 0 : MDB_CREATE),
	                  &db->opattrs);
	if (rc && rc != MDB_NOTFOUND)
		return fail(err, errlen, "opening tables", path, rc);
	db->has_opattrs = rc == 0;
	/* dynmembers came after format 4 too: the same way (storage/dyngroup_update.h). */
	rc = mdb_dbi_open(txn, "dynmembers",
	                  MDB_INTEGERKEY | DUP_IDS | (mode == OPEN_READ ? 0 : MDB_CREATE),
	                  &db->dynmembers);
	if (rc && rc != MDB_NOTFOUND)
		return fail(err, errlen, "opening tables", path, rc);
	db->has_dynmembers = rc == 0;
	return 0;
}

/*
 * A file opened read-only never changes: what every search would look up, read once in
 * txn (the suffix entry's ID, room for the records' addresses, the index key memo).
 */
static int read_once(struct db *db, MDB_txn *txn, size_t memo_bytes, const char *path, char *err,
                     size_t errlen)
{
	int rc;
	if (db_dn2id(db, db_read_of(txn), db->suffix_key.data, db->suffix_key.len,
	             &db->suffix_id) != 0)
		db->suffix_id = 0;
	if ((rc = alloc_memos(db, txn, memo_bytes)) != 0)
		return fail(err, errlen, rc == ENOMEM ? "opening" : "reading id2entry", path, rc);
	return 0;
}

/* The kernel's read-ahead back on for db's map, once open_env's MDB_NORDAHEAD has served
 * the open. 0, or -1 with err set. */
static int readahead_on(struct db *db, const char *path, char *err, size_t errlen)
{
	void *map;
	size_t len;
	if (db_map(db, &map, &len) < 0) {
		snprintf(err, errlen, "%s: its map is not in /proc/self/maps: %s", path,
		         strerror(errno));
		return -1;
	}
	if (madvise(map, len, MADV_NORMAL) < 0) {
		snprintf(err, errlen, "%s: madvise(MADV_NORMAL): %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_mode(struct db *db, const char *path, enum open_mode mode, unsigned read_flags,
                     const char *suffix, char *const *index, int nindex, size_t memo_bytes,
                     char *err, size_t errlen)
{
	memset(db, 0, sizeof(*db));
	MDB_txn *txn = NULL;
	int rc;
	if (open_env(db, path, mode, err, errlen) < 0)
		goto bad;
	if ((rc = mdb_txn_begin(db->env, NULL, mode == OPEN_READ ? MDB_RDONLY : 0, &txn)) != 0) {
		fail(err, errlen, "starting transaction", path, rc);
		goto bad;
	}
	if (open_dbis(db, txn, mode, suffix, index, nindex, path, err, errlen) < 0 ||
	    (mode == OPEN_READ && read_once(db, txn, memo_bytes, path, err, errlen) < 0))
		goto bad;
	rc = mdb_txn_commit(txn);
	txn = NULL;
	if (rc != 0) {
		fail(err, errlen, "committing", path, rc);
		goto bad;
	}
	if (mode == OPEN_READ && !(read_flags & DB_NO_READAHEAD) &&
	    readahead_on(db, path, err, errlen) < 0)
		goto bad;
	return 0;
bad:
	if (txn)
		mdb_txn_abort(txn);
	db_close(db);
	return -1;
}

int db_open(struct db *db, const char *path, bool create, const char *suffix, char *const *index,
            int nindex, char *err, size_t errlen)
{
	return open_mode(db, path, create ? OPEN_CREATE : OPEN_READ, 0, suffix, index, nindex,
	                 DB_MEMO_UNLIMITED, err, errlen);
}

int db_open_served(struct db *db, const char *path, size_t memo_bytes, unsigned flags, char *err,
                   size_t errlen)
{
	return open_mode(db, path, OPEN_READ, flags, NULL, NULL, 0, memo_bytes, err, errlen);
}

int db_open_rw(struct db *db, const char *path, const char *suffix, char *const *index, int nindex,
               char *err, size_t errlen)
{
	struct stat st;
	bool missing = stat(path, &st) < 0 && errno == ENOENT;
	if (missing && !suffix) {
		snprintf(err, errlen, "%s: no such database, and no suffix to create it for", path);
		return -1;
	}
	return open_mode(db, path, missing ? OPEN_RW_CREATE : OPEN_RW, 0, suffix, index, nindex, 0,
	                 err, errlen);
}
