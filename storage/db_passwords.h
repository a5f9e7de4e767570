/*
 * The password classes a file holds, kept in its meta table under "passwords" so that
 * opening it reads one record instead of every entry (issue 29): per cost class
 * (storage/password_class.h) the number of userPassword values and one sample value,
 * and the values of a scheme no check knows (their number, and the first as "{SCHEME}
 * on DN"). The server's failed binds are checked against the costliest sample (the
 * decoy, server/ops/op_bind.c), so a sample need only be a value of its class: any
 * one costs what the class costs.
 *
 * minidir-import counts the values as it writes entries (db_passwords_entry) and stores
 * the record with the file (db_passwords_put); a replica's writes (storage/db_update.c)
 * keep it current (db_passwords_update). A file without the record (made before it, or
 * a replica's new one) has the server read every entry once (db_passwords_scan) and, on
 * a file it writes (a replica), store what it found.
 *
 * Bounds: at most DB_PASSWORDS_CLASSES classes (values of more are not counted, as the
 * entry scan did before); a sample is a stored value, below ENTRY_MAX_BYTES. The record
 * is built by the file's writer, never by a client.
 */
#ifndef MINIDIR_STORAGE_DB_PASSWORDS_H
#define MINIDIR_STORAGE_DB_PASSWORDS_H

#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "storage/db.h"
#include "storage/entry.h"

#define DB_PASSWORDS_CLASSES 32
#define DB_PASSWORDS_CLASS_LEN 64  /* a class's text, NUL included */
#define DB_PASSWORDS_FIRST_LEN 300 /* the first unknown value's text, NUL included */

struct db_password_class {
	char cls[DB_PASSWORDS_CLASS_LEN]; /* password_cost_class's text ("" for plaintext) */
	uint64_t values;                  /* userPassword values of the class, > 0 */
	char *sample;                     /* one of them, malloc'd, NUL-terminated */
	size_t len;
};

/* Zero-initialised it is an empty record; db_passwords_free frees the samples. */
struct db_passwords {
	struct db_password_class c[DB_PASSWORDS_CLASSES];
	int n;            /* classes, in the order their first value was counted */
	uint64_t unknown; /* values of a scheme minidir does not know */
	char unknown_first[DB_PASSWORDS_FIRST_LEN]; /* "{SCHEME} on DN" ("" once 0) */
};

void db_passwords_free(struct db_passwords *p);

/*
 * Counts (delta 1) or uncounts (delta -1) the stored password value v[0..len) of the
 * entry named dn[0..dnlen). A class whose count goes to 0 is dropped, and the unknown
 * first value with the last unknown one. Uncounting the value that is its class's sample
 * keeps the sample (see db_passwords.c). Returns 0, or ENOMEM (nothing changed).
 */
int db_passwords_value(struct db_passwords *p, const char *v, size_t len, const char *dn,
                       size_t dnlen, int delta);

/* db_passwords_value for each userPassword value of e. 0 or ENOMEM. */
int db_passwords_entry(struct db_passwords *p, const struct entry_view *e, int delta);

/* Adds from's classes and counts to those of to (a class to lacks is appended, with a
 * copy of its sample), and its unknown values. 0 or ENOMEM. */
int db_passwords_merge(struct db_passwords *to, const struct db_passwords *from);

/* The record's bytes, appended to out (layout in db_passwords.c). 0 or ENOMEM. */
int db_passwords_encode(const struct db_passwords *p, struct buf *out);

/* Decodes data[0..len) into *p (emptied first). -1 with the reason in why[0..whylen)
 * for a record cut short, with bytes after its end, a class or sample that does not
 * agree with itself (a sample of another class, a count of 0); *p is then empty. */
int db_passwords_decode(struct db_passwords *p, const void *data, size_t len, char *why,
                        size_t whylen);

/* meta's record as txn sees it, into *p. 0; MDB_NOTFOUND (a file made before it);
 * MDB_CORRUPTED with the reason in why (a bad record); or an LMDB error. */
int db_passwords_get(const struct db *db, MDB_txn *txn, struct db_passwords *p, char *why,
                     size_t whylen);

/* Writes *p as meta's record in the write transaction txn. 0 or an LMDB error/ENOMEM. */
int db_passwords_put(const struct db *db, MDB_txn *txn, const struct db_passwords *p);

/*
 * Counts every entry's userPassword values into *p, reading id2entry whole: for a file
 * without the record. With store (a file opened with db_open_rw), in one write
 * transaction that then stores the record, so that no change comes between the read
 * and the write. Returns 0, MDB_CORRUPTED (an entry does not parse), ENOMEM or an
 * LMDB error.
 */
int db_passwords_scan(struct db *db, struct db_passwords *p, bool store);

/*
 * A replica's change in txn: entry old (NULL: added) became new (NULL: deleted). When
 * their userPassword values differ, the stored record is read, changed and written
 * back. A file without the record is left without (its server scans at start); a bad
 * record is deleted, so that the next start scans and stores a good one. 0, ENOMEM or
 * an LMDB error.
 */
int db_passwords_update(const struct db *db, MDB_txn *txn, const struct entry_view *old,
                        const struct entry_view *new_entry);

#endif
