/*
 * The password classes a file holds (password/password_class.h), counted: per class the
 * number of userPassword values and one sample value, and the values of a scheme no
 * check knows (their number, the first as "{SCHEME} on DN"); and the bytes meta's
 * "passwords" record holds them as (storage/db_passwords.h reads and writes it). The
 * server checks a failed bind against the costliest sample (the decoy,
 * server/ops/op_bind.c), so a sample need only be a value of its class: any one costs
 * what the class costs.
 *
 * Bounds: at most PASSWORD_RECORD_CLASSES classes (values of more are not counted, as
 * the server's entry scan did before the record); a sample is a stored value, below
 * ENTRY_MAX_BYTES. Built by a file's writer, never by a client. Not thread-safe: one
 * record, one thread.
 */
#ifndef MINIDIR_STORAGE_PASSWORD_RECORD_H
#define MINIDIR_STORAGE_PASSWORD_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "storage/entry.h"

#define PASSWORD_RECORD_CLASSES 32
#define PASSWORD_RECORD_CLASS_LEN 64  /* a class's text, NUL included */
#define PASSWORD_RECORD_FIRST_LEN 300 /* the first unknown value's text, NUL included */

struct password_class_count {
	char cls[PASSWORD_RECORD_CLASS_LEN]; /* password_cost_class's text ("" for plaintext) */
	uint64_t values;                     /* userPassword values of the class, > 0 */
	char *sample;                        /* one of them, malloc'd, NUL-terminated */
	size_t len;
};

/* Zero-initialised it is an empty record; password_record_free frees the samples. */
struct password_record {
	struct password_class_count c[PASSWORD_RECORD_CLASSES];
	int n;            /* classes, in the order their first value was counted */
	uint64_t unknown; /* values of a scheme minidir does not know */
	char unknown_first[PASSWORD_RECORD_FIRST_LEN]; /* "{SCHEME} on DN" ("" once 0) */
};

void password_record_free(struct password_record *p);

/*
 * Counts (delta 1) or uncounts (delta -1) the stored password value v[0..len) of the
 * entry named dn[0..dnlen). A class whose count goes to 0 is dropped, and the unknown
 * first value with the last unknown one. Uncounting the value that is its class's sample
 * keeps the sample (see db_passwords.c). Returns 0, or ENOMEM (nothing changed).
 */
int password_record_value(struct password_record *p, const char *v, size_t len, const char *dn,
                          size_t dnlen, int delta);

/* password_record_value for each userPassword value of e. 0 or ENOMEM. */
int password_record_entry(struct password_record *p, const struct entry_view *e, int delta);

/* Adds from's classes and counts to those of to (a class to lacks is appended, with a
 * copy of its sample), and its unknown values. 0 or ENOMEM. */
int password_record_merge(struct password_record *to, const struct password_record *from);

/* The record's bytes, appended to out (layout in db_passwords.c). 0 or ENOMEM. */
int password_record_encode(const struct password_record *p, struct buf *out);

/* Decodes data[0..len) into *p (emptied first). -1 with the reason in why[0..whylen)
 * for a record cut short, with bytes after its end, a class or sample that does not
 * agree with itself (a sample of another class, a count of 0); *p is then empty. */
int password_record_decode(struct password_record *p, const void *data, size_t len, char *why,
                           size_t whylen);

#endif
