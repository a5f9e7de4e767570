/* Reading an open database file; opening it is storage/db_open.c's (storage/db.h). */
#include "storage/db_impl.h"
#include "storage/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "storage/db_fault.h"
#include "storage/memo_counts.h"
#include "storage/memo_pairs.h"

/* The calling thread's memo counters (memo_counts.h): the record memo, whose lookups
 * are this file's, and the key memo (candidates.c) count into them. */
_Thread_local struct db_memo_counts *db_memo_counts;

/* The entry ID a table maps key[0..len) to. */
static int get_id(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t len, entry_id *id)
{
	MDB_val k = {len, (void *)key}, v;
	int rc = mdb_get(txn, dbi, &k, &v);
	if (rc)
		return rc;
	if (v.mv_size != sizeof(*id))
		return MDB_CORRUPTED;
	memcpy(id, v.mv_data, sizeof(*id));
	return 0;
}

size_t db_record_memo_bytes(const struct db *db)
{
	return db->records_at ? db->records_at_bytes : db->record_memo.bytes;
}

void db_memo_resident(const struct db *db, size_t *record, size_t *key)
{
	*record = db->records_at ? memo_resident_bytes(db->records_at, db->records_at_bytes)
	                         : memo_resident_bytes(db->record_memo.slot, db->record_memo.bytes);
	*key = memo_resident_bytes(db->index_memo.slot, db->index_memo.bytes);
}

int db_map(const struct db *db, void **addr, size_t *len)
{
	int fd;
	struct stat st;
	if (mdb_env_get_fd(db->env, &fd) != 0 || fstat(fd, &st) < 0)
		return -1;
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return -1;
	char line[4096];
	int found = 0;
	/* The first mapping of the file and those that continue it: the kernel splits one map
	 * in several where parts of it differ (advice, protection). */
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end, ino;
		unsigned major, minor;
		bool ours = sscanf(line, "%lx-%lx %*s %*x %x:%x %lu", &start, &end, &major, &minor,
		                   &ino) == 5 &&
		            ino == st.st_ino && major == major(st.st_dev) &&
		            minor == minor(st.st_dev);
		if (ours && !found) {
			*addr = (void *)start;
			found = 1;
		} else if (found && (!ours || start != (unsigned long)*addr + *len)) {
			break;
		}
		if (ours)
			*len = end - (unsigned long)*addr;
	}
	fclose(maps);
	if (!found)
		errno = ENOENT;
	return found ? 0 : -1;
}

int db_set_creator(struct db *db, const char *creator)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, 0, &txn);
	if (rc)
		return rc;
	MDB_val k = {7, "creator"}, v = {strlen(creator), (void *)creator};
	if ((rc = mdb_put(txn, db->meta, &k, &v, 0)) != 0) {
		mdb_txn_abort(txn);
		return rc;
	}
	if ((rc = mdb_txn_commit(txn)) == 0)
		snprintf(db->creator, sizeof(db->creator), "%s", creator);
	return rc;
}

void db_close(struct db *db)
{
	if (db->env)
		mdb_env_close(db->env);
	buf_free(&db->suffix);
	buf_free(&db->suffix_key);
	free(db->records_at);
	record_memo_free(&db->record_memo);
	key_memo_free(&db->index_memo);
	memset(db, 0, sizeof(*db));
}

static inline char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

const struct db_index *db_index_find(const struct db *db, const char *name, size_t len)
{
	if (len == 0)
		return NULL;
	/* Asked per attribute of every entry imported and per search: the length rules out
	 * most indexes, the first character most of the rest, compared here (attr is
	 * lowercased; ASCII case, as strncasecmp's in the C locale), not by a call. */
	for (int i = 0; i < db->nindex; i++) {
		const char *a = db->index[i].attr;
		size_t k = 0;
		if (db->index[i].attr_len != len)
			continue;
		while (k < len && a[k] == ascii_lower(name[k]))
			k++;
		if (k == len)
			return &db->index[i];
	}
	return NULL;
}

/* fn(value, arg) for each ID stored under key id in the sorted-duplicates table dbi,
 * through a tracked cursor (db_fault.h): db_foreach_group's and db_foreach_child's walk. */
static int foreach_id_under(MDB_txn *txn, MDB_dbi dbi, entry_id id, int (*fn)(entry_id, void *),
                            void *arg)
{
	MDB_cursor *cur;
	int rc = db_cursor_open(txn, dbi, &cur);
	if (rc)
		return rc;
	MDB_val k = {sizeof(id), &id}, v;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP)) {
		entry_id value;
		if (v.mv_size != sizeof(value)) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(&value, v.mv_data, sizeof(value));
		if (fn(value, arg)) {
			rc = DB_STOPPED;
			break;
		}
	}
	db_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int db_foreach_group(const struct db *db, struct db_read *rd, entry_id id,
                     int (*fn)(entry_id group, void *arg), void *arg)
{
	return foreach_id_under(db_read_txn(rd), db->memberof, id, fn, arg);
}

int db_foreach_child(const struct db *db, struct db_read *rd, entry_id id,
                     int (*fn)(entry_id child, void *arg), void *arg)
{
	return foreach_id_under(db_read_txn(rd), db->children, id, fn, arg);
}

size_t db_child_count(const struct db *db, struct db_read *rd, entry_id id)
{
	MDB_cursor *cur;
	size_t n = 0;
	if (db_cursor_open(db_read_txn(rd), db->children, &cur) != 0)
		return 0;
	MDB_val k = {sizeof(id), &id}, v;
	if (mdb_cursor_get(cur, &k, &v, MDB_SET) != 0 || mdb_cursor_count(cur, &n) != 0)
		n = 0;
	db_cursor_close(cur);
	return n;
}

int db_foreach_uuid(const struct db *db, struct db_read *rd,
                    int (*fn)(const unsigned char uuid[16], void *arg), void *arg)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(db_read_txn(rd), db->uuid2id, &cur);
	if (rc)
		return rc;
	MDB_val k, v;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size == 16 && fn(k.mv_data, arg)) {
			rc = DB_STOPPED;
			break;
		}
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int db_uuid2id(const struct db *db, struct db_read *rd, const unsigned char uuid[16], entry_id *id)
{
	MDB_txn *txn = db_read_txn(rd);
	return get_id(txn, db->uuid2id, uuid, 16, id);
}

int db_entry_count(const struct db *db, struct db_read *rd, size_t *count)
{
	MDB_txn *txn = db_read_txn(rd);
	MDB_val k = {7, "entries"}, v;
	int rc = mdb_get(txn, db->meta, &k, &v);
	*count = 0;
	if (rc == 0 && v.mv_size == sizeof(*count))
		memcpy(count, v.mv_data, sizeof(*count));
	return rc == MDB_NOTFOUND ? 0 : rc;
}

size_t db_max_dn_key(const struct db *db)
{
	return (size_t)mdb_env_get_maxkeysize(db->env);
}

int db_dn2id(const struct db *db, struct db_read *rd, const void *key, size_t keylen, entry_id *id)
{
	MDB_txn *txn = db_read_txn(rd);
	if (db->suffix_id && keylen == db->suffix_key.len &&
	    memcmp(key, db->suffix_key.data, keylen) == 0) {
		*id = db->suffix_id; /* searches from the suffix: no descent */
		return 0;
	}
	if (keylen > db_max_dn_key(db))
		return MDB_NOTFOUND; /* no such DN can be stored (LMDB would say MDB_BAD_VALSIZE) */
	return get_id(txn, db->dn2id, key, keylen, id);
}

int db_get_entry(const struct db *db, struct db_read *rd, entry_id id, struct entry_view *e)
{
	MDB_txn *txn = db_read_txn(rd);
	MDB_val k = {sizeof(id), &id}, v;
	struct db_record_at *at = id < db->records_at_count ? &db->records_at[id] : NULL;
	struct db_memo_counts *n = db_memo_counts;
	const void *data;
	uint32_t size, type_lens = 0;
	bool remember = false; /* a record read from LMDB that a memo will hold */
	if (at && (v.mv_data = (void *)atomic_load_explicit(&at->data, memory_order_acquire))) {
		v.mv_size = atomic_load_explicit(&at->size, memory_order_relaxed);
		type_lens = atomic_load_explicit(&at->type_lens, memory_order_relaxed);
		if (n)
			db_memo_count(&n->record_hits);
	} else if (!at && db->record_memo.slot &&
	           record_memo_get(&db->record_memo, id, &data, &size, &type_lens)) {
		v.mv_data = (void *)data;
		v.mv_size = size;
		if (n)
			db_memo_count(&n->record_hits);
	} else {
		int rc = mdb_get(txn, db->id2entry, &k, &v);
		if (rc)
			return rc;
		/* The file never changes: the record stays where it is while it is open. */
		remember = v.mv_size <= ENTRY_MAX_BYTES && (at || db->record_memo.slot);
		if (n && (at || db->record_memo.slot))
			db_memo_count(&n->record_misses);
	}
	/* The entry is parsed now and walked whole to answer it: its cache lines asked for
	 * at once miss together instead of one after another (the first KiB: a lookup's
	 * entry is a few hundred bytes). */
	for (size_t off = 64; off < v.mv_size && off < 1024; off += 64)
		__builtin_prefetch((const char *)v.mv_data + off);
	if (entry_parse(v.mv_data, v.mv_size, e) < 0)
		return MDB_CORRUPTED;
	if (remember) {
		/* summed up once, as it is remembered: each later read passes it to the gates */
		type_lens = entry_type_lens(e);
		if (at) {
			atomic_store_explicit(&at->size, (uint32_t)v.mv_size, memory_order_relaxed);
			atomic_store_explicit(&at->type_lens, type_lens, memory_order_relaxed);
			atomic_store_explicit(&at->data, v.mv_data, memory_order_release);
		} else {
			record_memo_put(&db->record_memo, id, v.mv_data, (uint32_t)v.mv_size,
			                type_lens);
		}
	}
	e->type_lens = type_lens;
	return 0;
}

int db_foreach_entry(const struct db *db,
                     int (*fn)(struct db_read *txn, entry_id id, const struct entry_view *e,
                               void *arg),
                     void *arg)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
	if (!rc)
		rc = mdb_cursor_open(txn, db->id2entry, &cur);
	MDB_val k, v;
	for (int op = MDB_FIRST; !rc; op = MDB_NEXT) {
		rc = mdb_cursor_get(cur, &k, &v, op);
		struct entry_view e;
		if (!rc && entry_parse(v.mv_data, v.mv_size, &e) < 0)
			rc = MDB_CORRUPTED;
		entry_id id = 0;
		if (!rc && k.mv_size == sizeof(id))
			memcpy(&id, k.mv_data, sizeof(id));
		if (!rc && fn(db_read_of(txn), id, &e, arg) != 0)
			rc = DB_STOPPED;
	}
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int db_write_error(const struct db *db, int rc)
{
	int fd;
	struct stat st;
	if (rc != EIO || !db->env || mdb_env_get_fd(db->env, &fd) != 0 || fstat(fd, &st) < 0)
		return rc;
	static const char page[4096];
	int found = rc;
	off_t end = st.st_size;
	/* A first write may fill the last free bytes; the next one tells. */
	for (int i = 0; i < 2 && found == rc; i++) {
		ssize_t n = pwrite(fd, page, sizeof(page), end);
		if (n < 0)
			found = errno;
		else
			end += n;
	}
	if (ftruncate(fd, st.st_size) < 0 && found == rc)
		found = errno;
	return found;
}

int db_meta_flag_get(const struct db *db, struct db_read *rd, const char *name, bool *on)
{
	MDB_txn *txn = db_read_txn(rd);
	MDB_val k = {strlen(name), (void *)name}, v;
	int rc = mdb_get(txn, db->meta, &k, &v);
	*on = rc == 0 && v.mv_size == 1 && *(const char *)v.mv_data == '1';
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int db_meta_flag_set(const struct db *db, struct db_write *wr, const char *name, bool on)
{
	MDB_txn *txn = db_write_txn(wr);
	MDB_val k = {strlen(name), (void *)name}, v = {1, on ? "1" : "0"};
	return mdb_put(txn, db->meta, &k, &v, 0);
}

int db_meta_flag_follow(struct db *db, const char *name, bool want, bool writable, bool *stored)
{
	MDB_txn *txn;
	bool empty = db->entries == 0;
	int rc = mdb_txn_begin(db->env, NULL, writable && empty ? 0 : MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = db_meta_flag_get(db, db_read_of(txn), name, stored)) == 0 && writable && empty &&
	    *stored != want) {
		if ((rc = db_meta_flag_set(db, db_write_of(txn), name, want)) != 0) {
			mdb_txn_abort(txn);
			return rc;
		}
		if ((rc = mdb_txn_commit(txn)) == 0) /* a commit that fails ends txn too */
			*stored = want;
		return rc;
	}
	mdb_txn_abort(txn);
	return rc;
}

int db_has_pair(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t keylen, const void *val,
                size_t vallen)
{
	MDB_cursor *cur;
	MDB_val k = {keylen, (void *)key}, v = {vallen, (void *)val};
	int rc = db_cursor_open(txn, dbi, &cur);
	if (rc)
		return rc;
	rc = mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH);
	db_cursor_close(cur);
	return rc;
}
