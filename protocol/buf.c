/* The growable byte buffer (buf.h). */
#include "protocol/buf.h"

#include <stdlib.h>
#include <string.h>

int buf_reserve(struct buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return 0;
	if (b->off > 0 && b->cap - buf_pending(b) >= n) {
		buf_compact(b);
		return 0;
	}
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	unsigned char *d = realloc(b->data, cap);
	if (!d)
		return -1;
	b->data = d;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (buf_reserve(b, n) < 0)
		return -1;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void buf_append_escaped(struct buf *b, const void *p, size_t n, const char *special)
{
	static const char hex[] = "0123456789abcdef";
	const char *s = p;
	size_t run = 0; /* start of the bytes that go as they are (appended in one piece) */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || (c && strchr(special, c))) {
			char e[3] = {'\\', hex[c >> 4], hex[c & 15]};
			buf_append(b, s + run, i - run);
			buf_append(b, e, 3);
			run = i + 1;
		}
	}
	buf_append(b, s + run, n - run);
}

void buf_consume(struct buf *b, size_t n)
{
	b->off += n;
	if (b->off >= b->len)
		b->off = b->len = 0;
}

void buf_compact(struct buf *b)
{
	if (b->off == 0)
		return;
	memmove(b->data, b->data + b->off, buf_pending(b));
	b->len -= b->off;
	b->off = 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
