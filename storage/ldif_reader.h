/*
 * Splits an LDIF file into records, keeping exact line numbers. This does
 * what libldap's ldif_read_record does, strictly: that reader skips a line
 * that starts with a digit, follows "include:" lines, drops the rest of a
 * line after a NUL byte, and hides whether the last line ended in a newline.
 *
 * A record is the lines up to a blank line (or the end of the file), CR LF
 * turned into LF, each ending in LF, NUL-terminated: the text
 * ldap_parse_ldif_record takes. Blank lines between records are skipped.
 */
#ifndef MINIDIR_STORAGE_LDIF_READER_H
#define MINIDIR_STORAGE_LDIF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ldif_reader {
	FILE *fp;
	unsigned long line; /* physical lines read so far */
	char *text;         /* the current record (owned) */
	size_t len, cap;
	char *lbuf; /* getline's buffer (owned) */
	size_t lcap;
};

struct ldif_record {
	char *text; /* owned by the reader; valid (and writable) until the next call */
	size_t len;
	unsigned long first_line, last_line; /* physical lines of its first and last lines */
	bool cut; /* its last line is the file's last and has no newline */
};

/* Opens path. Returns 0, or -1 with errno set. */
int ldif_reader_open(struct ldif_reader *r, const char *path);

/*
 * Reads the next record into *rec. Returns 1, 0 at the end of the file, or -1
 * with *line and why set: a UTF-8 byte order mark on line 1, a NUL byte, a
 * read error (why holds strerror's text) or no memory.
 */
int ldif_reader_next(struct ldif_reader *r, struct ldif_record *rec, unsigned long *line, char *why,
                     size_t whylen);

/*
 * The physical line of the n-th line (from 0) of a record's text that gives an
 * attribute of type `type` (compared case-insensitively, options included, as
 * written before the colon), or 0 when there is none. text is the record as
 * ldif_reader_next returned it, before ldap_parse_ldif_record (which writes into
 * it) and first_line its first physical line.
 */
unsigned long ldif_record_type_line(const char *text, unsigned long first_line, const char *type,
                                    int n);

/* Closes the file and frees the buffers. */
void ldif_reader_close(struct ldif_reader *r);

#endif
