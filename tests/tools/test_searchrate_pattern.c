/* Value patterns of tools/searchrate/pattern.c: ranges, sequential and random, escapes,
 * padding, and the message for a malformed pattern. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/searchrate/pattern.h"

static struct pattern p;
static char err[512];
static char *buf;
static uint64_t rng = 42;

static void parse_ok(const char *src)
{
	err[0] = '\0';
	ck_assert_msg(pattern_parse(&p, src, err, sizeof(err)), "\"%s\" rejected: %s", src, err);
	free(buf);
	buf = malloc(p.maxlen + 1);
	ck_assert_ptr_nonnull(buf);
}

static const char *next(void)
{
	return pattern_expand(&p, &rng, buf);
}

static void teardown(void)
{
	pattern_free(&p);
	free(buf);
	buf = NULL;
}

START_TEST(literal_only)
{
	parse_ok("(objectClass=*)");
	ck_assert_str_eq(next(), "(objectClass=*)");
	ck_assert_ptr_eq(next(), p.fixed); /* no copy for a pattern without ranges */
	pattern_free(&p);
	parse_ok("");
	ck_assert_str_eq(next(), "");
}
END_TEST

START_TEST(sequential_counts_up_and_wraps)
{
	parse_ok("(uid=user[1:3])");
	const char *want[] = {"(uid=user1)", "(uid=user2)", "(uid=user3)", "(uid=user1)"};
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(next(), want[i]);
}
END_TEST

START_TEST(sequential_counts_down_and_steps)
{
	parse_ok("[3:1]");
	ck_assert_str_eq(next(), "3");
	ck_assert_str_eq(next(), "2");
	ck_assert_str_eq(next(), "1");
	ck_assert_str_eq(next(), "3");
	pattern_free(&p);
	parse_ok("[0:10:5],[0:7x4]");
	ck_assert_str_eq(next(), "0,0");
	ck_assert_str_eq(next(), "5,4");
	ck_assert_str_eq(next(), "10,0");
	ck_assert_str_eq(next(), "0,4");
	pattern_free(&p);
	parse_ok("[-2:2:2]");
	ck_assert_str_eq(next(), "-2");
	ck_assert_str_eq(next(), "0");
	ck_assert_str_eq(next(), "2");
}
END_TEST

START_TEST(rewind_starts_again)
{
	parse_ok("[10:20]");
	ck_assert_str_eq(next(), "10");
	ck_assert_str_eq(next(), "11");
	pattern_rewind(&p);
	ck_assert_str_eq(next(), "10");
}
END_TEST

START_TEST(random_stays_in_range_and_covers_it)
{
	parse_ok("x[5-9]y");
	int seen[5] = {0};
	for (int i = 0; i < 1000; i++) {
		const char *s = next();
		ck_assert_msg(strlen(s) == 3 && s[0] == 'x' && s[2] == 'y', "got \"%s\"", s);
		ck_assert_msg(s[1] >= '5' && s[1] <= '9', "%s outside [5-9]", s);
		seen[s[1] - '5']++;
	}
	for (int i = 0; i < 5; i++) /* 200 expected each; far from 0 or 1000 */
		ck_assert_msg(seen[i] > 100 && seen[i] < 300, "%d drawn %d times", 5 + i, seen[i]);
	pattern_free(&p);
	parse_ok("[9-5]"); /* bounds in either order */
	for (int i = 0; i < 100; i++)
		ck_assert(next()[0] >= '5' && next()[0] <= '9');
	pattern_free(&p);
	parse_ok("[-3--1]");
	for (int i = 0; i < 100; i++) {
		long v = strtol(next(), NULL, 10);
		ck_assert(v >= -3 && v <= -1);
	}
}
END_TEST

START_TEST(random_is_reproducible_from_the_seed)
{
	parse_ok("[0-999999]");
	char a[3][16];
	rng = 7;
	for (int i = 0; i < 3; i++)
		strcpy(a[i], next());
	rng = 7;
	for (int i = 0; i < 3; i++)
		ck_assert_str_eq(next(), a[i]);
	ck_assert(strcmp(a[0], a[1]) || strcmp(a[1], a[2]));
}
END_TEST

START_TEST(full_64_bit_ranges)
{
	parse_ok("[-9223372036854775808-9223372036854775807]");
	for (int i = 0; i < 10; i++)
		ck_assert(strlen(next()) <= p.maxlen);
	pattern_free(&p);
	parse_ok("[9223372036854775806:9223372036854775807]");
	ck_assert_str_eq(next(), "9223372036854775806");
	ck_assert_str_eq(next(), "9223372036854775807");
	ck_assert_str_eq(next(), "9223372036854775806");
}
END_TEST

START_TEST(escapes_and_padding)
{
	parse_ok("(cn=[[a]]) [[[1:2]]]");
	ck_assert_str_eq(next(), "(cn=[a]) [1]");
	ck_assert_str_eq(next(), "(cn=[a]) [2]");
	pattern_free(&p);
	parse_ok("user.[7:8%0000]");
	ck_assert_str_eq(next(), "user.0007");
	ck_assert_str_eq(next(), "user.0008");
	pattern_free(&p);
	parse_ok("[5-5%#00]"); /* '#' accepted, only 0s count */
	ck_assert_str_eq(next(), "05");
	pattern_free(&p);
	parse_ok("a]b"); /* a lone ] is literal */
	ck_assert_str_eq(next(), "a]b");
}
END_TEST

/* Each malformed pattern and the offset of the '[' the message names. */
static const struct {
	const char *src;
	size_t offset;
} bad[] = {
    {"(uid=user[0-)", 9}, {"[1-2", 0},
    {"x[]", 1},           {"[a-b]", 0},
    {"[1-b]", 0},         {"[1~2]", 0},
    {"[1:2:0]", 0},       {"[1:2:-1]", 0},
    {"[1-2:3]", 0},       {"[1:2y3]", 0},
    {"[+1-2]", 0},        {"[1-2 ]", 0},
    {"ok[1:2] [1-", 8},   {"[1-2%000000000000000000000]", 0},
    {"[- -1]", 0},        {"[99999999999999999999-1]", 0},
};

START_TEST(malformed_patterns_say_where)
{
	char want[128];
	snprintf(want, sizeof(want), "bad value pattern at offset %zu of \"%s\": expected",
	         bad[_i].offset, bad[_i].src);
	err[0] = '\0';
	ck_assert_msg(!pattern_parse(&p, bad[_i].src, err, sizeof(err)), "\"%s\" accepted",
	              bad[_i].src);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "\"%s\": message \"%s\"", bad[_i].src,
	              err);
	ck_assert_msg(strstr(err, "[A-B], [A:B] or [A:B:STEP]") && strstr(err, "[[ and ]]"),
	              "message \"%s\" does not say what is expected", err);
	ck_assert_ptr_null(p.comps); /* nothing kept: pattern_free is not needed */
	ck_assert_ptr_null(p.fixed);
}
END_TEST

START_TEST(error_message_is_truncated_safely)
{
	char small[16];
	ck_assert(!pattern_parse(&p, "[1-", small, sizeof(small)));
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("searchrate_pattern");
	TCase *tc = tcase_create("pattern");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, literal_only);
	tcase_add_test(tc, sequential_counts_up_and_wraps);
	tcase_add_test(tc, sequential_counts_down_and_steps);
	tcase_add_test(tc, rewind_starts_again);
	tcase_add_test(tc, random_stays_in_range_and_covers_it);
	tcase_add_test(tc, random_is_reproducible_from_the_seed);
	tcase_add_test(tc, full_64_bit_ranges);
	tcase_add_test(tc, escapes_and_padding);
	tcase_add_loop_test(tc, malformed_patterns_say_where, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, error_message_is_truncated_safely);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
