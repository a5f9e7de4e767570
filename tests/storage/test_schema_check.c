/*
 * Unit tests for schema checking at import (storage/entry_schema.h,
 * storage/value_syntax.h) with the four schemas minidir serves by default (core cosine
 * inetorgperson nis, the tree's own in schema/) and openldap. Run from the repository root.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "protocol/schema.h"
#include "tests/tree_schema.h"
#include "tests/storage/expect_line.h"
#include "ldif/ldif_import.h"
#include "storage/value_syntax.h"
#include "tests/check_run.h"

#define BAD_GLOB "tests/data/bad-schema/*.ldif"

static char dir[64], db_path[128];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-schema-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/test.mdb", dir);
}

static void teardown(void)
{
	unlink(db_path);
	rmdir(dir);
}

/* Imports ldif under suffix; returns ldif_import's result, the error text in *errtext. */
static int import(const char *ldif, const char *suffix, bool skip, char **errtext)
{
	char *text = NULL;
	size_t len = 0, count;
	FILE *err = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(err);
	struct import_opts opts = {.suffix = suffix, .err = err, .skip_schema = skip};
	int rc = ldif_import(ldif, db_path, &opts, &count);
	fclose(err);
	*errtext = text;
	return rc;
}

START_TEST(bad_schema_files)
{
	glob_t g;
	ck_assert_int_eq(glob(BAD_GLOB, 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		unsigned long line;
		char words[256];
		expect_line_read(path, &line, words, sizeof(words));

		char *errtext;
		ck_assert_msg(import(path, "dc=test,dc=org", false, &errtext) == -1, "%s imported",
		              path);
		char want[512];
		snprintf(want, sizeof(want), "%s:%lu: ", path, line);
		ck_assert_msg(strstr(errtext, want) == errtext, "%s: \"%s\" lacks \"%s\"", path,
		              errtext, want);
		ck_assert_msg(strcasestr(errtext, words), "%s: \"%s\" lacks \"%s\"", path, errtext,
		              words);
		free(errtext);
		ck_assert_int_eq(access(db_path, F_OK), -1);

		/* -s (skip_schema) takes the same file, as slapadd -s does. */
		ck_assert_msg(import(path, "dc=test,dc=org", true, &errtext) == 0,
		              "%s with skip_schema: %s", path, errtext);
		free(errtext);
		unlink(db_path);
	}
	globfree(&g);
}
END_TEST

START_TEST(good_files_pass_the_schema)
{
	/* What the project ships, and what slapadd takes in the conformance suite. */
	static const char *const files[][2] = {
	    {"tests/data/test.ldif", "dc=test,dc=org"},
	    {"examples/example.ldif", "dc=example,dc=com"},
	    {"tests/conformance/conformance.ldif", "dc=conf,dc=test"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *errtext;
		int rc = import(files[i][0], files[i][1], false, &errtext);
		ck_assert_msg(rc == 0, "%s: %s", files[i][0], errtext);
		free(errtext);
		unlink(db_path);
	}
	char gen[160], cmd[256];
	snprintf(gen, sizeof(gen), "%s/gen.ldif", dir);
	snprintf(cmd, sizeof(cmd), "bench/gen-ldif.sh 50 dc=example,dc=com 300 > %s", gen);
	ck_assert_int_eq(system(cmd), 0);
	char *errtext;
	int rc = import(gen, "dc=example,dc=com", false, &errtext);
	unlink(gen);
	ck_assert_msg(rc == 0, "bench/gen-ldif.sh output: %s", errtext);
	free(errtext);
}
END_TEST

#define SYN(n) "1.3.6.1.4.1.1466.115.121.1." #n

static void expect(const char *syntax, const char *value, bool valid)
{
	const char *want = value_syntax_check(syntax, value, strlen(value));
	ck_assert_msg((want == NULL) == valid, "syntax %s, \"%s\": %s", syntax, value,
	              want ? want : "valid");
}

START_TEST(value_syntaxes)
{
	expect(SYN(27), "1000", true);
	expect(SYN(27), "-5", true);
	expect(SYN(27), "0", true);
	expect(SYN(27), "notanumber", false);
	expect(SYN(27), "", false);
	expect(SYN(27), "-0", false);
	expect(SYN(27), "007", false);
	expect(SYN(7), "TRUE", true);
	expect(SYN(7), "FALSE", true);
	expect(SYN(7), "true", false);
	expect(SYN(7), "yes", false);
	expect(SYN(12), "uid=a,dc=test,dc=org", true);
	expect(SYN(12), "not a dn", false);
	expect(SYN(24), "20261130104500Z", true);
	expect(SYN(24), "202611301045Z", true);
	expect(SYN(24), "20261130104500.123+0100", true);
	expect(SYN(24), "20261330104500Z", false);
	expect(SYN(24), "20261130104500", false);
	expect(SYN(24), "yesterday", false);
	expect(SYN(26), "a@example.com", true);
	expect(SYN(26), "j\xc3\xb6se@example.com", false);
	expect(SYN(15), "J\xc3\xb6se", true);
	expect(SYN(15), "", false);
	expect(SYN(15), "\xff\xfe", false);
	expect(SYN(15), "\xc0\xaf", false);     /* overlong '/' */
	expect(SYN(15), "\xed\xa0\x80", false); /* a surrogate */
	expect(SYN(15), "caf\xc3", false);      /* cut short */
	expect(SYN(38), "2.5.4.3", true);
	expect(SYN(38), "inetOrgPerson", true);
	expect(SYN(38), "2..5", false);
	expect(SYN(38), "1.02", false);
	expect(SYN(38), "-name", false);
	expect(SYN(50), "+1 555-0101", true);
	expect(SYN(50), "555_0101", false);
	expect(SYN(36), "123 456", true);
	expect(SYN(36), "12a", false);
	expect(SYN(44), "Serial (1)", true);
	expect(SYN(44), "a@b", false);
	expect(SYN(11), "US", true);
	expect(SYN(11), "USA", false);
	expect(SYN(40), "\xff anything", true);
	expect(NULL, "", true);
}
END_TEST

/* value_gentime: the time a Generalized Time value stands for, and what is not one. */
static time_t gentime(const char *v)
{
	time_t t = -1;
	ck_assert_msg(value_gentime(v, strlen(v), &t), "\"%s\" is a Generalized Time", v);
	return t;
}

static void not_gentime(const char *v)
{
	time_t t = 12345;
	ck_assert_msg(!value_gentime(v, strlen(v), &t), "\"%s\" is no Generalized Time", v);
	ck_assert_int_eq(t, 12345); /* left alone */
	ck_assert_msg(value_syntax_check(SYN(24), v, strlen(v)), "\"%s\" is refused too", v);
}

START_TEST(generalized_time_parsed)
{
	const time_t noon = 1796558400; /* 2026-12-06T12:00:00Z */
	ck_assert_int_eq(gentime("20261206120000Z"), noon);
	ck_assert_int_eq(gentime("202612061200Z"), noon);
	ck_assert_int_eq(gentime("2026120612Z"), noon);
	ck_assert_int_eq(gentime("20261206120005Z"), noon + 5);
	ck_assert_int_eq(gentime("20261206120000.999Z"), noon); /* the fraction dropped */
	ck_assert_int_eq(gentime("2026120612,5Z"), noon);       /* of the hour: dropped too */
	ck_assert_int_eq(gentime("20261206130000+0100"), noon);
	ck_assert_int_eq(gentime("20261206110000-01"), noon);
	ck_assert_int_eq(gentime("20261206120000.5-0030"), noon + 1800);
	ck_assert_int_eq(gentime("20261206115960Z"), noon); /* a leap second */
	ck_assert_int_eq(gentime("19700101000000Z"), 0);
	ck_assert_int_lt(gentime("000001010000Z"), 0);
	not_gentime("");
	not_gentime("yesterday");
	not_gentime("2026120612");           /* no zone */
	not_gentime("20261206120000");       /* no zone */
	not_gentime("20261306120000Z");      /* month 13 */
	not_gentime("20261232120000Z");      /* day 32 */
	not_gentime("20261206240000Z");      /* hour 24 */
	not_gentime("20261206126000Z");      /* minute 60 */
	not_gentime("20261206120061Z");      /* second 61 */
	not_gentime("20261206120000.Z");     /* a fraction without digits */
	not_gentime("20261206120000+1");     /* half a differential */
	not_gentime("20261206120000+2400");  /* its hour 24 */
	not_gentime("20261206120000+0160");  /* its minute 60 */
	not_gentime("20261206120000Zjunk");  /* after the zone */
	not_gentime("2026-12-06T12:00:00Z"); /* ISO 8601's form */
	ck_assert(!value_gentime("20261206120000Z", 14, &(time_t){0})); /* cut before Z */
}
END_TEST

static Suite *schema_check_suite(void)
{
	Suite *s = suite_create("schema check");
	TCase *tc = tcase_create("import");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bad_schema_files);
	tcase_add_test(tc, good_files_pass_the_schema);
	tcase_add_test(tc, value_syntaxes);
	tcase_add_test(tc, generalized_time_parsed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	char err[1024];
	/* openldap.schema too: the conformance directory has OpenLDAPperson entries. */
	if (schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES " openldap", err, sizeof(err)) < 0) {
		fprintf(stderr, "schema: %s\n", err);
		return EXIT_FAILURE;
	}
	int status = check_run(schema_check_suite());
	schema_free();
	return status;
}
