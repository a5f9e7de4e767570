/*
 * The growable byte buffer everything above protocol/ writes into: a connection's
 * input and output, a response PDU, a DN key, a log line, an LDIF record. BER
 * encoding into it lives in tlv.h; this header knows nothing of BER.
 *
 * Ownership: a struct buf owns its bytes (data, malloc'd); buf_free releases them.
 * Callers may read data[off..len) and write data[len..cap) (after buf_reserve) and
 * then advance len themselves, as the encoders do; a pointer into data is
 * invalidated by any call that may grow or compact it (buf_reserve, buf_append,
 * buf_append_escaped, buf_compact, tlv_put*).
 *
 * Failure: only allocation fails. buf_reserve and buf_append return -1 and leave
 * the buffer as it was; buf_append_escaped reports nothing (it writes log text,
 * which may come out short). Nothing else can fail.
 *
 * Thread rules: no global state. A struct buf belongs to one user at a time
 * (a connection, a scratch area); nothing here locks.
 */
#ifndef MINIDIR_PROTOCOL_BUF_H
#define MINIDIR_PROTOCOL_BUF_H

#include <stddef.h>

/*
 * A byte buffer with a consumed offset: data[off..len) is pending, data[len..cap)
 * free. A zeroed struct is an empty buffer (data NULL).
 */
struct buf {
	unsigned char *data;
	size_t off;
	size_t len;
	size_t cap;
};

/*
 * Makes room for n more bytes at data+len: compacts if consumed space is
 * enough, else reallocates (capacity doubles from 256: small buffers, such as a
 * request's DN key, stay in malloc's fast per-thread caches).
 * Returns 0; -1 when out of memory (b unchanged).
 */
int buf_reserve(struct buf *b, size_t n);
/* Appends n bytes (p may be NULL when n is 0). Returns 0 or -1 (out of memory; b unchanged). */
int buf_append(struct buf *b, const void *p, size_t n);
/*
 * Appends p[0..n) with every byte below 0x20, 0x7f, a backslash and each byte of special
 * (NUL-terminated) written as \XX (two lowercase hex digits): the RFC 4515 value
 * escape, and what keeps a log line whole. Errors as buf_append (no error is reported
 * for a partial append: the text is for logs).
 */
void buf_append_escaped(struct buf *b, const void *p, size_t n, const char *special);
/* Marks n pending bytes consumed (n <= buf_pending(b)); resets off and len to 0 when all are. */
void buf_consume(struct buf *b, size_t n);
/* Moves pending bytes to the front (off becomes 0), so free space is contiguous at the end. */
void buf_compact(struct buf *b);
/* Bytes pending (data[off..len)). Pure; inline, as the read and write paths ask it often. */
static inline size_t buf_pending(const struct buf *b)
{
	return b->len - b->off;
}
/* Frees data and zeroes b (an empty buffer again, reusable). */
void buf_free(struct buf *b);

#endif
