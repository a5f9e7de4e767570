/* Unit tests for protocol/sync.c: RFC 4533 values built with liblber, decoded, and bad ones. */
#include <check.h>
#include <lber.h>
#include <string.h>

#include "protocol/sync.h"
#include "tests/check_run.h"

static const char uuid_a[16] = "0123456789abcdef", uuid_b[16] = "fedcba9876543210";

/* Flattens ber (freed) into *out (freed by the caller with ber_bvfree). */
static struct berval *flat(BerElement *ber)
{
	struct berval *bv = NULL;
	ck_assert_int_eq(ber_flatten(ber, &bv), 0);
	ber_free(ber, 1);
	return bv;
}

START_TEST(request_encoding)
{
	struct berval *v = NULL, cookie = {5, (char *)"rid=1"};
	ck_assert_int_eq(sync_request_encode(SYNC_REFRESH_AND_PERSIST, &cookie, true, &v), 0);
	/* SEQUENCE { ENUMERATED 3, OCTET STRING "rid=1", BOOLEAN TRUE } */
	static const unsigned char want[] = {0x30, 0x0d, 0x0a, 0x01, 0x03, 0x04, 0x05, 'r',
	                                     'i',  'd',  '=',  '1',  0x01, 0x01, 0xff};
	ck_assert_uint_eq(v->bv_len, sizeof(want));
	ck_assert(memcmp(v->bv_val, want, sizeof(want)) == 0);
	ber_bvfree(v);
	/* No cookie, no reload hint: the mode alone. */
	ck_assert_int_eq(sync_request_encode(SYNC_REFRESH_ONLY, NULL, false, &v), 0);
	static const unsigned char only[] = {0x30, 0x03, 0x0a, 0x01, 0x01};
	ck_assert_uint_eq(v->bv_len, sizeof(only));
	ck_assert(memcmp(v->bv_val, only, sizeof(only)) == 0);
	ber_bvfree(v);
}
END_TEST

START_TEST(state_values)
{
	for (int st = SYNC_PRESENT; st <= SYNC_DELETE; st++) {
		BerElement *ber = ber_alloc_t(LBER_USE_DER);
		struct berval u = {16, (char *)uuid_a}, c = {6, (char *)"csn=42"};
		if (st == SYNC_ADD)
			ber_printf(ber, "{eO}", (ber_int_t)st, &u);
		else
			ber_printf(ber, "{eOO}", (ber_int_t)st, &u, &c);
		struct berval *v = flat(ber), cookie;
		enum sync_state state;
		const unsigned char *uuid;
		ck_assert_int_eq(sync_state_decode(v, &state, &uuid, &cookie), 0);
		ck_assert_int_eq(state, st);
		ck_assert(memcmp(uuid, uuid_a, 16) == 0);
		if (st == SYNC_ADD) {
			ck_assert_ptr_null(cookie.bv_val);
		} else {
			ck_assert_uint_eq(cookie.bv_len, 6);
			ck_assert(memcmp(cookie.bv_val, "csn=42", 6) == 0);
		}
		ber_bvfree(v);
	}
}
END_TEST

/* Decoding fails for a value built with liblber from fmt (one OCTET STRING argument). */
static void state_refused(const char *fmt, ber_int_t n, const struct berval *s)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ck_assert_int_ge(ber_printf(ber, fmt, n, s), 0);
	struct berval *v = flat(ber), cookie;
	enum sync_state state;
	const unsigned char *uuid;
	ck_assert_int_eq(sync_state_decode(v, &state, &uuid, &cookie), -1);
	ber_bvfree(v);
}

START_TEST(state_refused_values)
{
	struct berval short_uuid = {15, (char *)uuid_a}, u = {16, (char *)uuid_a};
	state_refused("{eO}", 1, &short_uuid); /* a 15-byte entryUUID */
	state_refused("{eO}", 4, &u);          /* no state 4 */
	state_refused("{iO}", 1, &u);          /* INTEGER, not ENUMERATED */
	state_refused("{eOi}", 1, &u);         /* something after the UUID */
	state_refused("{e}", 1, NULL);         /* no UUID */
	state_refused("[eO]", 1, &u);          /* not a SEQUENCE */
	struct berval empty = {0, NULL}, junk = {3, (char *)"\x30\x05\x0a"};
	enum sync_state state;
	const unsigned char *uuid;
	struct berval cookie;
	ck_assert_int_eq(sync_state_decode(&empty, &state, &uuid, &cookie), -1);
	ck_assert_int_eq(sync_state_decode(&junk, &state, &uuid, &cookie), -1); /* truncated */
}
END_TEST

START_TEST(done_values)
{
	struct berval c = {3, (char *)"abc"}, cookie, *v;
	bool deletes;
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{Ob}", &c, (ber_int_t)1);
	v = flat(ber);
	ck_assert_int_eq(sync_done_decode(v, &cookie, &deletes), 0);
	ck_assert_uint_eq(cookie.bv_len, 3);
	ck_assert(deletes);
	ber_bvfree(v);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{}");
	v = flat(ber);
	ck_assert_int_eq(sync_done_decode(v, &cookie, &deletes), 0);
	ck_assert_ptr_null(cookie.bv_val);
	ck_assert(!deletes);
	ber_bvfree(v);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{Oe}", &c, (ber_int_t)1); /* an ENUMERATED where a BOOLEAN may be */
	v = flat(ber);
	ck_assert_int_eq(sync_done_decode(v, &cookie, &deletes), -1);
	ber_bvfree(v);
}
END_TEST

START_TEST(info_values)
{
	struct sync_info info;
	struct berval c = {4, (char *)"next"}, *v;
	/* [0] newcookie */
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "tO", (ber_tag_t)0x80, &c);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), 0);
	ck_assert_int_eq(info.kind, SYNC_INFO_NEW_COOKIE);
	ck_assert_uint_eq(info.cookie.bv_len, 4);
	sync_info_free(&info);
	ber_bvfree(v);
	/* [1] refreshDelete with refreshDone FALSE; [2] refreshPresent, defaults */
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "t{Ob}", (ber_tag_t)0xa1, &c, (ber_int_t)0);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), 0);
	ck_assert_int_eq(info.kind, SYNC_INFO_REFRESH_DELETE);
	ck_assert(!info.refresh_done);
	ber_bvfree(v);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "t{}", (ber_tag_t)0xa2);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), 0);
	ck_assert_int_eq(info.kind, SYNC_INFO_REFRESH_PRESENT);
	ck_assert(info.refresh_done);
	ck_assert_ptr_null(info.cookie.bv_val);
	ber_bvfree(v);
	/* [3] syncIdSet: two deleted UUIDs */
	struct berval a = {16, (char *)uuid_a}, b = {16, (char *)uuid_b};
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "t{Ob[OO]}", (ber_tag_t)0xa3, &c, (ber_int_t)1, &a, &b);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), 0);
	ck_assert_int_eq(info.kind, SYNC_INFO_ID_SET);
	ck_assert(info.refresh_deletes);
	ck_assert_uint_eq(info.n, 2);
	ck_assert(memcmp(info.uuids[0], uuid_a, 16) == 0);
	ck_assert(memcmp(info.uuids[1], uuid_b, 16) == 0);
	sync_info_free(&info);
	ber_bvfree(v);
	/* Refused: a 3-byte UUID in the set, an unknown choice, trailing bytes. */
	struct berval bad = {3, (char *)"abc"};
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "t{[OO]}", (ber_tag_t)0xa3, &a, &bad);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), -1);
	ber_bvfree(v);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "t{}", (ber_tag_t)0xa4);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), -1);
	ber_bvfree(v);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "t{}i", (ber_tag_t)0xa2, (ber_int_t)7);
	v = flat(ber);
	ck_assert_int_eq(sync_info_decode(v, &info), -1);
	ber_bvfree(v);
}
END_TEST

/* A provider's side (sync_provide.c): each value it encodes is what the consumer's
 * decoders above read back. */
START_TEST(provider_request_decoding)
{
	struct berval *v = NULL, cookie = {16, (char *)"rid=007,csn=1#2"}, got;
	enum sync_mode mode;
	bool reload;
	ck_assert_int_eq(sync_request_encode(SYNC_REFRESH_AND_PERSIST, &cookie, true, &v), 0);
	ck_assert_int_eq(sync_request_decode(v, &mode, &got, &reload), 0);
	ck_assert_int_eq(mode, SYNC_REFRESH_AND_PERSIST);
	ck_assert(reload);
	ck_assert_uint_eq(got.bv_len, 16);
	ber_bvfree(v);
	ck_assert_int_eq(sync_request_encode(SYNC_REFRESH_ONLY, NULL, false, &v), 0);
	ck_assert_int_eq(sync_request_decode(v, &mode, &got, &reload), 0);
	ck_assert_int_eq(mode, SYNC_REFRESH_ONLY);
	ck_assert(!reload && !got.bv_val);
	ber_bvfree(v);
	/* A mode of 2, trailing bytes, a cut value, an empty one: refused. */
	static const unsigned char bad_mode[] = {0x30, 0x03, 0x0a, 0x01, 0x02},
	                           trailing[] = {0x30, 0x03, 0x0a, 0x01, 0x01, 0x00},
	                           cut[] = {0x30, 0x05, 0x0a, 0x01, 0x01};
	const struct berval bad[] = {{sizeof(bad_mode), (char *)bad_mode},
	                             {sizeof(trailing), (char *)trailing},
	                             {sizeof(cut), (char *)cut},
	                             {0, NULL}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(sync_request_decode(&bad[i], &mode, &got, &reload), -1);
}
END_TEST

START_TEST(provider_cookie_and_csn)
{
	struct berval c = {46,
	                   (char *)"rid=012,sid=001,csn=20261207000000.000000Z#000000#001#000000"},
	              csns;
	c.bv_len = strlen(c.bv_val);
	int rid;
	sync_cookie_parts(&c, &rid, &csns);
	ck_assert_int_eq(rid, 12);
	ck_assert_uint_eq(csns.bv_len, strlen("20261207000000.000000Z#000000#001#000000"));
	struct berval none = {9, (char *)"rid=x,a=b"};
	sync_cookie_parts(&none, &rid, &csns);
	ck_assert_int_eq(rid, -1);
	ck_assert_ptr_null(csns.bv_val);
	/* Two server IDs: an entry is compared with the CSN of its own. */
	struct berval set = {0, (char *)"20261207000000.000000Z#000000#001#000000;"
	                                "20261205000000.000000Z#000000#002#000000"};
	set.bv_len = strlen(set.bv_val);
	const char *older1 = "20261206000000.000000Z#000000#001#000000",
	           *newer2 = "20261206000000.000000Z#000000#002#000000",
	           *same1 = "20261207000000.000000Z#000000#001#000000",
	           *other3 = "20261201000000.000000Z#000000#003#000000";
	ck_assert(!sync_csn_newer(older1, strlen(older1), &set));
	ck_assert(sync_csn_newer(newer2, strlen(newer2), &set));
	ck_assert(!sync_csn_newer(same1, strlen(same1), &set));
	ck_assert(sync_csn_newer(other3, strlen(other3), &set)); /* no CSN of server 3 */
	ck_assert(sync_csn_newer("", 0, &set));                  /* no CSN: always sent */
}
END_TEST

START_TEST(provider_answers)
{
	struct berval *v = NULL, cookie = {11, (char *)"csn=1#2#3#4"}, got;
	enum sync_state state;
	const unsigned char *uuid;
	ck_assert_int_eq(sync_state_encode(SYNC_DELETE, (const unsigned char *)uuid_a, &cookie, &v),
	                 0);
	ck_assert_int_eq(sync_state_decode(v, &state, &uuid, &got), 0);
	ck_assert_int_eq(state, SYNC_DELETE);
	ck_assert(memcmp(uuid, uuid_a, 16) == 0 && got.bv_len == 11);
	ber_bvfree(v);
	bool deletes = true;
	ck_assert_int_eq(sync_done_encode(&cookie, false, &v), 0);
	ck_assert_int_eq(sync_done_decode(v, &got, &deletes), 0);
	ck_assert(!deletes && got.bv_len == 11);
	ber_bvfree(v);
	struct sync_info info;
	ck_assert_int_eq(sync_info_encode(SYNC_INFO_NEW_COOKIE, &cookie, false, NULL, 0, &v), 0);
	ck_assert_int_eq(sync_info_decode(v, &info), 0);
	ck_assert_int_eq(info.kind, SYNC_INFO_NEW_COOKIE);
	ck_assert_uint_eq(info.cookie.bv_len, 11);
	sync_info_free(&info);
	ber_bvfree(v);
	for (int done = 0; done < 2; done++) {
		ck_assert_int_eq(
		    sync_info_encode(SYNC_INFO_REFRESH_PRESENT, &cookie, done, NULL, 0, &v), 0);
		ck_assert_int_eq(sync_info_decode(v, &info), 0);
		ck_assert_int_eq(info.kind, SYNC_INFO_REFRESH_PRESENT);
		ck_assert_int_eq(info.refresh_done, done);
		sync_info_free(&info);
		ber_bvfree(v);
	}
	unsigned char two[32];
	memcpy(two, uuid_a, 16);
	memcpy(two + 16, uuid_b, 16);
	ck_assert_int_eq(sync_info_encode(SYNC_INFO_ID_SET, NULL, false, two, 2, &v), 0);
	ck_assert_int_eq(sync_info_decode(v, &info), 0);
	ck_assert_int_eq(info.kind, SYNC_INFO_ID_SET);
	ck_assert(!info.refresh_deletes && !info.cookie.bv_val);
	ck_assert_uint_eq(info.n, 2);
	ck_assert(memcmp(info.uuids[1], uuid_b, 16) == 0);
	sync_info_free(&info);
	ber_bvfree(v);
}
END_TEST

static Suite *sync_suite(void)
{
	Suite *s = suite_create("sync");
	TCase *tc = tcase_create("rfc4533");
	tcase_add_test(tc, request_encoding);
	tcase_add_test(tc, state_values);
	tcase_add_test(tc, state_refused_values);
	tcase_add_test(tc, done_values);
	tcase_add_test(tc, info_values);
	tcase_add_test(tc, provider_request_decoding);
	tcase_add_test(tc, provider_cookie_and_csn);
	tcase_add_test(tc, provider_answers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(sync_suite());
}
