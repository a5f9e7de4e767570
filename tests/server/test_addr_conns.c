/* server/addr_conns.c: the limit per address, a count given back, addresses that share
 * a probe chain (one leaving must not lose the others), and a full table. */
#include <check.h>

#include "server/addr_conns.h"
#include "tests/check_run.h"

/* Keys whose home slot is home (the low bits name it). */
static uint64_t home_key(unsigned home, unsigned i)
{
	return ((uint64_t)(i + 1) << 32) | home;
}

START_TEST(limit_per_address)
{
	struct addr_conns *t = addr_conns_new(2);
	uint64_t a = home_key(5, 0), b = home_key(9, 0);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_OVER);
	ck_assert_int_eq(addr_conns_acquire(t, b), ADDR_CONNS_COUNTED);
	addr_conns_release(t, a);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_OVER);
	addr_conns_release(t, a);
	addr_conns_release(t, a);
	/* Gone with its last connection: it starts again from 0. */
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, a), ADDR_CONNS_OVER);
	addr_conns_free(t);
}
END_TEST

START_TEST(a_shared_probe_chain_survives_a_removal)
{
	struct addr_conns *t = addr_conns_new(1);
	/* Keys 0..3 at home 10, key 4 at home 11 (probing past them), then the last slot's
	 * home with a key that wraps to slot 0. */
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(addr_conns_acquire(t, home_key(10, i)), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(11, 0)), ADDR_CONNS_COUNTED);
	uint64_t last = ADDR_CONNS_SLOTS - 1;
	ck_assert_int_eq(addr_conns_acquire(t, home_key((unsigned)last, 0)), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, home_key((unsigned)last, 1)), ADDR_CONNS_COUNTED);
	/* Each leaves in turn; the others are still found (at the limit). */
	addr_conns_release(t, home_key(10, 1));
	for (unsigned i = 0; i < 4; i++)
		if (i != 1)
			ck_assert_int_eq(addr_conns_acquire(t, home_key(10, i)), ADDR_CONNS_OVER);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(11, 0)), ADDR_CONNS_OVER);
	addr_conns_release(t, home_key(10, 0));
	ck_assert_int_eq(addr_conns_acquire(t, home_key(10, 2)), ADDR_CONNS_OVER);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(10, 3)), ADDR_CONNS_OVER);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(11, 0)), ADDR_CONNS_OVER);
	addr_conns_release(t, home_key((unsigned)last, 0));
	ck_assert_int_eq(addr_conns_acquire(t, home_key((unsigned)last, 1)), ADDR_CONNS_OVER);
	/* A key released twice is gone after the first: the second does nothing. */
	addr_conns_release(t, home_key(10, 2));
	addr_conns_release(t, home_key(10, 2));
	ck_assert_int_eq(addr_conns_acquire(t, home_key(10, 3)), ADDR_CONNS_OVER);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(11, 0)), ADDR_CONNS_OVER);
	addr_conns_free(t);
}
END_TEST

START_TEST(a_full_table_lets_new_addresses_in_uncounted)
{
	struct addr_conns *t = addr_conns_new(1);
	for (unsigned i = 0; i < ADDR_CONNS_SLOTS - 1; i++)
		ck_assert_int_eq(addr_conns_acquire(t, home_key(i, 0)), ADDR_CONNS_COUNTED);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(3, 7)), ADDR_CONNS_FULL);
	ck_assert_int_eq(addr_conns_acquire(t, home_key(3, 0)), ADDR_CONNS_OVER); /* known */
	addr_conns_release(t, home_key(3, 0));
	ck_assert_int_eq(addr_conns_acquire(t, home_key(3, 7)), ADDR_CONNS_COUNTED);
	addr_conns_free(t);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("addr_conns");
	TCase *tc = tcase_create("addr_conns");
	tcase_add_test(tc, limit_per_address);
	tcase_add_test(tc, a_shared_probe_chain_survives_a_removal);
	tcase_add_test(tc, a_full_table_lets_new_addresses_in_uncounted);
	suite_add_tcase(su, tc);
	return check_run(su);
}
