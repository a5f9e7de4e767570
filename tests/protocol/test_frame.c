/* Unit tests for protocol/frame.c: finding the end of one LDAPMessage in a byte stream. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/frame.h"
#include "tests/check_run.h"

#define MAX_PDU ((size_t)1 << 20)

/* Builds 0x30, the given length octets, then body_len bytes of filler, in a malloc'd buffer. */
static unsigned char *make_pdu(const unsigned char *lenbytes, size_t nlen, size_t body_len,
                               size_t *total)
{
	*total = 1 + nlen + body_len;
	unsigned char *p = malloc(*total);
	ck_assert_ptr_nonnull(p);
	p[0] = 0x30;
	memcpy(p + 1, lenbytes, nlen);
	for (size_t i = 0; i < body_len; i++)
		p[1 + nlen + i] = (unsigned char)(i * 7 + 1);
	return p;
}

START_TEST(short_form_complete)
{
	/* LDAPMessage { messageID 1, unbindRequest } */
	const unsigned char pdu[] = {0x30, 0x05, 0x02, 0x01, 0x01, 0x42, 0x00};
	size_t n = 12345;
	ck_assert_int_eq(frame_next(pdu, sizeof(pdu), MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, sizeof(pdu));
}
END_TEST

START_TEST(short_form_followed_by_next_pdu)
{
	/* Two PDUs back to back: only the first one's size is reported. */
	const unsigned char two[] = {0x30, 0x05, 0x02, 0x01, 0x01, 0x42, 0x00,
	                             0x30, 0x05, 0x02, 0x01, 0x02, 0x42, 0x00};
	size_t n = 0;
	ck_assert_int_eq(frame_next(two, sizeof(two), MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 7);
	ck_assert_int_eq(frame_next(two + n, sizeof(two) - n, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 7);
}
END_TEST

START_TEST(short_form_max_127)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x7f};
	unsigned char *p = make_pdu(l, 1, 127, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 2 + 127);
	free(p);
}
END_TEST

START_TEST(empty_sequence)
{
	const unsigned char pdu[] = {0x30, 0x00};
	size_t n = 99;
	ck_assert_int_eq(frame_next(pdu, sizeof(pdu), MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(long_form_81)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x81, 0x80};
	unsigned char *p = make_pdu(l, 2, 0x80, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 3 + 0x80);
	ck_assert_uint_eq(n, total);
	free(p);
}
END_TEST

START_TEST(long_form_81_ff)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x81, 0xff};
	unsigned char *p = make_pdu(l, 2, 0xff, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 3 + 0xff);
	free(p);
}
END_TEST

START_TEST(long_form_82)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x82, 0x01, 0x00};
	unsigned char *p = make_pdu(l, 3, 0x100, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 4 + 0x100);
	free(p);

	const unsigned char l2[] = {0x82, 0x12, 0x34};
	p = make_pdu(l2, 3, 0x1234, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 4 + 0x1234);
	free(p);
}
END_TEST

START_TEST(long_form_83)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x83, 0x01, 0x00, 0x01};
	unsigned char *p = make_pdu(l, 4, 0x10001, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 5 + 0x10001);
	free(p);
}
END_TEST

START_TEST(long_form_84)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x84, 0x00, 0x00, 0x01, 0x00};
	unsigned char *p = make_pdu(l, 5, 0x100, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 6 + 0x100);
	free(p);

	const unsigned char l2[] = {0x84, 0x00, 0x02, 0x03, 0x04};
	p = make_pdu(l2, 5, 0x20304, &total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, 6 + 0x20304);
	free(p);
}
END_TEST

START_TEST(need_more_partial_header)
{
	size_t n = 0;
	const unsigned char one[] = {0x30};
	ck_assert_int_eq(frame_next(one, 0, MAX_PDU, &n), FRAME_NEED_MORE);
	ck_assert_int_eq(frame_next(one, 1, MAX_PDU, &n), FRAME_NEED_MORE);

	/* Long-form length octets announced but not all received yet. */
	const unsigned char h82[] = {0x30, 0x82, 0x01, 0x00};
	ck_assert_int_eq(frame_next(h82, 2, MAX_PDU, &n), FRAME_NEED_MORE);
	ck_assert_int_eq(frame_next(h82, 3, MAX_PDU, &n), FRAME_NEED_MORE);
	const unsigned char h84[] = {0x30, 0x84, 0x00, 0x00, 0x01, 0x00};
	for (size_t len = 2; len <= sizeof(h84); len++)
		ck_assert_int_eq(frame_next(h84, len, MAX_PDU, &n), FRAME_NEED_MORE);
}
END_TEST

START_TEST(need_more_partial_body)
{
	size_t total, n = 0;
	const unsigned char l[] = {0x82, 0x01, 0x00};
	unsigned char *p = make_pdu(l, 3, 0x100, &total);
	for (size_t len = 0; len < total; len++)
		ck_assert_msg(frame_next(p, len, MAX_PDU, &n) == FRAME_NEED_MORE,
		              "prefix of %zu of %zu bytes not NEED_MORE", len, total);
	ck_assert_int_eq(frame_next(p, total, MAX_PDU, &n), FRAME_OK);
	ck_assert_uint_eq(n, total);
	free(p);

	const unsigned char s[] = {0x30, 0x05, 0x02, 0x01, 0x01, 0x42, 0x00};
	for (size_t len = 0; len < sizeof(s); len++)
		ck_assert_int_eq(frame_next(s, len, MAX_PDU, &n), FRAME_NEED_MORE);
}
END_TEST

START_TEST(malformed_first_byte)
{
	size_t n = 0;
	const unsigned char bad[] = {0x31, 0x00, 0x02, 0x05, 0x60, 0xa0, 0xff, 0x10};
	for (size_t i = 0; i < sizeof(bad); i++) {
		const unsigned char pdu[] = {bad[i], 0x03, 0x02, 0x01, 0x01};
		ck_assert_msg(frame_next(pdu, sizeof(pdu), MAX_PDU, &n) == FRAME_MALFORMED,
		              "first byte 0x%02x accepted", bad[i]);
		/* Known as soon as the first byte arrives. */
		ck_assert_int_eq(frame_next(pdu, 1, MAX_PDU, &n), FRAME_MALFORMED);
	}
}
END_TEST

START_TEST(malformed_indefinite_length)
{
	size_t n = 0;
	const unsigned char pdu[] = {0x30, 0x80, 0x02, 0x01, 0x01, 0x42, 0x00, 0x00, 0x00};
	ck_assert_int_eq(frame_next(pdu, sizeof(pdu), MAX_PDU, &n), FRAME_MALFORMED);
	ck_assert_int_eq(frame_next(pdu, 2, MAX_PDU, &n), FRAME_MALFORMED);
}
END_TEST

START_TEST(malformed_too_many_length_octets)
{
	size_t n = 0;
	for (unsigned first = 0x85; first <= 0xff; first++) {
		unsigned char pdu[140] = {0x30, (unsigned char)first};
		/* Small length octets, so only the octet count can be the problem. */
		ck_assert_msg(frame_next(pdu, sizeof(pdu), MAX_PDU, &n) == FRAME_MALFORMED,
		              "length byte 0x%02x accepted", first);
		ck_assert_msg(frame_next(pdu, 2, MAX_PDU, &n) == FRAME_MALFORMED,
		              "length byte 0x%02x not rejected early", first);
	}
}
END_TEST

START_TEST(too_big)
{
	size_t n = 0;
	/* 0x7fffffff declared: rejected from the header alone, nothing else buffered. */
	const unsigned char huge[] = {0x30, 0x84, 0x7f, 0xff, 0xff, 0xff};
	ck_assert_int_eq(frame_next(huge, sizeof(huge), MAX_PDU, &n), FRAME_TOO_BIG);
	const unsigned char allff[] = {0x30, 0x84, 0xff, 0xff, 0xff, 0xff};
	ck_assert_int_eq(frame_next(allff, sizeof(allff), MAX_PDU, &n), FRAME_TOO_BIG);
	const unsigned char mid[] = {0x30, 0x83, 0x10, 0x00, 0x00};
	ck_assert_int_eq(frame_next(mid, sizeof(mid), MAX_PDU, &n), FRAME_TOO_BIG);
	const unsigned char small[] = {0x30, 0x7f};
	ck_assert_int_eq(frame_next(small, sizeof(small), 100, &n), FRAME_TOO_BIG);
}
END_TEST

START_TEST(too_big_boundary_counts_header)
{
	/* max_pdu bounds the whole PDU, header included. */
	size_t total, n = 0;
	const unsigned char l[] = {0x82, 0x01, 0x00};
	unsigned char *p = make_pdu(l, 3, 0x100, &total); /* total = 260 */
	ck_assert_int_eq(frame_next(p, total, total, &n), FRAME_OK);
	ck_assert_uint_eq(n, total);
	ck_assert_int_eq(frame_next(p, total, total - 1, &n), FRAME_TOO_BIG);
	/* Also decided before the body arrives. */
	ck_assert_int_eq(frame_next(p, 4, total - 1, &n), FRAME_TOO_BIG);
	ck_assert_int_eq(frame_next(p, 4, total, &n), FRAME_NEED_MORE);
	free(p);
}
END_TEST

static Suite *frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("frame_next");
	tcase_add_test(tc, short_form_complete);
	tcase_add_test(tc, short_form_followed_by_next_pdu);
	tcase_add_test(tc, short_form_max_127);
	tcase_add_test(tc, empty_sequence);
	tcase_add_test(tc, long_form_81);
	tcase_add_test(tc, long_form_81_ff);
	tcase_add_test(tc, long_form_82);
	tcase_add_test(tc, long_form_83);
	tcase_add_test(tc, long_form_84);
	tcase_add_test(tc, need_more_partial_header);
	tcase_add_test(tc, need_more_partial_body);
	tcase_add_test(tc, malformed_first_byte);
	tcase_add_test(tc, malformed_indefinite_length);
	tcase_add_test(tc, malformed_too_many_length_octets);
	tcase_add_test(tc, too_big);
	tcase_add_test(tc, too_big_boundary_counts_header);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(frame_suite());
}
