/*
 * Reading client BER element by element, for requests (request.h), filters
 * (filter.h) and control values (controls.h): a cursor over the content of
 * one constructed element, on top of tlv_read (tlv.h). No allocation, no
 * liblber: strings point into the input.
 *
 * Strict where RFC 4511 and X.690 are: every tag is checked (one-byte tags
 * only; LDAP has no tag number above 30), lengths are definite and lie inside
 * the enclosing element (at most 4 length bytes, as frame.h), an INTEGER or
 * ENUMERATED has 1 to 4 content bytes, a BOOLEAN exactly one (8.2.1; any
 * non-zero is TRUE), and a caller checks ber_in_end where an element must hold
 * nothing more. liblber accepts more (any tag for a string, empty INTEGERs,
 * trailing elements).
 *
 * Lenient where liblber is and it costs nothing: an INTEGER or ENUMERATED may
 * have leading 00 or ff octets that X.690 8.3.2 forbids (00 00 80 00 is
 * 32768), as long as it has at most 4 content bytes, since liblber's
 * ber_get_int (and so slapd, and clients built on it) takes such encodings
 * and refuses five or more bytes whatever they hold.
 *
 * Every function fails rather than guesses and reads only inside [p, end).
 * Thread rules: no state; a reader belongs to its caller.
 */
#ifndef MINIDIR_PROTOCOL_BER_IN_H
#define MINIDIR_PROTOCOL_BER_IN_H

#include <lber.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The unread part [p, end) of some content (borrowed). */
struct ber_in {
	const unsigned char *p;
	const unsigned char *end;
};

static inline struct ber_in ber_in_make(const void *p, size_t len)
{
	return (struct ber_in){p, (const unsigned char *)p + len};
}

/* True when nothing is left to read. */
static inline bool ber_in_end(const struct ber_in *in)
{
	return in->p >= in->end;
}

/* The tag byte of the next element, or -1 when nothing is left (the element is not checked). */
static inline int ber_in_peek(const struct ber_in *in)
{
	return in->p < in->end ? *in->p : -1;
}

/* ber_in_take for an element whose length is not in the short form (tlv_read's rules). */
int ber_in_take_long(struct ber_in *in, unsigned char tag, struct ber_in *content);

/*
 * Reads the next element, which must have tag tag, and sets *content to a reader of its
 * content (constructed or not). Returns 0 and advances in; -1 when nothing is left, the
 * tag differs or the element is malformed (in unchanged).
 * Inline: a request is a few dozen short elements, and this is most of reading one.
 */
static inline int ber_in_take(struct ber_in *in, unsigned char tag, struct ber_in *content)
{
	const unsigned char *p = in->p;
	size_t left = (size_t)(in->end - p);
	/* tag is the caller's: it may be a byte the client sent (an operation's tag) */
	if (left >= 2 && p[0] == tag && (tag & 0x1f) != 0x1f && p[1] < 0x80 && left - 2 >= p[1]) {
		content->p = p + 2;
		content->end = in->p = p + 2 + p[1];
		return 0;
	}
	return ber_in_take_long(in, tag, content);
}

/* As ber_in_take for a primitive string: *out points at its content bytes. */
static inline int ber_in_string(struct ber_in *in, unsigned char tag, struct berval *out)
{
	struct ber_in c;
	if (ber_in_take(in, tag, &c) < 0)
		return -1;
	out->bv_val = (char *)c.p;
	out->bv_len = (ber_len_t)(c.end - c.p);
	return 0;
}

/*
 * The content of an INTEGER (v[0..len), two's complement, 1 to 4 bytes, leading 00 or ff
 * octets allowed as liblber allows them) as a number. Returns 0 or -1.
 */
static inline int ber_in_int_value(const unsigned char *v, size_t len, int32_t *out)
{
	if (len < 1 || len > 4)
		return -1;
	uint32_t u = v[0] & 0x80 ? UINT32_MAX : 0;
	for (size_t i = 0; i < len; i++)
		u = (u << 8) | v[i];
	*out = (int32_t)u;
	return 0;
}

/* An INTEGER or ENUMERATED (tag 0x02, 0x0a, or a context tag) of 1 to 4 content bytes. */
static inline int ber_in_int(struct ber_in *in, unsigned char tag, int32_t *out)
{
	struct ber_in c, save = *in;
	if (ber_in_take(in, tag, &c) < 0)
		return -1;
	if (ber_in_int_value(c.p, (size_t)(c.end - c.p), out) < 0) {
		*in = save;
		return -1;
	}
	return 0;
}

/* A BOOLEAN (tag 0x01 or a context tag): one content byte, non-zero is true. */
static inline int ber_in_bool(struct ber_in *in, unsigned char tag, bool *out)
{
	struct ber_in c, save = *in;
	if (ber_in_take(in, tag, &c) < 0)
		return -1;
	if (c.end - c.p != 1) {
		*in = save;
		return -1;
	}
	*out = *c.p != 0;
	return 0;
}

#endif
