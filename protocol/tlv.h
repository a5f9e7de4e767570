/*
 * Minimal BER for the hot path: writing response PDUs straight into a
 * connection's output buffer (a struct buf, buf.h), and reading TLVs of
 * definite-length encodings (entries minidir itself stored, response parts).
 *
 * Why not liblber here: a search answers with thousands of SearchResultEntry
 * PDUs spliced from pre-encoded entries; liblber would allocate a BerElement
 * and copy each one. Requests are read element by element on top of tlv_read
 * (ber_in.h).
 *
 * Hostile input: tlv_read also sees client bytes (ber_in.c reads requests with
 * it, after frame_next bounded the PDU). On any bytes it reads only inside
 * [*p, end), returns a value that lies inside them, and fails rather than
 * guesses: it never trusts a length beyond end.
 *
 * Failure: the readers return false on malformed bytes (tlv_read says what
 * they leave); the appenders (tlv_put*) fail only when out of memory (-1, the
 * buffer unchanged); the tlv_write* writers cannot fail, the caller having
 * reserved the room.
 *
 * Thread rules: no global state; a struct buf belongs to one user at a time.
 */
#ifndef MINIDIR_PROTOCOL_TLV_H
#define MINIDIR_PROTOCOL_TLV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "protocol/buf.h"

/* Number of bytes the BER encoding of length len takes (1 to 5; len < 2^32). Pure. */
size_t tlv_len_size(size_t len);
/*
 * Writes the definite length len (minimal form, len < 2^32) at p, which must
 * have tlv_len_size(len) bytes. Returns the bytes written.
 */
size_t tlv_put_len(unsigned char *p, size_t len);

/*
 * Reads one TLV at *p; end bounds the input (*p <= end). Borrows the bytes:
 * *val points into them.
 * Returns true: *tag is the identifier byte, *val and *vlen the content (inside
 * [*p, end)), and *p is advanced past the element. Returns false, *p, *val and
 * *vlen unchanged (*tag may be overwritten): fewer than 2 bytes, a multi-byte
 * tag (low five bits all set), an indefinite length, more than 4 length
 * bytes, or a length reaching past end. Non-minimal lengths (0x81 0x05) are
 * accepted; constructed content is not looked into.
 */
bool tlv_read(const unsigned char **p, const unsigned char *end, unsigned char *tag,
              const unsigned char **val, size_t *vlen);

/*
 * The length of the element at q (which has at least 4 bytes) when it takes the short
 * form or 0x81/0x82 (content under 64 KiB): true, *len the content's length and *h the
 * bytes of tag and length. False for any other form (tlv_read reads those). Nothing is
 * checked against an end: the caller does.
 */
static inline bool tlv_head_inline(const unsigned char *q, size_t *len, size_t *h)
{
	size_t n = q[1];
	*h = 2;
	if (n == 0x81) {
		n = q[2];
		*h = 3;
	} else if (n == 0x82) {
		n = (size_t)q[2] << 8 | q[3];
		*h = 4;
	} else if (n & 0x80) {
		return false;
	}
	*len = n;
	return true;
}

/*
 * tlv_read with lengths of up to two bytes (content under 64 KiB) read inline, the same
 * results on all bytes: for walks over many small elements, such as a stored entry's
 * attributes and values, where the call would cost more than the reading.
 */
static inline bool tlv_read_inline(const unsigned char **p, const unsigned char *end,
                                   unsigned char *tag, const unsigned char **val, size_t *vlen)
{
	const unsigned char *q = *p;
	size_t left = (size_t)(end - q), h, len;
	if (left < 4 || (q[0] & 0x1f) == 0x1f || !tlv_head_inline(q, &len, &h))
		return tlv_read(p, end, tag, val, vlen);
	if (left - h < len)
		return false;
	*tag = q[0];
	*val = q + h;
	*vlen = len;
	*p = q + h + len;
	return true;
}

/* tlv_len_size and tlv_put_len with lengths under 64 KiB inline (longer ones call them):
 * for encoders that write a PDU's headers with pointer bumps. tlv_write_len returns the
 * end of the length. */
static inline size_t tlv_len_size_inline(size_t len)
{
	return len < 0x80 ? 1 : len <= 0xff ? 2 : len <= 0xffff ? 3 : tlv_len_size(len);
}

static inline unsigned char *tlv_write_len(unsigned char *p, size_t len)
{
	if (len < 0x80) {
		p[0] = (unsigned char)len;
		return p + 1;
	}
	if (len <= 0xff) {
		p[0] = 0x81;
		p[1] = (unsigned char)len;
		return p + 2;
	}
	if (len <= 0xffff) {
		p[0] = 0x82;
		p[1] = (unsigned char)(len >> 8);
		p[2] = (unsigned char)len;
		return p + 3;
	}
	return p + tlv_put_len(p, len);
}

/* Bytes of an element whose content is clen bytes (tag, length, content). Pure. */
static inline size_t tlv_size(size_t clen)
{
	return 1 + tlv_len_size(clen) + clen;
}

/* Writes tag, length and val[0..vlen) at p, which has room for them (tlv_size(vlen));
 * returns the end. For encoders that reserve a whole PDU once (inline: a result PDU
 * writes several). */
static inline unsigned char *tlv_write(unsigned char *p, unsigned char tag, const void *val,
                                       size_t vlen)
{
	*p++ = tag;
	p = tlv_write_len(p, vlen);
	if (vlen)
		memcpy(p, val, vlen);
	return p + vlen;
}

/* Octets of the shortest two's complement form of v (X.690 8.3.2). */
static inline size_t tlv_int_octets(int32_t v)
{
	if (v >= -0x80 && v < 0x80)
		return 1;
	if (v >= -0x8000 && v < 0x8000)
		return 2;
	return v >= -0x800000 && v < 0x800000 ? 3 : 4;
}

/* Size of tlv_put_int's encoding of v (tag, length, content: 3 to 6 bytes). Pure. */
static inline size_t tlv_int_size(int32_t v)
{
	return 2 + tlv_int_octets(v);
}

/* The same for v as tlv_put_int encodes it (tlv_int_size(v) bytes). */
static inline unsigned char *tlv_write_int(unsigned char *p, unsigned char tag, int32_t v)
{
	size_t n = tlv_int_octets(v);
	uint32_t u = (uint32_t)v;
	*p++ = tag;
	*p++ = (unsigned char)n;
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(u >> ((n - 1 - i) * 8));
	return p + n;
}

/* Appends tag, length and val[0..vlen) (val may be NULL when vlen is 0).
 * Returns 0; -1 when out of memory (b unchanged). */
int tlv_put(struct buf *b, unsigned char tag, const void *val, size_t vlen);
/* Appends v in minimal two's complement with tag (0x02 INTEGER, 0x0a ENUMERATED).
 * Returns 0; -1 when out of memory (b unchanged). */
int tlv_put_int(struct buf *b, unsigned char tag, int32_t v);

#endif
