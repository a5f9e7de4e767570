#include "protocol/controls.h"

#include "protocol/ber_in.h"
#include "protocol/tlv.h"

#include <ldap.h>

/* Tags inside a SortKey (RFC 2891). */
#define SORT_RULE_TAG 0x80
#define SORT_REVERSE_TAG 0x81

int control_paged_decode(const struct berval *value, int *size, struct berval *cookie)
{
	struct ber_in in = ber_in_make(value->bv_val, value->bv_len), seq;
	int32_t n;
	if (ber_in_take(&in, LBER_SEQUENCE, &seq) < 0 || !ber_in_end(&in) ||
	    ber_in_int(&seq, LBER_INTEGER, &n) < 0 || n < 0 ||
	    ber_in_string(&seq, LBER_OCTETSTRING, cookie) < 0 || !ber_in_end(&seq))
		return -1;
	*size = n;
	return 0;
}

/* One SortKey's content into k. */
static int sort_key(struct ber_in *in, struct sort_key *k)
{
	*k = (struct sort_key){0};
	if (ber_in_string(in, LBER_OCTETSTRING, &k->attr) < 0 ||
	    (ber_in_peek(in) == SORT_RULE_TAG && ber_in_string(in, SORT_RULE_TAG, &k->rule) < 0) ||
	    (ber_in_peek(in) == SORT_REVERSE_TAG &&
	     ber_in_bool(in, SORT_REVERSE_TAG, &k->reverse) < 0))
		return -1;
	return ber_in_end(in) ? 0 : -1;
}

int control_sort_decode(const struct berval *value, struct sort_key *keys, int *n)
{
	struct ber_in in = ber_in_make(value->bv_val, value->bv_len), list, key;
	*n = 0;
	if (ber_in_take(&in, LBER_SEQUENCE, &list) < 0 || !ber_in_end(&in))
		return -1;
	while (!ber_in_end(&list)) {
		if (*n == CONTROL_MAX_SORT_KEYS || ber_in_take(&list, LBER_SEQUENCE, &key) < 0 ||
		    sort_key(&key, &keys[*n]) < 0)
			return -1;
		(*n)++;
	}
	return *n > 0 ? 0 : -1;
}

/* Tags inside a VirtualListViewRequest (the draft's section 6.1). */
#define VLV_BY_OFFSET_TAG 0xa0
#define VLV_BY_VALUE_TAG 0x81

int control_vlv_decode(const struct berval *value, struct vlv_request *v)
{
	struct ber_in in = ber_in_make(value->bv_val, value->bv_len), seq, off;
	*v = (struct vlv_request){0};
	if (ber_in_take(&in, LBER_SEQUENCE, &seq) < 0 || !ber_in_end(&in) ||
	    ber_in_int(&seq, LBER_INTEGER, &v->before) < 0 ||
	    ber_in_int(&seq, LBER_INTEGER, &v->after) < 0 || v->before < 0 || v->after < 0)
		return -1;
	if (ber_in_peek(&seq) == VLV_BY_OFFSET_TAG) {
		if (ber_in_take(&seq, VLV_BY_OFFSET_TAG, &off) < 0 ||
		    ber_in_int(&off, LBER_INTEGER, &v->offset) < 0 ||
		    ber_in_int(&off, LBER_INTEGER, &v->count) < 0 || !ber_in_end(&off) ||
		    v->offset < 0 || v->count < 0)
			return -1;
	} else if (ber_in_string(&seq, VLV_BY_VALUE_TAG, &v->value) == 0) {
		v->by_value = true;
	} else {
		return -1;
	}
	if (!ber_in_end(&seq) && ber_in_string(&seq, LBER_OCTETSTRING, &v->context) < 0)
		return -1;
	return ber_in_end(&seq) ? 0 : -1;
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

int control_ppolicy_response(struct buf *out, int32_t expire, int32_t grace,
                             enum ppolicy_error error)
{
	BerElement *inner = ber_alloc_t(LBER_USE_DER);
	int rc = inner ? ber_printf(inner, "{") : -1;
	if (rc >= 0 && (expire >= 0 || grace >= 0))
		rc = ber_printf(inner, "t{ti}", (ber_tag_t)0xa0,
		                (ber_tag_t)(expire >= 0 ? 0x80 : 0x81),
		                (ber_int_t)(expire >= 0 ? expire : grace));
	if (rc >= 0 && error != PPOLICY_NO_ERROR)
		rc = ber_printf(inner, "te", (ber_tag_t)0x81, (ber_int_t)error);
	if (rc >= 0)
		rc = ber_printf(inner, "}");
	if (rc < 0) {
		if (inner)
			ber_free(inner, 1);
		return -1;
	}
	return put_control(out, CONTROL_PASSWORD_POLICY, inner);
}

int control_put_value(struct buf *out, const char *oid, const struct berval *value)
{
	struct berval *flat = NULL;
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	int rc = -1;
	if (ber && ber_printf(ber, "{sO}", oid, value) >= 0 && ber_flatten(ber, &flat) >= 0)
		rc = buf_append(out, flat->bv_val, flat->bv_len);
	ber_bvfree(flat);
	if (ber)
		ber_free(ber, 1);
	return rc < 0 ? -1 : 0;
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

int control_vlv_response(struct buf *out, int32_t target, int32_t count, int rc)
{
	BerElement *inner = ber_alloc_t(LBER_USE_DER);
	if (!inner || ber_printf(inner, "{iie}", (ber_int_t)target, (ber_int_t)count, rc) < 0) {
		if (inner)
			ber_free(inner, 1);
		return -1;
	}
	return put_control(out, CONTROL_VLV_RESPONSE, inner);
}
