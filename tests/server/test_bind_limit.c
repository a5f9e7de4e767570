/* server/bind_limit.c and server/limit_key.c: the limit in a fixed window, what a success
 * takes back, which key a full set gives up, the counts cn=limits shows, and the keys of
 * DNs and peer addresses. Times are given (clock_seconds values), not waited for. */
#include <check.h>
#include <string.h>

#include "server/bind_limit.h"
#include "server/limit_key.h"
#include "tests/check_run.h"

/* Keys of one set (bind_limit.h: the low bits name it), DNs' (top bit clear). */
static uint64_t set_key(unsigned set, unsigned i)
{
	return ((uint64_t)(i + 1) << 20) | set;
}
#define ADDR(k) ((k) | LIMIT_KEY_ADDR)

START_TEST(limit_in_a_fixed_window)
{
	struct bind_limit *bl = bind_limit_new(3, 10);
	uint64_t dn = set_key(1, 0), addr = ADDR(set_key(2, 0));
	for (int i = 0; i < 3; i++)
		ck_assert(bind_limit_try(bl, dn, addr, 1000 + i));
	ck_assert(!bind_limit_try(bl, dn, addr, 1003));
	/* A worker that read the clock a second before the window began took the mutex after
	 * it: still at the limit, not a window long past. */
	ck_assert(!bind_limit_try(bl, dn, addr, 999));
	ck_assert(!bind_limit_try(bl, dn, 0, 1005));               /* the DN alone */
	ck_assert(!bind_limit_try(bl, set_key(1, 1), addr, 1009)); /* the address alone */
	struct bind_limit_counts c;
	bind_limit_counts(bl, 1009, &c);
	ck_assert_uint_eq(c.dns_over, 1);
	ck_assert_uint_eq(c.addrs_over, 1);
	ck_assert_uint_eq(c.tracked, 2); /* refused binds count nothing */
	/* The window began at 1000: at 1010 both start again. */
	ck_assert(bind_limit_try(bl, dn, addr, 1010));
	bind_limit_counts(bl, 1010, &c);
	ck_assert_uint_eq(c.dns_over + c.addrs_over, 0);
	bind_limit_free(bl);
}
END_TEST

START_TEST(success_clears_the_dn_not_the_address)
{
	struct bind_limit *bl = bind_limit_new(3, 10);
	uint64_t dn = set_key(1, 0), other = set_key(1, 1), addr = ADDR(set_key(2, 0));
	ck_assert(bind_limit_try(bl, dn, addr, 100));
	ck_assert(bind_limit_try(bl, dn, addr, 100));
	ck_assert(bind_limit_try(bl, dn, addr, 100)); /* the right password, this time */
	bind_limit_succeeded(bl, dn, addr);
	/* The DN starts again; the address keeps its 2 failures: one more guess, not three. */
	ck_assert(bind_limit_try(bl, other, addr, 101));
	ck_assert(!bind_limit_try(bl, dn, addr, 101));
	ck_assert(bind_limit_try(bl, dn, ADDR(set_key(3, 0)), 101));
	bind_limit_free(bl);
}
END_TEST

START_TEST(a_full_set_gives_up_expired_then_addresses_then_fewest)
{
	struct bind_limit *bl = bind_limit_new(2, 100);
	unsigned s = 7;
	/* 8 DN keys in set 7: key 0 at the limit from t=0, key 1 at the limit from t=5, the
	 * rest with one failure, key 2 from t=1 (expired at t=101). */
	for (int t = 0; t < 2; t++)
		ck_assert(bind_limit_try(bl, set_key(s, 0), 0, 0));
	ck_assert(bind_limit_try(bl, set_key(s, 2), 0, 1)); /* (the clock never goes back) */
	for (int t = 0; t < 2; t++)
		ck_assert(bind_limit_try(bl, set_key(s, 1), 0, 5));
	for (unsigned i = 3; i < BIND_LIMIT_WAYS; i++)
		ck_assert(bind_limit_try(bl, set_key(s, i), 0, 50));
	for (unsigned i = 3; i < BIND_LIMIT_WAYS - 1; i++)
		ck_assert(bind_limit_try(bl, set_key(s, i), 0, 50)); /* at the limit but the last */
	/* At 101 key 0's and key 2's windows ended: a new key takes one of them, nothing
	 * evicted. */
	ck_assert(bind_limit_try(bl, set_key(s, 100), 0, 101));
	struct bind_limit_counts c;
	bind_limit_counts(bl, 101, &c);
	ck_assert_uint_eq(c.evicted, 0);
	ck_assert(bind_limit_try(bl, set_key(s, 101), 0, 101));
	bind_limit_counts(bl, 101, &c);
	ck_assert_uint_eq(c.evicted, 0);
	/* Now full and live: the next takes the fewest failures under the limit (key 100 or
	 * 101 or the last, one each), never one at the limit. */
	ck_assert(bind_limit_try(bl, set_key(s, 102), 0, 102));
	bind_limit_counts(bl, 102, &c);
	ck_assert_uint_eq(c.evicted, 1);
	ck_assert(!bind_limit_try(bl, set_key(s, 1), 0, 102)); /* still at the limit */
	for (unsigned i = 3; i < BIND_LIMIT_WAYS - 1; i++)
		ck_assert(!bind_limit_try(bl, set_key(s, i), 0, 102));
	bind_limit_free(bl);

	/* An address goes before any DN, even one at the limit before a DN under it. */
	bl = bind_limit_new(2, 100);
	ck_assert(bind_limit_try(bl, set_key(s, 0), ADDR(set_key(s, 1)), 10));
	ck_assert(bind_limit_try(bl, set_key(s, 2), ADDR(set_key(s, 1)), 10)); /* address at 2 */
	for (unsigned i = 3; i < BIND_LIMIT_WAYS; i++) /* the set full: DNs with one each */
		ck_assert(bind_limit_try(bl, set_key(s, i), 0, 11));
	ck_assert(!bind_limit_try(bl, set_key(s, 50), ADDR(set_key(s, 1)), 12)); /* at it */
	ck_assert(bind_limit_try(bl, set_key(s, 60), 0, 12)); /* takes the address's place */
	ck_assert(bind_limit_try(bl, set_key(s, 50), ADDR(set_key(s, 1)), 12)); /* it is gone */
	bind_limit_free(bl);

	/* Every key of a set a DN at the limit: none is given up; a new key is not counted. */
	bl = bind_limit_new(1, 100);
	for (unsigned t = 0; t < BIND_LIMIT_WAYS; t++)
		ck_assert(bind_limit_try(bl, set_key(s, t), 0, 10 + (time_t)t));
	for (int k = 0; k < 3; k++)
		ck_assert(bind_limit_try(bl, set_key(s, 50), 0, 20)); /* unlimited: never counted */
	for (unsigned i = 0; i < BIND_LIMIT_WAYS; i++)
		ck_assert(!bind_limit_try(bl, set_key(s, i), 0, 20));
	bind_limit_counts(bl, 20, &c);
	ck_assert_uint_eq(c.evicted, 0);
	ck_assert_uint_eq(c.untracked, 3);
	ck_assert_uint_eq(c.dns_over, BIND_LIMIT_WAYS);
	/* Once the first window ends (key 0's, at 110) the new key is counted there. */
	ck_assert(bind_limit_try(bl, set_key(s, 50), 0, 110));
	ck_assert(!bind_limit_try(bl, set_key(s, 50), 0, 111));
	bind_limit_free(bl);
}
END_TEST

/* A DN at the limit stays limited for its window whatever else arrives: binds from 40,000
 * addresses (a whole IPv6 range, one /64 each), then as 40,000 other DNs (ldapi://, no
 * address), more keys than the table holds, every one through the DN's set too. */
START_TEST(a_dn_at_the_limit_outlasts_any_spray)
{
	struct bind_limit *bl = bind_limit_new(5, 900);
	const char *alice = "uid=alice,ou=people,dc=example,dc=com";
	uint64_t dn = limit_key_dn(alice, strlen(alice));
	for (int i = 0; i < 5; i++)
		ck_assert(bind_limit_try(bl, dn, 0, 1000));
	ck_assert(!bind_limit_try(bl, dn, 0, 1000));
	char peer[64], other[64];
	for (unsigned i = 0; i < 40000; i++) { /* each address at the limit, by 5 DNs */
		snprintf(peer, sizeof(peer), "[2001:db8:%x:%x::1]:40000", i >> 16, i & 0xffff);
		uint64_t addr = limit_key_peer(peer);
		ck_assert(addr != 0);
		for (int k = 0; k < 5; k++) {
			int n = snprintf(other, sizeof(other), "uid=s%u.%d", i, k);
			bind_limit_try(bl, limit_key_dn(other, (size_t)n), addr, 1001);
		}
	}
	ck_assert(!bind_limit_try(bl, dn, 0, 1002));
	for (unsigned i = 0; i < 40000; i++) {
		int n = snprintf(other, sizeof(other), "uid=u%u,ou=people,dc=example,dc=com", i);
		for (int k = 0; k < 5; k++) /* each sprayed DN at the limit too */
			bind_limit_try(bl, limit_key_dn(other, (size_t)n), 0, 1003);
	}
	ck_assert(!bind_limit_try(bl, dn, 0, 1004));
	ck_assert(!bind_limit_try(bl, dn, 0, 1899)); /* to the end of its window */
	ck_assert(bind_limit_try(bl, dn, 0, 1900));
	struct bind_limit_counts c;
	bind_limit_counts(bl, 1004, &c);
	ck_assert_uint_gt(c.untracked, 0); /* more DNs at the limit than the table holds */
	bind_limit_free(bl);
}
END_TEST

/* DNs' keys fall in every set of the table, as addresses' do: both low bits vary. */
START_TEST(dn_keys_use_every_set)
{
	unsigned even = 0, odd = 0;
	char dn[64];
	for (unsigned i = 0; i < 1000; i++) {
		int n = snprintf(dn, sizeof(dn), "uid=user%u,dc=example,dc=com", i);
		uint64_t k = limit_key_dn(dn, (size_t)n);
		ck_assert(k != 0 && !(k & LIMIT_KEY_ADDR));
		++*((k & 1) ? &odd : &even);
	}
	ck_assert_uint_gt(even, 400);
	ck_assert_uint_gt(odd, 400);
}
END_TEST

START_TEST(keys_of_dns_and_peers)
{
	const char *a = "uid=a,dc=example", *b = "uid=b,dc=example";
	uint64_t ka = limit_key_dn(a, strlen(a));
	ck_assert(ka != 0 && !(ka & LIMIT_KEY_ADDR));
	ck_assert(ka == limit_key_dn(a, strlen(a)) && ka != limit_key_dn(b, strlen(b)));
	uint64_t v4 = limit_key_peer("192.0.2.1:389");
	ck_assert(v4 & LIMIT_KEY_ADDR);
	ck_assert(v4 == limit_key_peer("192.0.2.1:40000")); /* the port does not count */
	ck_assert(v4 != limit_key_peer("192.0.2.2:389"));
	ck_assert(v4 == limit_key_peer("[::ffff:192.0.2.1]:389")); /* IPv4-mapped */
	/* An IPv6 address counts by its /64. */
	ck_assert(limit_key_peer("[2001:db8:1:2::1]:389") ==
	          limit_key_peer("[2001:db8:1:2:ffff::7]:5"));
	ck_assert(limit_key_peer("[2001:db8:1:2::1]:389") !=
	          limit_key_peer("[2001:db8:1:3::1]:389"));
	ck_assert(limit_key_peer("ldapi uid=0 gid=0") == 0);
	ck_assert(limit_key_peer("ldapi") == 0);
	ck_assert(limit_key_peer("") == 0);
	ck_assert(limit_key_peer("[::1") == 0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("bind_limit");
	TCase *tc = tcase_create("bind_limit");
	tcase_add_test(tc, limit_in_a_fixed_window);
	tcase_add_test(tc, success_clears_the_dn_not_the_address);
	tcase_add_test(tc, a_full_set_gives_up_expired_then_addresses_then_fewest);
	tcase_add_test(tc, a_dn_at_the_limit_outlasts_any_spray);
	tcase_add_test(tc, dn_keys_use_every_set);
	tcase_add_test(tc, keys_of_dns_and_peers);
	suite_add_tcase(su, tc);
	return check_run(su);
}
