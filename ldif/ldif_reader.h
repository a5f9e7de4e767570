/*
 * Splits an LDIF file into records, keeping exact line numbers: the framing half of
 * minidir-import's reading (ldif/ldif_parse.h checks and splits each record). It
 * does what libldap's ldif_read_record does, strictly: that reader skips a line that
 * starts with a digit, follows "include:" lines, drops the rest of a line after a NUL
 * byte, and hides whether the last line ended in a newline.
 *
 * The file is read with read(2) in large chunks into one buffer; a record is handed out
 * as it stands there (line ends as written, LF or CR LF), not copied. A record is the
 * lines up to a blank line (empty, or a lone CR) or the end of the file; blank lines
 * between records are skipped. Only a UTF-8 byte order mark on line 1 and a read error
 * stop the framing; every other check (a NUL byte too) is the parser's.
 *
 * Thread rules: one thread at a time per reader.
 */
#ifndef MINIDIR_LDIF_LDIF_READER_H
#define MINIDIR_LDIF_LDIF_READER_H

#include <stdbool.h>
#include <stddef.h>

/* The most LDIF text one record may take: four times what an entry may take encoded
 * (ENTRY_MAX_BYTES; base64, folding and type names make the text longer than the entry).
 * A longer record is an error at its first line, before the file is read any further. */
#define LDIF_RECORD_MAX_BYTES (64 * 1024 * 1024)

struct ldif_reader {
	int fd;
	unsigned long line; /* physical lines framed so far */
	char *buf;          /* bytes read: buf[pos..end) not framed yet (owned) */
	size_t pos, end, cap;
	long long offset; /* bytes of the file framed so far */
	bool eof;         /* read(2) returned 0 */
	bool begun;       /* line 1 was checked for a byte order mark */
};

struct ldif_record {
	const char *text; /* in the reader's buffer; valid until the next call */
	size_t len;       /* up to and including its last line's LF (if it has one) */
	unsigned long first_line, last_line; /* physical lines of its first and last lines */
	bool cut; /* its last line is the file's last and has no newline */
};

/* Opens path. Returns 0, or -1 with errno set. */
int ldif_reader_open(struct ldif_reader *r, const char *path);

/*
 * Reads the next record into *rec. Returns 1, 0 at the end of the file, or -1
 * with *line and why set: a UTF-8 byte order mark on line 1, a read error (why
 * holds strerror's text), a record longer than LDIF_RECORD_MAX_BYTES or no memory.
 */
int ldif_reader_next(struct ldif_reader *r, struct ldif_record *rec, unsigned long *line, char *why,
                     size_t whylen);

/* Closes the file and frees the buffer. */
void ldif_reader_close(struct ldif_reader *r);

#endif
