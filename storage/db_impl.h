/*
 * storage/'s private side of the handles storage/db.h hands out: the one file that turns a
 * struct db_read or struct db_write back into LMDB's MDB_txn, and the only way other
 * rooms could reach LMDB. Included by storage/'s .c files (and the storage tests, which
 * build their fixtures with LMDB directly); scripts/layers.sh refuses it, and <lmdb.h>,
 * anywhere else, so that a file outside storage/ that wants a transaction must ask
 * storage for it by what it does (db_read_begin, db_write_commit...).
 *
 * The handles are never defined: a handle is the MDB_txn pointer itself, cast, so
 * handing one out costs nothing on the lookup path (no allocation, no indirection).
 */
#ifndef MINIDIR_STORAGE_DB_IMPL_H
#define MINIDIR_STORAGE_DB_IMPL_H

#include <lmdb.h>

#include "protocol/buf.h"

/* storage/db.h's handles (db_txn.c checks that db.h's names of LMDB's codes are LMDB's).
 * db.h is not included: its .c files include this, and it them, which would be a circle. */
struct db_read;
struct db_write;

/* The transaction behind a handle, and the handle of a transaction (NULL stays NULL). */
static inline MDB_txn *db_read_txn(struct db_read *r)
{
	return (MDB_txn *)r;
}
static inline struct db_read *db_read_of(MDB_txn *txn)
{
	return (struct db_read *)txn;
}
static inline MDB_txn *db_write_txn(struct db_write *w)
{
	return (MDB_txn *)w;
}
static inline struct db_write *db_write_of(MDB_txn *txn)
{
	return (struct db_write *)txn;
}

/* Whether the sorted-duplicates table dbi holds the pair key -> val. Returns 0 (it does),
 * DB_NOTFOUND or an LMDB error. */
int db_has_pair(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t keylen, const void *val,
                size_t vallen);

/* memberof.c's, for the walks of storage's other files (storage/memberof.h says the rest).
 *
 * Appends to ids (entry_id values, native order) the values stored under key k of the
 * sorted-duplicates table dbi (memberof, memberdn or an eq.memberof index). Returns 0
 * (no values is not an error), ENOMEM, DB_CORRUPTED (a value is not an entry_id) or an
 * LMDB error; ids may hold part of the values then.
 */
int memberof_append_ids(MDB_txn *txn, MDB_dbi dbi, MDB_val k, struct buf *ids);

/* The same through cur, a cursor of the caller's on such a table, left where it stops (a
 * walk looks up many keys: a cursor kept open saves opening one each time, and LMDB looks
 * on the page it sits on first). The IDs are read a page at a time (MDB_DUPFIXED). */
int memberof_cursor_ids(MDB_cursor *cur, MDB_val k, struct buf *ids);

#endif
