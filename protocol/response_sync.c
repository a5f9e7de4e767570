/* The PDUs of a Content Synchronization answer that no other response needs
 * (response.h's last part): controls on an entry, an entry with no attributes, and the
 * IntermediateResponse that carries a Sync Info message. Not on the lookup path. */
#include <string.h>

#include "protocol/response.h"
#include "protocol/tlv.h"

#define TAG_SEQUENCE 0x30
#define TAG_OCTETS 0x04
#define TAG_INTERMEDIATE 0x79 /* [APPLICATION 25] IntermediateResponse */
#define TAG_SEARCH_ENTRY 0x64 /* [APPLICATION 4] SearchResultEntry */

int response_add_controls(struct buf *out, size_t at, const void *controls, size_t clen)
{
	if (at >= buf_pending(out))
		return -1;
	const unsigned char *p = out->data + out->off + at, *end = out->data + out->len, *body;
	size_t len;
	unsigned char tag;
	if (!tlv_read(&p, end, &tag, &body, &len) || tag != TAG_SEQUENCE || p != end)
		return -1;
	size_t head = (size_t)(body - (out->data + out->off + at)),
	       nhead = 1 + tlv_len_size(len + clen);
	if (buf_reserve(out, nhead - head + clen) < 0) /* it may move the pending bytes */
		return -1;
	unsigned char *m = out->data + out->off + at;
	memmove(m + nhead, m + head, len);
	m[0] = TAG_SEQUENCE;
	tlv_put_len(m + 1, len + clen);
	memcpy(m + nhead + len, controls, clen);
	out->len = out->off + at + nhead + len + clen;
	return 0;
}

/* Appends SEQUENCE { messageID, op } where op[0..oplen) is the protocolOp, encoded. */
static int put_message(struct buf *out, int32_t msgid, const struct buf *op)
{
	size_t msg = tlv_int_size(msgid) + op->len;
	if (buf_reserve(out, tlv_size(msg)) < 0)
		return -1;
	unsigned char *w = out->data + out->len;
	*w++ = TAG_SEQUENCE;
	w = tlv_write_len(w, msg);
	w = tlv_write_int(w, 0x02, msgid);
	memcpy(w, op->data, op->len);
	out->len = (size_t)(w + op->len - out->data);
	return 0;
}

int response_bare_entry(struct buf *out, int32_t msgid, const void *dn, size_t dnlen)
{
	struct buf op = {0};
	size_t content = tlv_size(dnlen) + 2;
	int rc = buf_reserve(&op, tlv_size(content));
	if (rc == 0) {
		unsigned char *w = op.data;
		*w++ = TAG_SEARCH_ENTRY;
		w = tlv_write_len(w, content);
		w = tlv_write(w, TAG_OCTETS, dn, dnlen);
		*w++ = TAG_SEQUENCE; /* attributes: none */
		*w++ = 0;
		op.len = (size_t)(w - op.data);
		rc = put_message(out, msgid, &op);
	}
	buf_free(&op);
	return rc;
}

int response_intermediate(struct buf *out, int32_t msgid, const char *oid, const void *value,
                          size_t vlen)
{
	struct buf op = {0};
	size_t olen = strlen(oid), content = tlv_size(olen) + tlv_size(vlen);
	int rc = buf_reserve(&op, tlv_size(content));
	if (rc == 0) {
		unsigned char *w = op.data;
		*w++ = TAG_INTERMEDIATE;
		w = tlv_write_len(w, content);
		w = tlv_write(w, 0x80, oid, olen);   /* responseName [0] */
		w = tlv_write(w, 0x81, value, vlen); /* responseValue [1] */
		op.len = (size_t)(w - op.data);
		rc = put_message(out, msgid, &op);
	}
	buf_free(&op);
	return rc;
}
