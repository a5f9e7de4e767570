/*
 * A check of every page a database file's tables reach (minidir -t, minidir-export): each
 * table named in LMDB's main table, and the main table, walked record by record with a
 * cursor, each record's value touched, so that a damaged page (zeroed, overwritten, cut
 * short) is found before a client's request meets it (docs/reliability.md). It reads the
 * whole file once: seconds a gigabyte from the page cache, more from disk.
 *
 * LMDB's errors name no page: the check names the table and the record before the one
 * that could not be read (its key, printable bytes only), with the key's table the unit
 * to rebuild (minidir-import again), and, when the walk failed, reads the header of each
 * page up to the last one used: those that do not carry their own number (zeroed or
 * overwritten) are counted and the first is named by its offset in the file. The headers
 * are read only after a failure: they locate damage, they do not decide it.
 *
 * Thread rules: its own read transaction on db (any thread; readers of the file go on).
 */
#ifndef MINIDIR_STORAGE_DB_CHECK_H
#define MINIDIR_STORAGE_DB_CHECK_H

#include <stddef.h>

#include "storage/db.h"

/* Walks every table of db. Returns 0 with *records the records read, or an LMDB error
 * (MDB_CORRUPTED, MDB_PAGE_NOTFOUND, ...) with where in why ("table \"eq.uid\": after 1234
 * records, key \"user.17\": MDB_CORRUPTED: Located page was wrong type; 12 pages of the
 * file not what LMDB wrote (zeroed or overwritten), the first at offset 823296 (page
 * 201)"). */
int db_check_pages(const struct db *db, size_t *records, char *why, size_t cap);

#endif
