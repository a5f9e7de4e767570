/* RFC 4533 as a provider speaks it (sync.h's second half): the request minidir is asked
 * with, a cookie's parts, and the controls and messages it answers with. */
#include <string.h>

#include "protocol/sync.h"
#include "protocol/tlv.h"

#define TAG_BOOLEAN 0x01
#define TAG_OCTETS 0x04
#define TAG_ENUM 0x0a
#define TAG_SEQUENCE 0x30

int sync_request_decode(const struct berval *value, enum sync_mode *mode, struct berval *cookie,
                        bool *reload_hint)
{
	const unsigned char *v = (const unsigned char *)value->bv_val, *p, *end, *body;
	size_t len;
	unsigned char tag;
	cookie->bv_val = NULL;
	cookie->bv_len = 0;
	*reload_hint = false;
	if (!v || !tlv_read(&v, v + value->bv_len, &tag, &p, &len) || tag != TAG_SEQUENCE ||
	    v != (const unsigned char *)value->bv_val + value->bv_len)
		return -1;
	end = p + len;
	if (!tlv_read(&p, end, &tag, &body, &len) || tag != TAG_ENUM || len != 1)
		return -1;
	if (body[0] != SYNC_REFRESH_ONLY && body[0] != SYNC_REFRESH_AND_PERSIST)
		return -1;
	*mode = (enum sync_mode)body[0];
	const unsigned char *q = p;
	if (q < end && tlv_read(&q, end, &tag, &body, &len) && tag == TAG_OCTETS) {
		cookie->bv_val = (char *)body;
		cookie->bv_len = len;
		p = q;
	}
	if (p < end) {
		if (!tlv_read(&p, end, &tag, &body, &len) || tag != TAG_BOOLEAN || len != 1)
			return -1;
		*reload_hint = body[0] != 0;
	}
	return p == end ? 0 : -1;
}

void sync_cookie_parts(const struct berval *cookie, int *rid, struct berval *csns)
{
	*rid = -1;
	csns->bv_val = NULL;
	csns->bv_len = 0;
	const char *s = cookie ? cookie->bv_val : NULL, *end = s ? s + cookie->bv_len : NULL;
	while (s && s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		size_t n = (size_t)((comma ? comma : end) - s);
		if (n > 4 && memcmp(s, "csn=", 4) == 0) {
			csns->bv_val = (char *)s + 4;
			csns->bv_len =
			    (size_t)(end - s) - 4; /* the last part: CSNs hold no comma */
			return;
		}
		if (n > 4 && n <= 7 && memcmp(s, "rid=", 4) == 0) {
			int r = 0;
			for (size_t i = 4; i < n && r >= 0; i++)
				r = s[i] >= '0' && s[i] <= '9' ? r * 10 + (s[i] - '0') : -1;
			*rid = r;
		}
		s = comma ? comma + 1 : end;
	}
}

/* The server ID field of a CSN (its third '#' part), into [*sid, *sid + *n). */
static bool csn_sid(const char *csn, size_t len, const char **sid, size_t *n)
{
	const char *p = csn, *end = csn + len;
	for (int field = 0; field < 2; field++) {
		p = memchr(p, '#', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	const char *q = memchr(p, '#', (size_t)(end - p));
	*sid = p;
	*n = (size_t)((q ? q : end) - p);
	return true;
}

bool sync_csn_newer(const char *csn, size_t len, const struct berval *csns)
{
	const char *sid, *s = csns->bv_val, *end = s ? s + csns->bv_len : NULL;
	size_t sidlen;
	if (len == 0 || !s || !csn_sid(csn, len, &sid, &sidlen))
		return true;
	while (s < end) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		size_t n = (size_t)((semi ? semi : end) - s);
		const char *osid;
		size_t olen;
		if (csn_sid(s, n, &osid, &olen) && olen == sidlen && memcmp(osid, sid, olen) == 0) {
			int c = memcmp(csn, s, len < n ? len : n);
			return c > 0 || (c == 0 && len > n);
		}
		s = semi ? semi + 1 : end;
	}
	return true;
}

/* ber_flatten's end of every encoder: *out, and ber freed. */
static int flatten(BerElement *ber, int rc, struct berval **out)
{
	*out = NULL;
	if (rc >= 0 && ber_flatten(ber, out) < 0)
		rc = -1;
	ber_free(ber, 1);
	return rc < 0 ? -1 : 0;
}

int sync_state_encode(enum sync_state state, const unsigned char uuid[SYNC_UUID_LEN],
                      const struct berval *cookie, struct berval **out)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return -1;
	int rc =
	    ber_printf(ber, "{eo", (ber_int_t)state, (const char *)uuid, (ber_len_t)SYNC_UUID_LEN);
	if (rc >= 0 && cookie && cookie->bv_val)
		rc = ber_printf(ber, "O", cookie);
	if (rc >= 0)
		rc = ber_printf(ber, "}");
	return flatten(ber, rc, out);
}

int sync_done_encode(const struct berval *cookie, bool refresh_deletes, struct berval **out)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return -1;
	int rc = ber_printf(ber, "{");
	if (rc >= 0 && cookie && cookie->bv_val)
		rc = ber_printf(ber, "O", cookie);
	if (rc >= 0 && refresh_deletes)
		rc = ber_printf(ber, "b", (ber_int_t)1);
	if (rc >= 0)
		rc = ber_printf(ber, "}");
	return flatten(ber, rc, out);
}

int sync_info_encode(enum sync_info_kind kind, const struct berval *cookie, bool flag,
                     const unsigned char *uuids, size_t n, struct berval **out)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return -1;
	bool has_cookie = cookie && cookie->bv_val;
	int rc;
	if (kind == SYNC_INFO_NEW_COOKIE) {
		static const struct berval none = {0, ""};
		rc = ber_printf(ber, "tO", (ber_tag_t)0x80, has_cookie ? cookie : &none);
		return flatten(ber, rc, out);
	}
	/* [1] refreshDelete, [2] refreshPresent, [3] syncIdSet: constructed, context tags. */
	ber_tag_t tag = kind == SYNC_INFO_REFRESH_DELETE    ? 0xa1
	                : kind == SYNC_INFO_REFRESH_PRESENT ? 0xa2
	                                                    : 0xa3;
	rc = ber_printf(ber, "t{", tag);
	if (rc >= 0 && has_cookie)
		rc = ber_printf(ber, "O", cookie);
	/* refreshDone defaults to TRUE, refreshDeletes to FALSE: only the other value is sent. */
	if (rc >= 0 && kind != SYNC_INFO_ID_SET && !flag)
		rc = ber_printf(ber, "b", (ber_int_t)0);
	if (rc >= 0 && kind == SYNC_INFO_ID_SET) {
		if (flag)
			rc = ber_printf(ber, "b", (ber_int_t)1);
		if (rc >= 0)
			rc = ber_printf(ber, "[");
		for (size_t i = 0; rc >= 0 && i < n; i++)
			rc = ber_printf(ber, "o", (const char *)uuids + i * SYNC_UUID_LEN,
			                (ber_len_t)SYNC_UUID_LEN);
		if (rc >= 0)
			rc = ber_printf(ber, "]");
	}
	if (rc >= 0)
		rc = ber_printf(ber, "}");
	return flatten(ber, rc, out);
}
