/*
 * Minimal BER for the hot path: reading TLVs of trusted, definite-length
 * encodings (entries minidir itself stored) and writing response PDUs straight
 * into a connection's output buffer.
 *
 * Why not liblber here: a search answers with thousands of SearchResultEntry
 * PDUs spliced from pre-encoded entries; liblber would allocate a BerElement
 * and copy each one. Untrusted input (client requests) is decoded with liblber
 * (protocol/request.c); this file never sees it except through frame_next().
 */
#ifndef MINIDIR_PROTOCOL_TLV_H
#define MINIDIR_PROTOCOL_TLV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer with a consumed offset: data[off..len) is pending. */
struct buf {
	unsigned char *data;
	size_t off;
	size_t len;
	size_t cap;
};

/* Makes room for n more bytes at data+len. Returns 0, or -1 when out of memory. */
int buf_reserve(struct buf *b, size_t n);
/* Appends n bytes. Returns 0 or -1 (out of memory; b unchanged). */
int buf_append(struct buf *b, const void *p, size_t n);
/* Marks n pending bytes consumed; resets to empty when all are. */
void buf_consume(struct buf *b, size_t n);
/* Moves pending bytes to the front, so free space is contiguous at the end. */
void buf_compact(struct buf *b);
static inline size_t buf_pending(const struct buf *b)
{
	return b->len - b->off;
}
void buf_free(struct buf *b);

/* Number of bytes the BER encoding of length len takes (1 to 5). */
size_t tlv_len_size(size_t len);
/* Writes the definite length len at p; returns bytes written (tlv_len_size(len)). */
size_t tlv_put_len(unsigned char *p, size_t len);

/*
 * Reads one TLV at *p (end bounds the input). On success sets *tag, *val, *vlen,
 * advances *p past the element and returns true. Returns false on a truncated
 * element, a multi-byte tag, an indefinite length or a length over 4 bytes.
 */
bool tlv_read(const unsigned char **p, const unsigned char *end, unsigned char *tag,
              const unsigned char **val, size_t *vlen);

/* Appends tag, length and value. Returns 0 or -1 (out of memory). */
int tlv_put(struct buf *b, unsigned char tag, const void *val, size_t vlen);
/* Appends an INTEGER (tag given: 0x02 INTEGER, 0x0a ENUMERATED). */
int tlv_put_int(struct buf *b, unsigned char tag, int32_t v);
/* Size of the full encoding of an INTEGER with value v (tag, length, content). */
size_t tlv_int_size(int32_t v);

#endif
