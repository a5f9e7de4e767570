/*
 * The LMDB database of one directory: a single file (MDB_NOSUBDIR) holding
 *
 *   id2entry   entry ID -> entry record (storage/entry.h)
 *   dn2id      reversed normalized DN key -> entry ID; sorted, so a subtree is a key range
 *   children   parent ID -> child IDs (sorted duplicates): the one-level index
 *   eq.<attr>  normalized value -> entry IDs, one per equality-indexed attribute
 *              (eq.memberof always: the members of each group, by the group's normalized DN)
 *   memberof   entry ID -> IDs of the groups whose member or uniqueMember names it (sorted
 *              duplicates): memberOf, computed at import as slapd's memberof overlay does
 *   memberdn   reversed DN key of a member/uniqueMember value -> IDs of the groups holding
 *              it, whether or not it names an entry (sorted duplicates): which groups to
 *              link when an entry of that DN is added or renamed (storage/db_update.h);
 *              keys longer than LMDB's key limit name no entry and are left out
 *   uuid2id    16-byte entryUUID -> entry ID: entries as syncrepl (RFC 4533) names them
 *   opattrs    entry ID -> the provider's createTimestamp, modifyTimestamp, creatorsName,
 *              modifiersName and entryCSN of a replica's entry (storage/entry_opattrs.h);
 *              in an imported file those its LDIF gave (slapcat's output); absent from a file
 *              made before it (then not used)
 *   dynmembers group ID -> the IDs of the members its memberURL values found (sorted
 *              duplicates), and 0 for every dynamic group: which member values of a
 *              groupOfURLs the server computed, beside those its provider sent
 *              (storage/dyngroup_update.h); made in a file written to, absent from one
 *              made before it
 *   meta       "format", "suffix", "indexes", "entries", "created", "creator",
 *              "passwords" (DB_META_PASSWORDS: the password classes in use, their counts
 *              and a sample of each, storage/db_passwords.h; absent from a file made before
 *              it, whose server then reads every entry at open), and "cookie" (the
 *              replication cookie, storage/db_update.h) once one is stored, "source" (what
 *              a replica's file replicates, set with its first cookie), and "schema"
 *              (DB_META_SCHEMA: schema_digest of the schema minidir-import loaded; absent
 *              from a file made before it, or by a replica)
 *
 * Two ways to write it. Import writes a new file renamed over the old one, so readers of
 * an imported file open it MDB_RDONLY|MDB_NOLOCK (db_open) and never wait. A replica
 * opens its file with db_open_rw (LMDB's lock file, one writer, readers in the same
 * process see committed snapshots) and changes it in place with storage/db_update.h.
 *
 * Three files keep this contract: storage/db_open.c opens a file (db_open, db_open_served,
 * db_open_rw: the environment, the tables, meta, the memos), storage/db_txn.c hands out
 * its transactions (db_read_*, db_write_*: the handles below) and says what an error
 * means, storage/db.c reads an open one and closes it (the rest). LMDB itself is
 * storage's alone: this header does not include it, so that no room above can call it
 * (scripts/layers.sh checks that none includes it).
 */
#ifndef MINIDIR_STORAGE_DB_H
#define MINIDIR_STORAGE_DB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "protocol/match.h"
#include "protocol/schema.h"
#include "storage/entry.h"
#include "storage/key_memo.h"
#include "storage/record_memo.h"

/* minidir-3: objectClass keys include superclasses; memberof and eq.memberof.
 * minidir-4: uuid2id and memberdn. */
#define DB_FORMAT "minidir-4"
/* meta's key of the password classes' record (a new key, not a new format: an older file
 * without it is still served). */
#define DB_META_PASSWORDS "passwords"
/* meta's key of the schema digest an import ran with (protocol/schema.h schema_digest; a
 * new key, not a new format: an older file without it is still served, unchecked). */
#define DB_META_SCHEMA "schema"
/* A new database file is created with exactly this mode, whatever the umask: it
 * holds password hashes. (MDB_NOLOCK: LMDB makes no lock file.) */
#define DB_FILE_MODE 0600
#define DB_MAX_INDEX 32
/* Read transactions open at once on a database changed in place (LMDB's reader table). */
#define DB_MAX_READERS 4096
#define DB_MAX_ATTR_NAME 64
/* A memo budget (db_open_served) with no bound: every ID's record place and the key memo's
 * full size (KEY_MEMO_UNBOUNDED_SLOTS at most). */
#define DB_MEMO_UNLIMITED SIZE_MAX
/* Index keys longer than this are truncated; the filter re-checks candidates. */
#define DB_MAX_INDEX_KEY 480

/*
 * Results. Storage's functions return 0, one of these, or another LMDB error code (an int
 * for db_error_text): the codes are LMDB's own (storage/db_impl.h checks), named here so
 * that no room above needs <lmdb.h> to tell "not there" from a failure.
 */
#define DB_KEYEXIST (-30799)      /* a key that must be new is there */
#define DB_NOTFOUND (-30798)      /* no such key, entry or ID; a cursor at its end */
#define DB_PAGE_NOTFOUND (-30797) /* a damaged file: a page it names is not there */
#define DB_CORRUPTED (-30796)     /* a damaged file, or a record that does not parse */
#define DB_MAP_FULL (-30792)      /* a write that the map (DB_MAP_SIZE) cannot hold */
#define DB_BAD_TXN (-30782)       /* a transaction an earlier error left unusable */

/* What error rc says, for a log line: LMDB's text, or strerror's for an errno. Static
 * storage; never NULL. */
const char *db_error_text(int rc);

/* A table of the file (LMDB's MDB_dbi, storage/db_impl.h checks): opened by db_open and
 * valid as long as the file is open. Only storage reads through one. */
typedef unsigned int db_table;

/*
 * The handles storage gives for a transaction: struct db_read, a read snapshot (what one
 * search, bind or export sees, whatever a writer commits meanwhile), and struct db_write,
 * the one write transaction of a file (a replica's consumer, an import). They are never
 * defined outside storage (storage/db_impl.h turns them into LMDB's transaction), so no
 * room above can reach LMDB through them. Two types rather than one so that the compiler
 * refuses a write function a read snapshot (LMDB would refuse it only at run time, with
 * EACCES); a writer reads its own changes through db_write_reads.
 *
 * Thread rules: a handle is used by one thread at a time. A read handle of a file opened
 * by db_open_rw may move between threads (MDB_NOTLS); one of a file opened read-only
 * stays on the thread that began it.
 */
struct db;
struct db_read;
struct db_write;
/* LMDB's own types, named (never defined) here for the few fields and storage-only
 * functions of storage's headers that hold them: only storage/db_impl.h defines them. */
struct MDB_env;
struct MDB_txn;
struct MDB_cursor;

/* A write transaction read as a snapshot of what it has written so far (the same
 * transaction: ending it is the writer's). */
static inline struct db_read *db_write_reads(struct db_write *w)
{
	return (struct db_read *)w;
}

/*
 * db_read_begin: a new snapshot of db's file into *r, which the caller owns until
 * db_read_end. db_read_reset lets go of the snapshot but keeps the handle (and, on a file
 * changed in place, its reader slot), so that db_read_renew makes a fresh one cheaply: a
 * worker's handle between two requests. begin and renew return 0 or an LMDB error (then *r
 * is not set, or r stays reset). end frees the handle, reset or not. None may fail in
 * another way; all are cheap enough for the lookup path (a call each, into LMDB).
 */
int db_read_begin(const struct db *db, struct db_read **r);
void db_read_reset(struct db_read *r);
int db_read_renew(struct db_read *r);
void db_read_end(struct db_read *r);

/*
 * db_write_begin: the write transaction of db's file into *w (one at a time per file:
 * another thread's begin waits for it). db_write_commit makes its changes what later
 * snapshots see and frees it, whatever it returns (0 or an LMDB error: then nothing was
 * written); db_write_abort drops the changes and frees it. begin returns 0 or an LMDB
 * error. The file must have been opened by db_open_rw or db_open with create.
 */
int db_write_begin(struct db *db, struct db_write **w);
int db_write_commit(struct db_write *w);
void db_write_abort(struct db_write *w);

/* The descriptor of db's open file, borrowed (db_close closes it), for fstat or fchown;
 * -1 with errno set when LMDB does not give it. */
int db_file_fd(const struct db *db);
/* Writes a compacted copy of db's file, as one read transaction sees it (its cookie and
 * entries together), to fd (a pipe or socket: written in order, never sought). Blocks
 * until the copy is written; a read transaction is held meanwhile, so that a file changed
 * in place keeps the pages the copy reads. Returns 0 or an LMDB or errno code (EPIPE:
 * the reader went). */
int db_copy_to_fd(const struct db *db, int fd);

struct db_index {
	char attr[DB_MAX_ATTR_NAME]; /* lowercased attribute name */
	size_t attr_len;             /* strlen(attr) */
	db_table dbi;
	enum match_rule rule;
};

/* Where a record of id2entry lies in the map of a file that never changes. */
struct db_record_at {
	_Atomic(const void *) data; /* NULL: not looked up yet */
	_Atomic uint32_t size;      /* stored before data is */
	_Atomic uint32_t type_lens; /* the entry's attribute types summed up (entry_type_lens),
	                             * stored before data is */
};

struct db {
	struct MDB_env *env; /* LMDB's environment: storage reads it, nobody else */
	db_table id2entry, dn2id, children, memberof, memberdn, uuid2id, meta, opattrs;
	db_table dynmembers;
	bool has_opattrs;    /* the file has the opattrs table */
	bool has_dynmembers; /* and the dynmembers table */
	/* A replica's bound on the memberURL values of its dynamic groups in all
	 * (dynamic_groups_max; 0: DYNGROUP_MAX_URLS, storage/dyngroup_update.h). */
	size_t dynamic_groups_max;
	/* Written while it is read (a replica's file, with LMDB's locks); an imported file
	 * is opened MDB_NOLOCK and never changes once in place. */
	bool changes_in_place;
	struct db_index index[DB_MAX_INDEX];
	int nindex;
	struct buf suffix;     /* normalized suffix DN */
	struct buf suffix_key; /* its reversed key */
	entry_id suffix_id;    /* its entry's ID in a file opened read-only (0: look it up) */
	/*
	 * The memos of a file opened read-only, within memo_budget bytes (memo_bytes; see
	 * db_open_served for the split). Shared by every thread reading the file; their pages
	 * are touched only as entries are read, and never past the budget. None for a file
	 * changed in place.
	 *
	 * The record memo: where an entry's record lies, as each is first read, so that
	 * reading one again skips id2entry's B-tree (its leaf pages' cache misses were a
	 * lookup's largest cost). When every ID's place fits its share, records_at holds the
	 * IDs below records_at_count directly (records_at_bytes); otherwise records_at is NULL
	 * and record_memo, a table that evicts, remembers as many as its slots hold.
	 */
	size_t memo_budget; /* DB_MEMO_UNLIMITED: no bound */
	struct db_record_at *records_at;
	entry_id records_at_count;
	size_t records_at_bytes;
	struct record_memo record_memo;
	/* The key memo: its equality-index keys that hold one ID, as each is first looked up
	 * (storage/key_memo.h). Zeroed (no slots) when off. */
	struct key_memo index_memo;
	/* Entries in the file: the count at open; a replica's consumer stores each commit's
	 * (server/replica/txn.c), so readers on other threads load it atomically. */
	size_t entries;
	char created[32];                /* when the import ran, GeneralizedTime */
	char creator[1024];              /* the DN the import ran as ("" if none) */
	char schema[SCHEMA_DIGEST_SIZE]; /* DB_META_SCHEMA ("" if the file records none) */
};

/*
 * Opens the database file at path. With create, a new empty database is made
 * (the file must not exist; it is made mode DB_FILE_MODE) holding suffix and the equality indexes
 * named in index[0..nindex) and memberOf, written through LMDB's writable map
 * (MDB_WRITEMAP: LMDB extends the file, sparse, to the map size, DB_MAP_SIZE; the creator
 * cuts it to its last page once done, and a store into a page the file system cannot back,
 * a full disk, is a SIGBUS the creator must catch), and its commits do not sync
 * (MDB_NOSYNC: the creator calls mdb_env_sync once it is complete, before anyone reads
 * it); otherwise the existing
 * file is opened read-only and suffix/index come from its meta. On failure returns -1 with a
 * message in err. An existing file shorter than its LMDB meta pages say (cut short) is
 * refused before it is mapped, where its missing pages would be a SIGBUS (db_file.h).
 */
int db_open(struct db *db, const char *path, bool create, const char *suffix, char *const *index,
            int nindex, char *err, size_t errlen);

/* db_open_served's flags. DB_NO_READAHEAD: the map stays as LMDB's MDB_NORDAHEAD leaves
 * it (madvise MADV_RANDOM), so that a page fault reads only its page. Read-ahead (and the
 * large folios it fills) suits a file the page cache holds whole; on a larger one each
 * lookup's fault reads megabytes around pages no lookup wants, pushing out those the next
 * lookups need (bench/scale.sh, MEMORY_MAX). The open itself is always made without
 * read-ahead, and MADV_NORMAL given after it when the flag is not set: otherwise each of
 * its few faults reads read_ahead_kb around it (60 MB at 10M entries with 8 MB). */
#define DB_NO_READAHEAD 1u

/*
 * Opens the existing file at path read-only, as db_open does, with its memos within
 * memo_bytes (0: none; DB_MEMO_UNLIMITED: no bound, what db_open gives). The split: when
 * the direct array of every ID's record place (16 bytes an ID) and the key memo at its full
 * size (key_memo_bytes_for two keys an entry, KEY_MEMO_UNBOUNDED_SLOTS at most) fit
 * together, both, and the rest of the budget to the key memo (as many more slots as the
 * directory has keys for, KEY_MEMO_MAX_SLOTS at most); otherwise each memo has
 * half the budget, and one that needs less than its half leaves the rest to the other.
 * Half each because a lookup by a one-ID key needs both to skip both B-trees: the record
 * memo's slots and the key memo's are 32 bytes each, so the halves hold about as many
 * entries. The record memo's half holds the direct array when it fits, else a table
 * (record_memo.h) of as many slots as fit. flags: 0 or DB_NO_READAHEAD. Fails as db_open
 * does.
 */
int db_open_served(struct db *db, const char *path, size_t memo_bytes, unsigned flags, char *err,
                   size_t errlen);

/*
 * Where db's file is mapped: LMDB does not say (mdb_env_info's me_mapaddr is the
 * MDB_FIXEDMAP address, NULL without it), so the mapping is found in /proc/self/maps by
 * the file's device and inode. That mapping is db's alone: no file is opened twice in
 * one process (LMDB forbids it; a reload skips a path whose device and inode are those
 * it serves). 0 with *addr and *len set (the whole map, DB_MAP_SIZE for a new file), or
 * -1 with errno set (ENOENT: not found).
 */
int db_map(const struct db *db, void **addr, size_t *len);

/* The bytes db's record memo may take at most: its direct array's or its table's (the key
 * memo's are index_memo.bytes). */
size_t db_record_memo_bytes(const struct db *db);
/* What db's memos take now (their pages written to, memo_pairs.h's memo_resident_bytes):
 * *record and *key. For the monitor, not for a lookup. */
void db_memo_resident(const struct db *db, size_t *record, size_t *key);

/*
 * Opens path read-write for one writing process (a replica), with LMDB's lock file
 * ("path-lock", mode DB_FILE_MODE) so that readers in the same process can search
 * while the writer commits, and MDB_NOTLS (a read transaction may move between threads
 * and outlive a pause). When path does not exist, a new empty database (no entries)
 * is created for suffix and index[0..nindex), as db_open with create; when it does,
 * its suffix must be suffix (compared normalized) and its format DB_FORMAT, and its
 * own index list is used (index is then ignored). Only one process may open a file
 * this way at a time; a file opened so must not be opened with db_open meanwhile
 * (MDB_NOLOCK readers do not see the writer). On failure returns -1 with a message in err;
 * an existing file cut short is refused as db_open refuses it, and left as it is.
 */
int db_open_rw(struct db *db, const char *path, const char *suffix, char *const *index, int nindex,
               char *err, size_t errlen);
void db_close(struct db *db);

/* Whether the open db holds suffix (compared normalized; NULL or not a DN: false). */
bool db_holds_suffix(const struct db *db, const char *suffix);

/* A file db_open_rw made: records creator (creatorsName of its entries, as an import's
 * creator is) in meta, in a write transaction of its own. Returns 0 or an LMDB error. */
int db_set_creator(struct db *db, const char *creator);

/* The equality index of attribute name[0..len) (any case), or NULL. */
const struct db_index *db_index_find(const struct db *db, const char *name, size_t len);

/* Looks up an entryUUID. Returns 0 (*id set), DB_NOTFOUND or an LMDB error. */
int db_uuid2id(const struct db *db, struct db_read *txn, const unsigned char uuid[16],
               entry_id *id);

/* The "entries" count of meta as txn sees it (db->entries: at open, or a replica's last commit). */
int db_entry_count(const struct db *db, struct db_read *txn, size_t *count);

/* The longest reversed DN key the file can store: LMDB's key size (511 bytes by default),
 * a DN of about 510 bytes in normal form. A longer one is refused where an entry is
 * written (import: at its line; a replica: skipped as a too-large entry is) and found
 * nowhere. Pure. */
size_t db_max_dn_key(const struct db *db);
/* Looks up a reversed DN key. Returns 0 (*id set), DB_NOTFOUND (also for a key longer
 * than db_max_dn_key) or an LMDB error. */
int db_dn2id(const struct db *db, struct db_read *txn, const void *key, size_t keylen,
             entry_id *id);

/* Reads entry id into *e (pointing into the txn's map; on a file opened read-only, where
 * the record memo says once it was read; counted in db_memo_counts, memo_counts.h).
 * Returns 0, DB_NOTFOUND, DB_CORRUPTED (record does not parse) or an LMDB error. Any
 * number of threads at once. */
int db_get_entry(const struct db *db, struct db_read *txn, entry_id id, struct entry_view *e);

/*
 * Calls fn(group, arg) for each group entry id is a direct member of (memberof), in ID
 * order, until fn returns nonzero. Returns 0, DB_STOPPED, or an LMDB error.
 */
int db_foreach_group(const struct db *db, struct db_read *txn, entry_id id,
                     int (*fn)(entry_id group, void *arg), void *arg);

/* The same for the children of id (the one-level index), in ID order. Returns 0,
 * DB_STOPPED, DB_CORRUPTED (a value is not an ID) or an LMDB error. */
int db_foreach_child(const struct db *db, struct db_read *txn, entry_id id,
                     int (*fn)(entry_id child, void *arg), void *arg);
/* How many children id has, as LMDB counts them (no entry is read: numSubordinates at the
 * cost of one key's lookup). 0 also when the read fails. */
size_t db_child_count(const struct db *db, struct db_read *txn, entry_id id);
/* Calls fn(uuid, arg) for each entryUUID the file holds (uuid2id), in key order, until fn
 * returns nonzero: a replica's present phase. Returns 0, DB_STOPPED or an LMDB error. */
int db_foreach_uuid(const struct db *db, struct db_read *txn,
                    int (*fn)(const unsigned char uuid[16], void *arg), void *arg);

/* What db_foreach_entry returns when fn asked it to stop. */
#define DB_STOPPED (-1)

/*
 * Calls fn on every entry (id, e), in ID (import) order, inside one read transaction of
 * its own (txn, which fn may read other entries through; not to be ended); e is valid
 * during the call only. Stops at the first nonzero return of fn. Returns 0, DB_STOPPED,
 * DB_CORRUPTED (a record does not parse) or an LMDB error. Any thread; the db must stay
 * open.
 */
int db_foreach_entry(const struct db *db,
                     int (*fn)(struct db_read *txn, entry_id id, const struct entry_view *e,
                               void *arg),
                     void *arg);

/*
 * A setting the file records in meta under name ("1" on, "0" or absent off), so that a
 * file made one way is not served as if made the other (memberof_nested, dynamic_groups).
 * db_meta_flag_get sets *on; db_meta_flag_set writes it in txn. db_meta_flag_follow, at
 * start: sets *stored to what the file records; a writable file with no entries yet (a
 * new replica) is made to record want first, in a transaction of its own; any other file
 * keeps what it records (the caller warns when that is not want). All return 0 or an
 * LMDB error.
 */
int db_meta_flag_get(const struct db *db, struct db_read *txn, const char *name, bool *on);
int db_meta_flag_set(const struct db *db, struct db_write *txn, const char *name, bool on);
int db_meta_flag_follow(struct db *db, const char *name, bool want, bool writable, bool *stored);

/*
 * The errno an LMDB write error rc stands for. LMDB reports a short write (a
 * full disk, a file size limit) as EIO; for EIO this probes the file once by
 * appending a page (then truncating it away) and returns the errno that write
 * gets (ENOSPC, EFBIG, EDQUOT...), or rc when the probe succeeds.
 */
int db_write_error(const struct db *db, int rc);

/* Index key of a normalized value: the value, truncated to DB_MAX_INDEX_KEY. */
static inline size_t db_index_keylen(size_t len)
{
	return len > DB_MAX_INDEX_KEY ? DB_MAX_INDEX_KEY : len;
}

#endif
