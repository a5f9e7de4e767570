#include "protocol/frame.h"

enum frame_status frame_next(const unsigned char *buf, size_t len, size_t max_pdu, size_t *pdu_len)
{
	if (len < 1)
		return FRAME_NEED_MORE;
	if (buf[0] != 0x30) /* LDAPMessage ::= SEQUENCE */
		return FRAME_MALFORMED;
	if (len < 2)
		return FRAME_NEED_MORE;
	size_t hdr = 2, body = buf[1];
	if (body & 0x80) {
		size_t n = body & 0x7f;
		if (n == 0 || n > 4) /* indefinite (forbidden in LDAP) or absurd */
			return FRAME_MALFORMED;
		if (len < 2 + n)
			return FRAME_NEED_MORE;
		body = 0;
		for (size_t i = 0; i < n; i++)
			body = (body << 8) | buf[2 + i];
		hdr += n;
	}
	if (body > max_pdu || hdr + body > max_pdu)
		return FRAME_TOO_BIG;
	if (len < hdr + body)
		return FRAME_NEED_MORE;
	*pdu_len = hdr + body;
	return FRAME_OK;
}
