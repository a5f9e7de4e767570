/*
 * Framing: finds where one LDAPMessage ends in a stream of bytes, so the
 * connection can hand exactly one PDU to the decoder and enforce a size limit
 * before buffering a hostile length.
 *
 * Made for client bytes: reads only buf[0..len), looks at the outer header
 * only (tag 0x30 and a definite length of at most 4 bytes) and never the
 * content. Pure: no state, any thread.
 */
#ifndef MINIDIR_PROTOCOL_FRAME_H
#define MINIDIR_PROTOCOL_FRAME_H

#include <stddef.h>

enum frame_status {
	FRAME_OK,        /* a whole PDU of *pdu_len bytes starts at buf */
	FRAME_NEED_MORE, /* the PDU is not complete yet; read more */
	FRAME_TOO_BIG,   /* its declared length exceeds max_pdu */
	FRAME_MALFORMED  /* not an LDAPMessage SEQUENCE, or a bad length */
};

/*
 * Examines the bytes at buf[0..len) (borrowed; buf may be NULL when len is 0).
 * max_pdu bounds the total PDU size, header included.
 * Returns FRAME_OK with *pdu_len the size of the first PDU (header included;
 * *pdu_len is written only then), FRAME_NEED_MORE while the header or the
 * declared content is incomplete (a length over max_pdu is FRAME_TOO_BIG as
 * soon as the header is complete), FRAME_TOO_BIG, or FRAME_MALFORMED for a
 * first byte other than 0x30, an indefinite length or more than 4 length bytes.
 */
enum frame_status frame_next(const unsigned char *buf, size_t len, size_t max_pdu, size_t *pdu_len);

#endif
