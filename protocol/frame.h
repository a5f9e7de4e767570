/*
 * Framing: finds where one LDAPMessage ends in a stream of bytes, so the
 * connection can hand exactly one PDU to the decoder and enforce a size limit
 * before buffering a hostile length.
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
 * Examines the bytes at buf[0..len). max_pdu bounds the total PDU size.
 * On FRAME_OK, *pdu_len is the size of the first PDU (header included).
 */
enum frame_status frame_next(const unsigned char *buf, size_t len, size_t max_pdu, size_t *pdu_len);

#endif
