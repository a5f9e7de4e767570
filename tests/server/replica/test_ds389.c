/* server/replica/ds389.c: how a 389 Directory Server provider is recognised by its cookie,
 * the change number read from it, and what is asked of it. */
#include <check.h>
#include <string.h>

#include "server/replica/ds389.h"
#include "tests/check_run.h"

static bool is389(const char *cookie)
{
	return ds389_cookie(cookie, strlen(cookie)) >= 0;
}

START_TEST(cookie_forms)
{
	/* As 389-ds 2.3 makes them: host:port#binddn:base:filter#changenumber. */
	ck_assert(is389("localhost:389#cn=directory manager:dc=example,dc=com:(objectClass=*)#0"));
	ck_assert(is389("ipa.example.com:389#krbprincipalname=x:dc=example,dc=com:(uid=*)#1234"));
	/* slapd's, and what is neither. */
	ck_assert(!is389("rid=001,csn=20261206203557.000000Z#000000#000#000000"));
	ck_assert(!is389("RID=001,sid=001,csn=20261206203557.000000Z#000000#000#000000"));
	ck_assert(!is389(""));
	ck_assert(!is389("localhost:389#cn=x:dc=example,dc=com:(objectClass=*)#"));
	ck_assert(!is389("localhost:389#cn=x:dc=example,dc=com:(objectClass=*)#12a"));
	ck_assert(!is389("localhost:389#0"));
	ck_assert(!is389("localhost#cn=x#1"));
	/* The length given, not the NUL: a cookie is not a C string. */
	ck_assert_int_eq(ds389_cookie("h:1#a#12", 6), -1);
	ck_assert_int_eq(ds389_cookie("h:1#a#12xyz", 8), 12);
	/* Its change number, the lag's other term; one too long to be one is no cookie. */
	ck_assert_int_eq(ds389_cookie("h:1#a:b:(c=*)#0", 15), 0);
	ck_assert_int_eq(ds389_cookie("h:1#a:b:(c=*)#9876543210", 24), 9876543210LL);
	ck_assert(!is389("h:1#a:b:(c=*)#12345678901234567890"));
}
END_TEST

START_TEST(attributes_asked)
{
	/* The user attributes and the kept operational ones by name, never "+" (which brings
	 * 389-ds's nsUniqueId, entryid, parentid, dsEntryDN). */
	char **a = ds389_attrs();
	int n = 0, lock = 0;
	for (; a[n]; n++) {
		ck_assert_str_ne(a[n], "+");
		lock += strcmp(a[n], "nsAccountLock") == 0;
	}
	ck_assert_str_eq(a[0], "*");
	ck_assert_int_eq(lock, 1);
	ck_assert_int_ge(n, 5);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("ds389");
	TCase *tc = tcase_create("ds389");
	tcase_add_test(tc, cookie_forms);
	tcase_add_test(tc, attributes_asked);
	suite_add_tcase(su, tc);
	return check_run(su);
}
