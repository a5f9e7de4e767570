/* Value patterns of tools/searchrate/pattern.c: ranges, sequential and random, escapes,
 * padding, and the message for a malformed pattern. */
#include <check.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/searchrate_check.h"
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

/* Parses src and checks its next expansions against the strings given, up to a NULL. */
static void expect(const char *src, ...)
{
	parse_ok(src);
	va_list ap;
	va_start(ap, src);
	for (const char *want; (want = va_arg(ap, const char *));)
		ck_assert_str_eq(next(), want);
	va_end(ap);
	pattern_free(&p);
}

/* Parses src and checks that 200 expansions are integers from lo to hi. */
static void expect_within(const char *src, long lo, long hi)
{
	parse_ok(src);
	for (int i = 0; i < 200; i++) {
		const char *s = next();
		long v = strtol(s, NULL, 10);
		ck_assert_msg(v >= lo && v <= hi, "%s: %s outside %ld..%ld", src, s, lo, hi);
	}
	pattern_free(&p);
}

START_TEST(literal_only)
{
	parse_ok("(objectClass=*)");
	ck_assert_str_eq(next(), "(objectClass=*)");
	ck_assert_ptr_eq(next(), p.fixed); /* no copy for a pattern without ranges */
	pattern_free(&p);
	expect("", "", "", NULL);
}
END_TEST

START_TEST(sequential)
{
	expect("(uid=user[1:3])", "(uid=user1)", "(uid=user2)", "(uid=user3)", "(uid=user1)", NULL);
	expect("[3:1]", "3", "2", "1", "3", NULL); /* counts down */
	expect("[0:10:5],[0:7x4]", "0,0", "5,4", "10,0", "0,4", NULL);
	expect("[-2:2:2]", "-2", "0", "2", "-2", NULL);
	expect("[9223372036854775806:9223372036854775807]", "9223372036854775806",
	       "9223372036854775807", "9223372036854775806", NULL);
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
	expect_within("[9-5]", 5, 9); /* bounds in either order */
	expect_within("[-3--1]", -3, -1);
	expect_within("[7-7]", 7, 7);
	expect_within("[-9223372036854775808-9223372036854775807]", LONG_MIN, LONG_MAX);
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

START_TEST(escapes_and_padding)
{
	expect("(cn=[[a]]) [[[1:2]]]", "(cn=[a]) [1]", "(cn=[a]) [2]", NULL);
	expect("user.[7:8%0000]", "user.0007", "user.0008", NULL);
	expect("[5-5%#00]", "05", NULL); /* '#' accepted, only 0s count */
	expect("a]b", "a]b", NULL);      /* a lone ] is literal */
}
END_TEST

/* The digits are written by hand: as snprintf's "%0*" PRId64 would write them. */
START_TEST(values_read_as_printf_writes_them)
{
	static const char *const srcs[] = {
	    "[-12:-12]",
	    "[-12:-12%0000]",
	    "[0:0]",
	    "[0:0%000]",
	    "[7:7%0]",
	    "[12345:12345%00]",
	    "[-9223372036854775808:-9223372036854775808]",
	    "[9223372036854775807:9223372036854775807%00000000000000000000]"};
	static const long long vals[] = {-12, -12, 0, 0, 7, 12345, INT64_MIN, INT64_MAX};
	static const int widths[] = {0, 4, 0, 3, 1, 2, 0, 20};
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "%0*lld", widths[i], vals[i]);
		expect(srcs[i], want, NULL);
	}
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
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];
		snprintf(want, sizeof(want), "bad value pattern at offset %zu of \"%s\": expected",
		         bad[i].offset, bad[i].src);
		err[0] = '\0';
		ck_assert_msg(!pattern_parse(&p, bad[i].src, err, sizeof(err)), "\"%s\" accepted",
		              bad[i].src);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "\"%s\": message \"%s\"",
		              bad[i].src, err);
		ck_assert_msg(strstr(err, "[A-B], [A:B] or [A:B:STEP]") && strstr(err, "[[ and ]]"),
		              "message \"%s\" does not say what is expected", err);
		ck_assert_ptr_null(p.comps); /* nothing kept: pattern_free is not needed */
		ck_assert_ptr_null(p.fixed);
	}
	char small[16]; /* a short buffer gets a truncated, terminated message */
	ck_assert(!pattern_parse(&p, "[1-", small, sizeof(small)));
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
	    literal_only,
	    sequential,
	    rewind_starts_again,
	    random_stays_in_range_and_covers_it,
	    random_is_reproducible_from_the_seed,
	    escapes_and_padding,
	    values_read_as_printf_writes_them,
	    malformed_patterns_say_where,
	};
	return searchrate_check_run("searchrate_pattern", NULL, teardown, tests,
	                            sizeof(tests) / sizeof(tests[0]));
}
