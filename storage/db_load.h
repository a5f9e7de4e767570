/*
 * A new file filled in one write transaction by one writer: minidir-import's. The entries
 * come in ID order, so id2entry, children and the index keys are appended (LMDB's
 * MDB_APPEND, MDB_APPENDDUP: no B-tree descent), and each table's cursor is kept across
 * puts (a key on the page the last put left it on skips the descent from the root).
 *
 * Owns: the write transaction and its cursors, from db_load_begin to db_load_finish or
 * db_load_drop. Borrows: the struct db (opened by db_open with create), which must stay
 * open until then. Every function returns 0 or an LMDB error (DB_KEYEXIST where a key must
 * be new), or an errno value where it says; db_write_error says what a write error
 * stands for.
 *
 * Thread rules: one thread, the writer.
 */
#ifndef MINIDIR_STORAGE_DB_LOAD_H
#define MINIDIR_STORAGE_DB_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/db.h"

struct db_load;

/* The write transaction of db's new file into *l (allocated; ENOMEM). */
int db_load_begin(struct db *db, struct db_load **l);
/* The transaction, for the writers of storage's other modules (memberof_put_dn,
 * dyngroup_resolve...): borrowed, ended by db_load_finish or db_load_drop. */
struct db_write *db_load_write(struct db_load *l);

/* dn2id: the reversed DN key[0..len) -> id; DB_KEYEXIST for a DN stored already. */
int db_load_dn(struct db_load *l, const void *key, size_t len, entry_id id);
/* id2entry: the record rec[0..len) as id, which must be above every ID stored. With end,
 * *end is where the record ends in the map (a place on the newest pages: import_prefault). */
int db_load_entry(struct db_load *l, entry_id id, const void *rec, size_t len, const void **end);
/* children: id under parent (IDs grow: appended). */
int db_load_child(struct db_load *l, entry_id parent, entry_id id);
/* uuid2id: an entryUUID -> id; DB_KEYEXIST for one another entry has. */
int db_load_uuid(struct db_load *l, const unsigned char uuid[16], entry_id id);
/* Index ix: key[0..len) -> id, appended (a key the entry gave twice is stored once). */
int db_load_index_key(struct db_load *l, const struct db_index *ix, const void *key, size_t len,
                      entry_id id);
/* meta: name -> value[0..len). */
int db_load_meta(struct db_load *l, const char *name, const void *value, size_t len);

/*
 * Commits, cuts the file (as long as the map while it was written) to the pages in use,
 * then syncs the map and the file; frees l whatever it returns (0, an LMDB error, or an
 * errno of ftruncate or fsync). Cutting first drops, unwritten, the pages populated past
 * the last one in use (ldif/import_prefault.h).
 */
int db_load_finish(struct db_load *l);
/* Drops what l wrote and frees it. After faulted (a SIGBUS from the map: a full disk) only
 * its cursors are closed: the transaction is not usable, and closing the file ends it. */
void db_load_drop(struct db_load *l, bool faulted);

/* The errno a store into the map at addr failed with (a SIGBUS): what allocating that
 * page of the file says, EIO when that succeeds or cannot be tried. */
int db_load_page_error(const struct db *db, void *addr);

#endif
