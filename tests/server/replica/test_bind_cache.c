/* server/replica/bind_cache.c: bind_passthrough_cache's verifiers of provider-accepted binds. */
#include <check.h>
#include <string.h>

#include "server/replica/bind_cache.h"
#include "tests/check_run.h"

#define BV(s) ((struct berval){sizeof(s) - 1, (char *)(s)})

START_TEST(a_verifier_matches_its_password_until_ttl)
{
	struct bind_cache *c = bind_cache_new(60);
	ck_assert_ptr_nonnull(c);
	long age = -1;
	ck_assert(!bind_cache_matches(c, 7, &BV("secret"), 1000, &age)); /* none yet */
	ck_assert_int_eq(bind_cache_remember(c, 7, &BV("secret"), 1000), 0);
	ck_assert(bind_cache_matches(c, 7, &BV("secret"), 1030, &age));
	ck_assert_int_eq(age, 30);
	ck_assert(!bind_cache_matches(c, 7, &BV("Secret"), 1030, &age)); /* another password */
	ck_assert(!bind_cache_matches(c, 8, &BV("secret"), 1030, &age)); /* another user */
	ck_assert(!bind_cache_matches(c, 7, &BV("secret"), 1060, &age)); /* ttl reached */
	ck_assert(!bind_cache_matches(c, 7, &BV("secret"), 999, &age));  /* the clock went back */
	/* A new bind replaces the user's verifier; the provider's 49 forgets it. */
	ck_assert_int_eq(bind_cache_remember(c, 7, &BV("new-secret"), 1100), 0);
	ck_assert(!bind_cache_matches(c, 7, &BV("secret"), 1101, &age));
	ck_assert(bind_cache_matches(c, 7, &BV("new-secret"), 1101, &age));
	bind_cache_forget(c, 7);
	ck_assert(!bind_cache_matches(c, 7, &BV("new-secret"), 1101, &age));
	bind_cache_free(c);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("bind_cache");
	TCase *tc = tcase_create("bind_cache");
	tcase_add_test(tc, a_verifier_matches_its_password_until_ttl);
	suite_add_tcase(su, tc);
	return check_run(su);
}
