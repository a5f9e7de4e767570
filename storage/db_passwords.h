/*
 * meta's "passwords" record (DB_META_PASSWORDS): the password classes a file holds
 * (storage/password_record.h), kept with the file so that opening it reads one record
 * instead of every entry (issue 29).
 *
 * Every file db_open or db_open_rw creates starts with an empty record; minidir-import
 * counts the values as it writes entries (password_record_value) and stores the record
 * with the file (db_passwords_put); a replica's writes (storage/db_update.c) keep it
 * current (db_passwords_update). A file made before the record has none: the server
 * reads every entry once (db_passwords_scan) and, on a file it writes (a replica),
 * stores what it found.
 */
#ifndef MINIDIR_STORAGE_DB_PASSWORDS_H
#define MINIDIR_STORAGE_DB_PASSWORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/db.h"
#include "storage/entry.h"
#include "storage/password_record.h"

/* meta's record as txn sees it, into *p. 0; DB_NOTFOUND (a file made before it);
 * DB_CORRUPTED with the reason in why (a bad record); or an LMDB error. */
int db_passwords_get(const struct db *db, struct db_read *txn, struct password_record *p, char *why,
                     size_t whylen);

/* Writes *p as meta's record in the write transaction txn. 0 or an LMDB error/ENOMEM. */
int db_passwords_put(const struct db *db, struct db_write *txn, const struct password_record *p);

/*
 * Counts every entry's userPassword values into *p, reading id2entry whole: for a file
 * without the record. With store (a file opened with db_open_rw), in one write
 * transaction that then stores the record, so that no change comes between the read
 * and the write. Returns 0, DB_CORRUPTED (an entry does not parse), ENOMEM or an
 * LMDB error.
 */
int db_passwords_scan(struct db *db, struct password_record *p, bool store);

/*
 * A replica's change in txn: entry old (NULL: added) became new (NULL: deleted). When
 * their userPassword values differ, the stored record is read, changed and written
 * back. A file without the record is left without (its server scans at start); a bad
 * record is deleted, so that the next start scans and stores a good one. 0, ENOMEM or
 * an LMDB error.
 */
int db_passwords_update(const struct db *db, struct db_write *txn, const struct entry_view *old,
                        const struct entry_view *new_entry);

#endif
