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
	suite_add_tcase(s, tc);
	return check_run(s);
}
