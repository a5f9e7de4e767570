/* Matching rules: the normal forms protocol/match.c produces. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/match.h"
#include "tests/check_run.h"

/* The normal form of in under rule, or "<invalid>". Caller frees. */
static char *norm(enum match_rule rule, const char *in)
{
	struct buf b = {0};
	if (match_normalize(rule, in, strlen(in), &b) < 0) {
		buf_free(&b);
		return strdup("<invalid>");
	}
	char *s = strndup(b.data ? (const char *)b.data : "", b.len);
	buf_free(&b);
	return s;
}

#define ASSERT_NORM(rule, in, want)                                                                \
	do {                                                                                       \
		char *got_ = norm(rule, in);                                                       \
		ck_assert_str_eq(got_, want);                                                      \
		free(got_);                                                                        \
	} while (0)

START_TEST(case_ignore)
{
	ASSERT_NORM(MATCH_CASE_IGNORE, "  Hello   World ", "hello world");
	ASSERT_NORM(MATCH_CASE_IGNORE, "ÉCOLE Zoë", "école zoë");
	ASSERT_NORM(MATCH_CASE_IGNORE, "ŁUKASZ", "łukasz");
	ASSERT_NORM(MATCH_CASE_IGNORE, "李雷", "李雷");
	/* Invalid UTF-8 is kept byte for byte, never dropped. */
	ASSERT_NORM(MATCH_CASE_IGNORE,
	            "A\xff"
	            "B",
	            "a\xff"
	            "b");
	ASSERT_NORM(MATCH_CASE_IGNORE, "\xc3", "\xc3");
	/* ASCII up to a space or a non-ASCII byte takes a shorter path: the same result. */
	ASSERT_NORM(MATCH_CASE_IGNORE, "User.1234", "user.1234");
	ASSERT_NORM(MATCH_CASE_IGNORE, "@AZ[`az{", "@az[`az{");
	ASSERT_NORM(MATCH_CASE_IGNORE, "Mail@Example.COM  Tail", "mail@example.com tail");
	ASSERT_NORM(MATCH_CASE_IGNORE, "AbC\xc3\x9cX", "abc\xc3\xbcx");
	ASSERT_NORM(MATCH_CASE_EXACT, "AbC-D  E", "AbC-D E");
	/* ... eight bytes at a time: every byte value around the letters, in words. */
	ASSERT_NORM(MATCH_CASE_IGNORE,
	            "ABCDEFGHIJKLMNOPQRSTUVWXYZ@[`{}~\x7f\x01"
	            "Az",
	            "abcdefghijklmnopqrstuvwxyz@[`{}~\x7f\x01"
	            "az");
	ASSERT_NORM(MATCH_CASE_EXACT, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
	ASSERT_NORM(MATCH_CASE_IGNORE, "FirstWord Second  THIRDWORD", "firstword second thirdword");
	ASSERT_NORM(MATCH_CASE_IGNORE,
	            "EightByt\xc3\x89"
	            "COLE ABCDEFGH",
	            "eightbyt\xc3\xa9"
	            "cole abcdefgh");
	ASSERT_NORM(MATCH_CASE_IGNORE,
	            "\xc3\x89"
	            "COLEABCDEFGH",
	            "\xc3\xa9"
	            "coleabcdefgh");
}
END_TEST

START_TEST(empty_value_into_empty_buffer)
{
	/*
	 * An empty value normalized into a buffer that never allocated: the rules
	 * used to compute data + len with data NULL, undefined behaviour that UBSan
	 * reports (found by fuzzing the request decoder).
	 */
	const enum match_rule rules[] = {MATCH_CASE_IGNORE, MATCH_CASE_EXACT, MATCH_TELEPHONE,
	                                 MATCH_NUMERIC, MATCH_OCTET};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct buf b = {0};
		ck_assert_int_eq(match_normalize(rules[i], "", 0, &b), 0);
		ck_assert_uint_eq(b.len, 0);
		buf_free(&b);
		ck_assert_int_eq(match_normalize(rules[i], "   ", 3, &b), 0);
		ck_assert_uint_eq(b.len, rules[i] == MATCH_OCTET ? 3 : 0);
		buf_free(&b);
	}
}
END_TEST

START_TEST(normal_form_never_longer)
{
	/* U+023A lowercases to U+2C65, one byte longer: it is kept as it is. */
	ASSERT_NORM(MATCH_CASE_IGNORE, "\xc8\xba", "\xc8\xba");
}
END_TEST

START_TEST(case_exact)
{
	ASSERT_NORM(MATCH_CASE_EXACT, "  Hello   World ", "Hello World");
}
END_TEST

START_TEST(telephone_and_numeric)
{
	ASSERT_NORM(MATCH_TELEPHONE, "+1 555-0100", "+15550100");
	ASSERT_NORM(MATCH_NUMERIC, " 12 34 ", "1234");
}
END_TEST

START_TEST(integer)
{
	/* RFC 4517 3.3.16: no '+', no leading zeros, no "-0" (spaces around are trimmed). */
	ASSERT_NORM(MATCH_INTEGER, "7", "7");
	ASSERT_NORM(MATCH_INTEGER, "0", "0");
	ASSERT_NORM(MATCH_INTEGER, " -12 ", "-12");
	ASSERT_NORM(MATCH_INTEGER, "+007", "<invalid>");
	ASSERT_NORM(MATCH_INTEGER, "007", "<invalid>");
	ASSERT_NORM(MATCH_INTEGER, "-0", "<invalid>");
	ASSERT_NORM(MATCH_INTEGER, "-", "<invalid>");
	ASSERT_NORM(MATCH_INTEGER, "12a", "<invalid>");
	ASSERT_NORM(MATCH_INTEGER, "", "<invalid>");
}
END_TEST

START_TEST(dn_and_none)
{
	ASSERT_NORM(MATCH_DN, "UID=Bob, OU=People,DC=Example", "uid=bob,ou=people,dc=example");
	ASSERT_NORM(MATCH_DN, "not a dn", "<invalid>");
	ASSERT_NORM(MATCH_NONE, "x", "<invalid>");
}
END_TEST

START_TEST(rule_names)
{
	ck_assert_int_eq(match_rule_named("caseIgnoreMatch"), MATCH_CASE_IGNORE);
	ck_assert_int_eq(match_rule_named("2.5.13.5"), MATCH_CASE_EXACT);
	ck_assert_int_eq(match_rule_named("integerOrderingMatch"), MATCH_INTEGER);
	ck_assert_int_eq(match_rule_named("noSuchMatch"), MATCH_NONE);
	ck_assert_int_eq(match_rule_named(NULL), MATCH_NONE);
}
END_TEST

START_TEST(descriptions)
{
	ck_assert(match_desc("description", 11, "description", 11));
	ck_assert(match_desc("DESCRIPTION", 11, "description;lang-en", 19));
	ck_assert(match_desc("description;lang-en", 19, "description;LANG-EN", 19));
	ck_assert(!match_desc("description;lang-en", 19, "description", 11));
	ck_assert(!match_desc("description;lang-de", 19, "description;lang-en", 19));
	/* RFC 3866 language ranges */
#define D(w, h) match_desc(w, sizeof(w) - 1, h, sizeof(h) - 1)
	ck_assert(D("name;lang-en-", "name;lang-en"));
	ck_assert(D("name;lang-en-", "name;LANG-EN-US"));
	ck_assert(D("name;lang-en-", "name;binary;lang-en-gb"));
	ck_assert(!D("name;lang-en-", "name;lang-enx"));
	ck_assert(!D("name;lang-en-", "name;lang-e"));
	ck_assert(!D("name;lang-en-", "name;lang-de"));
	ck_assert(!D("name;lang-en-", "name"));
	ck_assert(D("name;lang-", "name;lang-fr"));
	ck_assert(!D("name;lang-", "name;x-lang"));
	ck_assert(!D("name;lang-", "name"));
	ck_assert(!D("name;x-a-", "name;x-a")); /* not a language range */
	ck_assert(D("name;lang-en-;lang-en-us", "name;lang-en-us"));
#undef D
	ck_assert(!match_desc("desc", 4, "description", 11));
	/* An empty name (a client may send one) selects nothing and reads nothing. */
	ck_assert(!match_desc(NULL, 0, "cn", 2));
	ck_assert(!match_desc("cn", 2, NULL, 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("match");
	TCase *tc = tcase_create("normalize");
	tcase_add_test(tc, case_ignore);
	tcase_add_test(tc, normal_form_never_longer);
	tcase_add_test(tc, empty_value_into_empty_buffer);
	tcase_add_test(tc, case_exact);
	tcase_add_test(tc, telephone_and_numeric);
	tcase_add_test(tc, integer);
	tcase_add_test(tc, dn_and_none);
	tcase_add_test(tc, rule_names);
	tcase_add_test(tc, descriptions);
	suite_add_tcase(s, tc);
	return check_run(s);
}
