#include "protocol/controls.h"

#include <ldap.h>

/* Tags inside a SortKey (RFC 2891). */
#define SORT_RULE_TAG 0x80
#define SORT_REVERSE_TAG 0x81

/* A BerElement reading value in place (no copy): strings point into value. */
static BerElement *reader(const struct berval *value)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (ber)
		ber_init2(ber, (struct berval *)value, LBER_USE_DER);
	return ber;
}

static int get_string(BerElement *ber, struct berval *bv)
{
	return ber_get_stringbv(ber, bv, LBER_BV_NOTERM) == LBER_DEFAULT ? -1 : 0;
}

int control_paged_decode(const struct berval *value, int *size, struct berval *cookie)
{
	BerElement *ber = reader(value);
	if (!ber)
		return -1;
	ber_len_t len;
	ber_int_t n;
	int rc = ber_skip_tag(ber, &len) != LBER_SEQUENCE || ber_get_int(ber, &n) == LBER_DEFAULT ||
	                 n < 0 || get_string(ber, cookie) < 0
	             ? -1
	             : 0;
	ber_free(ber, 0);
	if (rc == 0)
		*size = n;
	return rc;
}

int control_sort_decode(const struct berval *value, struct sort_key *keys, int *n)
{
	BerElement *ber = reader(value);
	if (!ber)
		return -1;
	ber_len_t len;
	char *last;
	int rc = 0;
	*n = 0;
	for (ber_tag_t t = ber_first_element(ber, &len, &last); t != LBER_DEFAULT && rc == 0;
	     t = ber_next_element(ber, &len, last)) {
		if (*n == CONTROL_MAX_SORT_KEYS) {
			rc = -1;
			break;
		}
		struct sort_key *k = &keys[(*n)++];
		*k = (struct sort_key){0};
		if (ber_skip_tag(ber, &len) != LBER_SEQUENCE || get_string(ber, &k->attr) < 0) {
			rc = -1;
			break;
		}
		if (ber_peek_tag(ber, &len) == SORT_RULE_TAG && get_string(ber, &k->rule) < 0)
			rc = -1;
		if (rc == 0 && ber_peek_tag(ber, &len) == SORT_REVERSE_TAG) {
			ber_int_t b = 0;
			if (ber_get_boolean(ber, &b) == LBER_DEFAULT)
				rc = -1;
			k->reverse = b != 0;
		}
	}
	ber_free(ber, 0);
	return rc == 0 && *n > 0 ? 0 : -1;
}

/* Appends SEQUENCE { oid, value } where value is the BER in inner (freed). */
static int put_control(struct buf *out, const char *oid, BerElement *inner)
{
	struct berval *v = NULL;
	BerElement *ber = NULL;
	struct berval *flat = NULL;
	int rc = -1;
	if (ber_flatten(inner, &v) < 0)
		goto out;
	ber = ber_alloc_t(LBER_USE_DER);
	if (!ber || ber_printf(ber, "{sO}", oid, v) < 0 || ber_flatten(ber, &flat) < 0)
		goto out;
	rc = buf_append(out, flat->bv_val, flat->bv_len);
out:
	ber_bvfree(v);
	ber_bvfree(flat);
	if (ber)
		ber_free(ber, 1);
	ber_free(inner, 1);
	return rc;
}

int controls_wrap(struct buf *out, const struct buf *list)
{
	return tlv_put(out, LDAP_TAG_CONTROLS, list->data + list->off, buf_pending(list));
}

int control_paged_response(struct buf *out, const void *cookie, size_t len)
{
	BerElement *inner = ber_alloc_t(LBER_USE_DER);
	struct berval c = {len, (char *)cookie};
	if (!inner || ber_printf(inner, "{iO}", 0, &c) < 0) {
		if (inner)
			ber_free(inner, 1);
		return -1;
	}
	return put_control(out, CONTROL_PAGED_RESULTS, inner);
}

int control_sort_response(struct buf *out, int rc)
{
	BerElement *inner = ber_alloc_t(LBER_USE_DER);
	if (!inner || ber_printf(inner, "{e}", rc) < 0) {
		if (inner)
			ber_free(inner, 1);
		return -1;
	}
	return put_control(out, CONTROL_SORT_RESPONSE, inner);
}
