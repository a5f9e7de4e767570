#include "protocol/sync.h"

#include <stdlib.h>

#include "protocol/tlv.h"

#define TAG_BOOLEAN 0x01
#define TAG_OCTETS 0x04
#define TAG_ENUM 0x0a
#define TAG_SEQUENCE 0x30
#define TAG_SET 0x31

int sync_request_encode(enum sync_mode mode, const struct berval *cookie, bool reload_hint,
                        struct berval **out)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return -1;
	int rc = ber_printf(ber, "{e", (ber_int_t)mode);
	if (rc >= 0 && cookie && cookie->bv_len)
		rc = ber_printf(ber, "O", cookie);
	if (rc >= 0 && reload_hint)
		rc = ber_printf(ber, "b", (ber_int_t)1);
	if (rc >= 0)
		rc = ber_printf(ber, "}");
	*out = NULL;
	if (rc >= 0 && ber_flatten(ber, out) < 0)
		rc = -1;
	ber_free(ber, 1);
	return rc < 0 ? -1 : 0;
}

/* The content of the SEQUENCE that is the whole of value, into [*p, *end). */
static bool open_sequence(const struct berval *value, const unsigned char **p,
                          const unsigned char **end)
{
	const unsigned char *v = (const unsigned char *)value->bv_val, *body;
	size_t len;
	unsigned char tag;
	if (!v || !tlv_read(&v, v + value->bv_len, &tag, &body, &len) || tag != TAG_SEQUENCE ||
	    v != (const unsigned char *)value->bv_val + value->bv_len)
		return false;
	*p = body;
	*end = body + len;
	return true;
}

/* A small non-negative INTEGER or ENUMERATED content into *n. */
static bool small_number(const unsigned char *v, size_t len, int *n)
{
	if (len == 0 || len > 2 || (v[0] & 0x80))
		return false;
	*n = len == 1 ? v[0] : v[0] << 8 | v[1];
	return true;
}

/* An optional cookie (OCTET STRING) at *p: taken, or left at NULL. */
static void optional_cookie(const unsigned char **p, const unsigned char *end,
                            struct berval *cookie)
{
	const unsigned char *q = *p, *v;
	size_t len;
	unsigned char tag;
	cookie->bv_val = NULL;
	cookie->bv_len = 0;
	if (q < end && tlv_read(&q, end, &tag, &v, &len) && tag == TAG_OCTETS) {
		cookie->bv_val = (char *)v;
		cookie->bv_len = len;
		*p = q;
	}
}

/* An optional BOOLEAN at *p into *b (left as the default when absent); false if bad. */
static bool optional_boolean(const unsigned char **p, const unsigned char *end, bool *b)
{
	const unsigned char *q = *p, *v;
	size_t len;
	unsigned char tag;
	if (q == end)
		return true;
	if (!tlv_read(&q, end, &tag, &v, &len) || tag != TAG_BOOLEAN)
		return true; /* something else follows: the caller checks it */
	if (len != 1)
		return false;
	*b = v[0] != 0;
	*p = q;
	return true;
}

int sync_state_decode(const struct berval *value, enum sync_state *state,
                      const unsigned char **uuid, struct berval *cookie)
{
	const unsigned char *p, *end, *v;
	size_t len;
	unsigned char tag;
	int n;
	if (!open_sequence(value, &p, &end) || !tlv_read(&p, end, &tag, &v, &len) ||
	    tag != TAG_ENUM || !small_number(v, len, &n) || n > SYNC_DELETE)
		return -1;
	*state = (enum sync_state)n;
	if (!tlv_read(&p, end, &tag, &v, &len) || tag != TAG_OCTETS || len != SYNC_UUID_LEN)
		return -1;
	*uuid = v;
	optional_cookie(&p, end, cookie);
	return p == end ? 0 : -1;
}

int sync_done_decode(const struct berval *value, struct berval *cookie, bool *refresh_deletes)
{
	const unsigned char *p, *end;
	*refresh_deletes = false;
	if (!open_sequence(value, &p, &end))
		return -1;
	optional_cookie(&p, end, cookie);
	if (!optional_boolean(&p, end, refresh_deletes))
		return -1;
	return p == end ? 0 : -1;
}

/* syncIdSet's SET OF syncUUID at [p, end) into info. */
static int take_uuids(const unsigned char *p, const unsigned char *end, struct sync_info *info)
{
	size_t n = 0;
	for (const unsigned char *q = p, *v; q < end; n++) {
		size_t len;
		unsigned char tag;
		if (!tlv_read(&q, end, &tag, &v, &len) || tag != TAG_OCTETS || len != SYNC_UUID_LEN)
			return -1;
	}
	info->uuids = calloc(n ? n : 1, sizeof(*info->uuids));
	if (!info->uuids)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		unsigned char tag;
		tlv_read(&p, end, &tag, &info->uuids[i], &len);
	}
	info->n = n;
	return 0;
}

int sync_info_decode(const struct berval *value, struct sync_info *info)
{
	const unsigned char *p = (const unsigned char *)value->bv_val, *end, *body;
	size_t len;
	unsigned char tag;
	*info = (struct sync_info){0};
	if (!p || !tlv_read(&p, p + value->bv_len, &tag, &body, &len) ||
	    p != (const unsigned char *)value->bv_val + value->bv_len)
		return -1;
	end = body + len;
	switch (tag) {
	case 0x80: /* [0] newcookie, primitive */
		info->kind = SYNC_INFO_NEW_COOKIE;
		info->cookie.bv_val = (char *)body;
		info->cookie.bv_len = len;
		return 0;
	case 0xa1: /* [1] refreshDelete */
	case 0xa2: /* [2] refreshPresent */
		info->kind = tag == 0xa1 ? SYNC_INFO_REFRESH_DELETE : SYNC_INFO_REFRESH_PRESENT;
		info->refresh_done = true;
		optional_cookie(&body, end, &info->cookie);
		if (!optional_boolean(&body, end, &info->refresh_done))
			return -1;
		return body == end ? 0 : -1;
	case 0xa3: { /* [3] syncIdSet */
		info->kind = SYNC_INFO_ID_SET;
		optional_cookie(&body, end, &info->cookie);
		if (!optional_boolean(&body, end, &info->refresh_deletes))
			return -1;
		const unsigned char *set;
		size_t slen;
		if (!tlv_read(&body, end, &tag, &set, &slen) || tag != TAG_SET || body != end)
			return -1;
		return take_uuids(set, set + slen, info);
	}
	default:
		return -1;
	}
}

void sync_info_free(struct sync_info *info)
{
	free(info->uuids);
	info->uuids = NULL;
	info->n = 0;
}
