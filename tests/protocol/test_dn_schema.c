/*
 * Unit tests for protocol/dn.c with the schema loaded: attribute aliases and
 * OIDs in DNs become the schema's name, and doing so leaks nothing.
 */
#include <check.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "tests/tree_schema.h"
#include "tests/check_run.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static void load_schema(void)
{
	char err[512];
	ck_assert_msg(schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err)) == 0,
	              "schema: %s", err);
}

static void unload_schema(void)
{
	schema_free();
}

static void assert_norm_is(const char *dn, const char *want)
{
	struct buf n = {0};
	ck_assert_msg(dn_normalize(dn, strlen(dn), &n, NULL) == 0, "\"%s\" rejected", dn);
	ck_assert_msg(n.len == strlen(want) && memcmp(n.data, want, n.len) == 0,
	              "\"%s\" -> \"%.*s\", expected \"%s\"", dn, (int)n.len, (const char *)n.data,
	              want);
	buf_free(&n);
}

START_TEST(aliases_and_oids_become_the_name)
{
	assert_norm_is("gn=X,dc=Example,dc=com", "givenname=x,dc=example,dc=com");
	assert_norm_is("2.5.4.3=A,commonName=B,CN=C", "cn=a,cn=b,cn=c");
	assert_norm_is("gn=a+sn=b+surname=c,dc=com", "givenname=a+sn=b+sn=c,dc=com");
	assert_norm_is("organizationalUnitName=x", "ou=x");
}
END_TEST

/*
 * A name longer than the alias ("gn" -> "givenname") needs memory of its own; it
 * used to be left to ldap_dnfree, which never frees it: 32 bytes per such RDN, on
 * every search base, bind DN and DN-valued filter. Under AddressSanitizer
 * LeakSanitizer reports it when this test's process exits; otherwise the heap
 * in use must not grow over many calls.
 */
START_TEST(long_names_do_not_leak)
{
	const char *dn = "gn=a,gn=b+sn=c,dc=example,dc=com";
	struct buf n = {0}, k = {0};
	ck_assert_int_eq(dn_normalize(dn, strlen(dn), &n, &k), 0); /* warm up */
	buf_free(&n);
	buf_free(&k);
	struct mallinfo2 before = mallinfo2();
	for (int i = 0; i < 2000; i++) {
		ck_assert_int_eq(dn_normalize(dn, strlen(dn), &n, &k), 0);
		buf_free(&n);
		buf_free(&k);
	}
	struct mallinfo2 after = mallinfo2();
#ifndef UNDER_ASAN
	ck_assert_msg(after.uordblks <= before.uordblks + 1024,
	              "heap in use grew by %zu bytes over 2000 DNs",
	              after.uordblks - before.uordblks);
#else
	(void)before;
	(void)after;
#endif
}
END_TEST

static Suite *dn_schema_suite(void)
{
	Suite *s = suite_create("dn_schema");
	TCase *tc = tcase_create("aliases");
	tcase_add_checked_fixture(tc, load_schema, unload_schema);
	tcase_add_test(tc, aliases_and_oids_become_the_name);
	tcase_add_test(tc, long_names_do_not_leak);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(dn_schema_suite());
}
