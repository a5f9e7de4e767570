/* protocol/controls.c: response controls as one [0] Controls element, request decoders. */
#include <check.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/controls.h"
#include "tests/check_run.h"

/* Reads [0] { Control... } from b with liblber: the OIDs and values, in order. */
static int read_controls(const struct buf *b, char oids[][64], struct berval *vals, int max)
{
	struct berval bv = {b->len, (char *)b->data};
	BerElement *ber = ber_init(&bv);
	ber_len_t len;
	char *last;
	int n = 0;
	ck_assert_uint_eq(ber_peek_tag(ber, &len), LDAP_TAG_CONTROLS);
	for (ber_tag_t t = ber_first_element(ber, &len, &last); t != LBER_DEFAULT && n < max;
	     t = ber_next_element(ber, &len, last), n++) {
		struct berval oid, *val = NULL;
		ck_assert_uint_ne(ber_scanf(ber, "{mO}", &oid, &val), LBER_ERROR);
		snprintf(oids[n], 64, "%.*s", (int)oid.bv_len, oid.bv_val);
		vals[n] = *val;
		free(val);
	}
	ber_free(ber, 1);
	return n;
}

/* libldap's own encoding of a VLV request (ldap_create_vlv_control_value), decoded. */
static int vlv_roundtrip(LDAPVLVInfo *info, struct vlv_request *v, struct berval *val)
{
	LDAP *ld = NULL;
	ck_assert_int_eq(ldap_initialize(&ld, "ldap://127.0.0.1:1"), LDAP_SUCCESS);
	ck_assert_int_eq(ldap_create_vlv_control_value(ld, info, val), LDAP_SUCCESS);
	ldap_unbind_ext(ld, NULL, NULL);
	return control_vlv_decode(val, v);
}

START_TEST(vlv_request_by_offset_and_by_value)
{
	struct berval ctx = {4, "abcd"}, value = {3, "Bob"}, val;
	LDAPVLVInfo info = {.ldvlv_version = 1,
	                    .ldvlv_before_count = 2,
	                    .ldvlv_after_count = 5,
	                    .ldvlv_offset = 7,
	                    .ldvlv_count = 40,
	                    .ldvlv_context = &ctx};
	struct vlv_request v;
	ck_assert_int_eq(vlv_roundtrip(&info, &v, &val), 0);
	ck_assert(!v.by_value);
	ck_assert_int_eq(v.before, 2);
	ck_assert_int_eq(v.after, 5);
	ck_assert_int_eq(v.offset, 7);
	ck_assert_int_eq(v.count, 40);
	ck_assert_uint_eq(v.context.bv_len, 4);
	ck_assert_mem_eq(v.context.bv_val, "abcd", 4);
	ber_memfree(val.bv_val);
	info.ldvlv_attrvalue = &value;
	info.ldvlv_context = NULL;
	ck_assert_int_eq(vlv_roundtrip(&info, &v, &val), 0);
	ck_assert(v.by_value);
	ck_assert_uint_eq(v.value.bv_len, 3);
	ck_assert_mem_eq(v.value.bv_val, "Bob", 3);
	ck_assert_ptr_null(v.context.bv_val);
	/* Every truncation of a valid value is refused. */
	for (ber_len_t n = 0; n < val.bv_len; n++) {
		struct berval cut = {n, val.bv_val};
		ck_assert_int_eq(control_vlv_decode(&cut, &v), -1);
	}
	ber_memfree(val.bv_val);
}
END_TEST

START_TEST(vlv_request_malformed)
{
	struct vlv_request v;
	/* SEQUENCE { -1, 0, [0] { 1, 0 } }: a negative beforeCount. */
	struct berval neg = {16,
	                     "\x30\x0e\x02\x01\xff\x02\x01\x00\xa0\x06\x02\x01\x01\x02\x01\x00"};
	ck_assert_int_eq(control_vlv_decode(&neg, &v), -1);
	/* SEQUENCE { 0, 0, [2] "x" }: no target of the draft's. */
	struct berval other = {11, "\x30\x09\x02\x01\x00\x02\x01\x00\x82\x01x"};
	ck_assert_int_eq(control_vlv_decode(&other, &v), -1);
	/* SEQUENCE { 0, 0, [0] { 1, 0 }, INTEGER 0 }: not a contextID. */
	struct berval trail = {19, "\x30\x11\x02\x01\x00\x02\x01\x00\xa0\x06\x02\x01\x01\x02\x01"
	                           "\x00\x02\x01\x00"};
	ck_assert_int_eq(control_vlv_decode(&trail, &v), -1);
}
END_TEST

START_TEST(vlv_response_as_libldap_reads_it)
{
	struct buf list = {0}, out = {0};
	ck_assert_int_eq(control_vlv_response(&list, 3, 60, 61), 0);
	ck_assert_int_eq(controls_wrap(&out, &list), 0);
	char oids[2][64];
	struct berval vals[2];
	ck_assert_int_eq(read_controls(&out, oids, vals, 2), 1);
	ck_assert_str_eq(oids[0], CONTROL_VLV_RESPONSE);
	LDAPControl ctl = {.ldctl_oid = oids[0], .ldctl_value = vals[0]};
	ber_int_t target = 0, count = 0;
	int err = 0;
	struct berval *ctx = NULL;
	LDAP *ld = NULL;
	ck_assert_int_eq(ldap_initialize(&ld, "ldap://127.0.0.1:1"), LDAP_SUCCESS);
	ck_assert_int_eq(ldap_parse_vlvresponse_control(ld, &ctl, &target, &count, &ctx, &err),
	                 LDAP_SUCCESS);
	ldap_unbind_ext(ld, NULL, NULL);
	ck_assert_int_eq(target, 3);
	ck_assert_int_eq(count, 60);
	ck_assert_int_eq(err, 61);
	ck_assert_ptr_null(ctx); /* minidir keeps no context */
	ber_memfree(vals[0].bv_val);
	buf_free(&list);
	buf_free(&out);
}
END_TEST

START_TEST(paged_and_sort_share_one_controls_element)
{
	struct buf list = {0}, out = {0};
	const char cookie[] = "12345678";
	ck_assert_int_eq(control_paged_response(&list, cookie, 8), 0);
	ck_assert_int_eq(control_sort_response(&list, LDAP_SUCCESS), 0);
	ck_assert_int_eq(controls_wrap(&out, &list), 0);
	char oids[4][64];
	struct berval vals[4];
	ck_assert_int_eq(read_controls(&out, oids, vals, 4), 2);
	ck_assert_str_eq(oids[0], CONTROL_PAGED_RESULTS);
	ck_assert_str_eq(oids[1], CONTROL_SORT_RESPONSE);
	int size = -1;
	struct berval got;
	ck_assert_int_eq(control_paged_decode(&vals[0], &size, &got), 0);
	ck_assert_int_eq(size, 0);
	ck_assert_uint_eq(got.bv_len, 8);
	ck_assert(memcmp(got.bv_val, cookie, 8) == 0);
	for (int i = 0; i < 2; i++)
		ber_memfree(vals[i].bv_val);
	buf_free(&list);
	buf_free(&out);
}
END_TEST

START_TEST(one_control_alone)
{
	struct buf list = {0}, out = {0};
	ck_assert_int_eq(control_paged_response(&list, NULL, 0), 0);
	ck_assert_int_eq(controls_wrap(&out, &list), 0);
	char oids[2][64];
	struct berval vals[2];
	ck_assert_int_eq(read_controls(&out, oids, vals, 2), 1);
	ck_assert_str_eq(oids[0], CONTROL_PAGED_RESULTS);
	int size = -1;
	struct berval got;
	ck_assert_int_eq(control_paged_decode(&vals[0], &size, &got), 0);
	ck_assert_uint_eq(got.bv_len, 0); /* the last page: an empty cookie */
	ber_memfree(vals[0].bv_val);
	buf_free(&list);
	buf_free(&out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controls");
	TCase *tc = tcase_create("response");
	tcase_add_test(tc, paged_and_sort_share_one_controls_element);
	tcase_add_test(tc, one_control_alone);
	tcase_add_test(tc, vlv_request_by_offset_and_by_value);
	tcase_add_test(tc, vlv_request_malformed);
	tcase_add_test(tc, vlv_response_as_libldap_reads_it);
	suite_add_tcase(s, tc);
	return check_run(s);
}
