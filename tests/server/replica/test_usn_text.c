/* server/replica/usn_text.c: a usnChanged cookie read and written (one that does not read
 * makes a full load, so nothing half-read may pass), and a DC's ";range=" option. */
#include <check.h>
#include <string.h>

#include "server/replica/usn_text.h"
#include "tests/check_run.h"

static int parse(const char *c, long long *usn, char *inv)
{
	return usn_cookie_parse(c, strlen(c), usn, inv, 37);
}

START_TEST(cookie_round_trip)
{
	char text[128], inv[37];
	long long usn = -1;
	int n = usn_cookie_format(4242, "1bff833f-21c3-4535-8320-04757f74ad47", text, sizeof(text));
	ck_assert_int_eq(n, (int)strlen(text));
	ck_assert_str_eq(text, "usn=4242;invocationId=1bff833f-21c3-4535-8320-04757f74ad47");
	ck_assert_int_eq(usn_cookie_parse(text, (size_t)n, &usn, inv, sizeof(inv)), 0);
	ck_assert_int_eq(usn, 4242);
	ck_assert_str_eq(inv, "1bff833f-21c3-4535-8320-04757f74ad47");
	/* An invocationId the account could not read: empty, and read back empty. */
	ck_assert_int_gt(usn_cookie_format(7, "", text, sizeof(text)), 0);
	ck_assert_int_eq(parse(text, &usn, inv), 0);
	ck_assert_int_eq(usn, 7);
	ck_assert_str_eq(inv, "");
	/* Too small a buffer: -1, not a cut cookie. */
	ck_assert_int_eq(usn_cookie_format(4242, "abc", text, 10), -1);
}
END_TEST

START_TEST(cookie_refused)
{
	char inv[37] = "unchanged";
	long long usn = 99;
	/* A DirSync cookie's bytes, slapd's, damaged ones: each is no usnChanged cookie. */
	const char *bad[] = {"",
	                     "usn=",
	                     "usn=12",
	                     "usn=;invocationId=x",
	                     "usn=-1;invocationId=x",
	                     "usn=12a;invocationId=x",
	                     "USN=12;invocationId=x",
	                     "usn=12;invocation=x",
	                     "usn=12;invocationId=a;b",
	                     "rid=001,csn=20261206203557.000000Z#000000#000#000000",
	                     "usn=12;invocationId=0123456789012345678901234567890123456789"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(bad[i], &usn, inv) == -1, "%s", bad[i]);
	ck_assert_int_eq(usn, 99); /* nothing written on a refusal */
	ck_assert_str_eq(inv, "unchanged");
	/* The length given, not a NUL: a cookie is bytes. */
	ck_assert_int_eq(usn_cookie_parse("usn=5;invocationId=ab\0cd", 24, &usn, inv, 37), -1);
	ck_assert_int_eq(usn_cookie_parse("usn=5;invocationId=abXYZ", 21, &usn, inv, 37), 0);
	ck_assert_str_eq(inv, "ab");
}
END_TEST

START_TEST(range_option)
{
	size_t blen = 0;
	long long hi = -1;
	ck_assert_int_eq(usn_range_end("member;range=0-1499", &blen, &hi), 1);
	ck_assert_int_eq((int)blen, 6);
	ck_assert_int_eq(hi, 1499);
	ck_assert_int_eq(usn_range_end("member;Range=1500-*", &blen, &hi), 0);
	ck_assert_int_eq((int)blen, 6);
	ck_assert_int_eq(usn_range_end("member", &blen, &hi), -1);
	ck_assert_int_eq(usn_range_end("member;range=", &blen, &hi), -1);
	ck_assert_int_eq(usn_range_end("member;range=-5", &blen, &hi), -1);
	ck_assert_int_eq(usn_range_end("member;range=0-x", &blen, &hi), -1);
	ck_assert_int_eq(usn_range_end("member;binary;range=0-9", &blen, &hi), 1);
	ck_assert_int_eq((int)blen, 13);
}
END_TEST

int main(void)
{
	const TTest *tests[] = {cookie_round_trip, cookie_refused, range_option};
	Suite *su = suite_create("usn_text");
	TCase *tc = tcase_create("usn_text");
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(su, tc);
	return check_run(su);
}
