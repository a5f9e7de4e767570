#include "ldif/ldif_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/entry.h"

/* Bytes asked of each read(2); the buffer grows beyond it only for a longer record. */
#define READER_CHUNK (1u << 20)

int ldif_reader_open(struct ldif_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	return r->fd < 0 ? -1 : 0;
}

void ldif_reader_close(struct ldif_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* Reads more of the file, after moving buf[*keep..end) to the front (*keep and pos move
 * with it). Returns 0, or -1 with errno set. */
static int reader_fill(struct ldif_reader *r, size_t *keep)
{
	size_t kept = r->end - *keep;
	if (kept)
		memmove(r->buf, r->buf + *keep, kept);
	r->pos -= *keep;
	r->end = kept;
	*keep = 0;
	if (r->cap - r->end < READER_CHUNK / 2) {
		size_t cap = r->cap ? r->cap * 2 : READER_CHUNK;
		while (cap - r->end < READER_CHUNK / 2)
			cap *= 2;
		char *grown = realloc(r->buf, cap);
		if (!grown) {
			errno = ENOMEM;
			return -1;
		}
		r->buf = grown;
		r->cap = cap;
	}
	ssize_t got;
	do
		got = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -1;
	r->end += (size_t)got;
	r->eof = got == 0;
	return 0;
}

/*
 * The whole line at pos, reading more when needed (buf[*keep..) is kept): its length
 * without the LF in *len, without a CR before that too in *n, and whether it has the LF.
 * Returns 1, 0 at the end of the file, or -1 with errno set.
 */
static int reader_line(struct ldif_reader *r, size_t *keep, size_t *len, size_t *n, bool *newline)
{
	for (;;) {
		const char *s = r->buf + r->pos;
		const char *nl = r->pos < r->end ? memchr(s, '\n', r->end - r->pos) : NULL;
		if (nl || r->eof) {
			if (!nl && r->pos == r->end)
				return 0;
			*len = nl ? (size_t)(nl - s) : r->end - r->pos;
			*n = *len - (*len > 0 && s[*len - 1] == '\r');
			*newline = nl != NULL;
			return 1;
		}
		if (r->end - *keep >= LDIF_RECORD_MAX_BYTES) {
			errno =
			    EFBIG; /* not read on: the file could hold gigabytes of one record */
			return -1;
		}
		if (reader_fill(r, keep) < 0)
			return -1;
	}
}

/* Moves past the line reader_line measured. */
static void reader_skip(struct ldif_reader *r, size_t len, bool newline)
{
	r->pos += len + newline;
	r->offset += (long long)(len + newline);
	r->line++;
}

/* first: the record's first line, 0 before a record began. */
static int read_error(struct ldif_reader *r, unsigned long first, unsigned long *line, char *why,
                      size_t whylen)
{
	*line = r->line + 1;
	if (errno == EFBIG) {
		*line = first ? first : *line;
		snprintf(why, whylen,
		         "a record of more than %d MiB of LDIF text (an entry may take at most %d "
		         "MiB encoded)",
		         LDIF_RECORD_MAX_BYTES >> 20, ENTRY_MAX_BYTES >> 20);
		return -1;
	}
	snprintf(why, whylen, "%s", errno == ENOMEM ? "out of memory" : "read error: ");
	if (errno != ENOMEM)
		snprintf(why + strlen(why), whylen - strlen(why), "%s", strerror(errno));
	return -1;
}

int ldif_reader_next(struct ldif_reader *r, struct ldif_record *rec, unsigned long *line, char *why,
                     size_t whylen)
{
	memset(rec, 0, sizeof(*rec));
	size_t keep = r->pos, len, n;
	bool newline;
	if (!r->begun) {
		while (r->end - r->pos < 3 && !r->eof)
			if (reader_fill(r, &keep) < 0)
				return read_error(r, 0, line, why, whylen);
		r->begun = true;
		if (r->end - r->pos >= 3 && memcmp(r->buf + r->pos, "\xEF\xBB\xBF", 3) == 0) {
			*line = 1;
			snprintf(
			    why, whylen,
			    "the file starts with a UTF-8 byte order mark, which RFC 2849 LDIF "
			    "does not allow (libldap would read it as part of the first line); "
			    "remove it");
			return -1;
		}
	}
	int got;
	for (;;) { /* blank lines before the record */
		keep = r->pos;
		if ((got = reader_line(r, &keep, &len, &n, &newline)) <= 0)
			return got < 0 ? read_error(r, 0, line, why, whylen) : 0;
		if (n > 0)
			break;
		reader_skip(r, len, newline);
	}
	rec->first_line = r->line + 1;
	size_t rec_len = 0;
	for (;;) {
		reader_skip(r, len, newline);
		rec_len += len + newline;
		rec->last_line = r->line;
		rec->cut = !newline;
		if ((got = reader_line(r, &keep, &len, &n, &newline)) < 0)
			return read_error(r, rec->first_line, line, why, whylen);
		if (got == 0)
			break;
		if (n == 0) { /* the blank line ending the record */
			reader_skip(r, len, newline);
			break;
		}
	}
	rec->text = r->buf + keep;
	rec->len = rec_len;
	return 1;
}
