/* Hot-path BER reading and writing; see tlv.h for why this is not liblber. */
#include "protocol/tlv.h"

size_t tlv_len_size(size_t len)
{
	if (len < 0x80)
		return 1;
	if (len <= 0xff)
		return 2;
	if (len <= 0xffff)
		return 3;
	if (len <= 0xffffff)
		return 4;
	return 5;
}

size_t tlv_put_len(unsigned char *p, size_t len)
{
	size_t n = tlv_len_size(len);
	if (n == 1) {
		p[0] = (unsigned char)len;
		return 1;
	}
	p[0] = (unsigned char)(0x80 | (n - 1));
	for (size_t i = n - 1; i >= 1; i--) {
		p[i] = (unsigned char)(len & 0xff);
		len >>= 8;
	}
	return n;
}

bool tlv_read(const unsigned char **p, const unsigned char *end, unsigned char *tag,
              const unsigned char **val, size_t *vlen)
{
	const unsigned char *q = *p;
	if (end - q < 2)
		return false;
	*tag = *q++;
	if ((*tag & 0x1f) == 0x1f)
		return false;
	size_t len = *q++;
	if (len & 0x80) {
		size_t n = len & 0x7f;
		if (n == 0 || n > 4 || (size_t)(end - q) < n)
			return false;
		len = 0;
		while (n--)
			len = (len << 8) | *q++;
	}
	if ((size_t)(end - q) < len)
		return false;
	*val = q;
	*vlen = len;
	*p = q + len;
	return true;
}

int tlv_put(struct buf *b, unsigned char tag, const void *val, size_t vlen)
{
	if (buf_reserve(b, 1 + 5 + vlen) < 0)
		return -1;
	b->len = (size_t)(tlv_write(b->data + b->len, tag, val, vlen) - b->data);
	return 0;
}

int tlv_put_int(struct buf *b, unsigned char tag, int32_t v)
{
	if (buf_reserve(b, 6) < 0)
		return -1;
	b->len = (size_t)(tlv_write_int(b->data + b->len, tag, v) - b->data);
	return 0;
}
