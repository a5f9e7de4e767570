#include "storage/ldif_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

int ldif_reader_open(struct ldif_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->fp = fopen(path, "r");
	return r->fp ? 0 : -1;
}

static int reader_append(struct ldif_reader *r, const char *s, size_t n)
{
	if (r->len + n + 2 > r->cap) {
		size_t cap = (r->len + n + 2) * 2;
		char *grown = realloc(r->text, cap);
		if (!grown)
			return -1;
		r->text = grown;
		r->cap = cap;
	}
	memcpy(r->text + r->len, s, n);
	r->len += n;
	r->text[r->len++] = '\n';
	r->text[r->len] = '\0';
	return 0;
}

int ldif_reader_next(struct ldif_reader *r, struct ldif_record *rec, unsigned long *line, char *why,
                     size_t whylen)
{
	memset(rec, 0, sizeof(*rec));
	r->len = 0;
	for (;;) {
		errno = 0;
		ssize_t got = getline(&r->lbuf, &r->lcap, r->fp);
		if (got < 0) {
			if (ferror(r->fp)) {
				*line = r->line + 1;
				snprintf(why, whylen, "read error: %s",
				         strerror(errno ? errno : EIO));
				return -1;
			}
			break;
		}
		size_t n = (size_t)got;
		r->line++;
		bool newline = n > 0 && r->lbuf[n - 1] == '\n';
		n -= newline;
		if (n > 0 && r->lbuf[n - 1] == '\r')
			n--;
		*line = r->line;
		if (r->line == 1 && n >= 3 && memcmp(r->lbuf, "\xEF\xBB\xBF", 3) == 0) {
			snprintf(
			    why, whylen,
			    "the file starts with a UTF-8 byte order mark, which RFC 2849 LDIF "
			    "does not allow (libldap would read it as part of the first line); "
			    "remove it");
			return -1;
		}
		if (memchr(r->lbuf, '\0', n)) {
			snprintf(why, whylen,
			         "NUL byte in the line (binary values must be base64)");
			return -1;
		}
		if (n == 0) {
			if (r->len)
				break; /* the blank line ending the record */
			continue;
		}
		if (!r->len)
			rec->first_line = r->line;
		if (reader_append(r, r->lbuf, n) < 0) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		rec->last_line = r->line;
		rec->cut = !newline;
	}
	rec->text = r->text;
	rec->len = r->len;
	return r->len ? 1 : 0;
}

void ldif_reader_close(struct ldif_reader *r)
{
	if (r->fp)
		fclose(r->fp);
	free(r->text);
	free(r->lbuf);
	memset(r, 0, sizeof(*r));
}

unsigned long ldif_record_type_line(const char *text, unsigned long first_line, const char *type,
                                    int n)
{
	size_t tlen = strlen(type);
	unsigned long line = first_line;
	for (const char *p = text; *p; line++) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		/* Not a continuation (" ...") or a comment: "type:", "type::" or "type:<". */
		if (p[0] != ' ' && p[0] != '#' && len > tlen && p[tlen] == ':' &&
		    strncasecmp(p, type, tlen) == 0 && n-- == 0)
			return line;
		p += len + (end != NULL);
	}
	return 0;
}
