/* server/change_feed.c: changes noted, published with their cookie, read on from a
 * position; a reader past the ring's reach told so; an aborted transaction forgotten. */
#include <check.h>
#include <string.h>

#include "server/change_feed.h"
#include "tests/check_run.h"

static void uuid_of(unsigned char u[16], int i)
{
	memset(u, 0, 16);
	u[0] = (unsigned char)i;
}

START_TEST(published_and_read)
{
	struct change_feed *f = change_feed_new(4);
	struct buf dns = {0}, cookie = {0};
	struct feed_change out[8];
	unsigned char u[16];
	uint64_t at = 0;
	ck_assert_int_eq(change_feed_publish(f, "c0", 2), 0);
	ck_assert_int_eq(change_feed_position(f, &at, &cookie), 0);
	ck_assert_uint_eq(at, 0);
	ck_assert(cookie.len == 2 && memcmp(cookie.data, "c0", 2) == 0);
	uuid_of(u, 1);
	ck_assert_int_eq(change_feed_note(f, u, false, NULL, 0), 0);
	uuid_of(u, 2);
	ck_assert_int_eq(change_feed_note(f, u, true, "uid=x", 5), 0);
	ck_assert_uint_eq(change_feed_head(f), 0); /* not before the commit */
	ck_assert_int_eq(change_feed_publish(f, "c1", 2), 0);
	ck_assert_uint_eq(change_feed_head(f), 2);
	size_t n;
	bool caught;
	ck_assert_int_eq(change_feed_read(f, &at, out, 1, &n, &dns, &caught, &cookie), 0);
	ck_assert(n == 1 && !caught && out[0].uuid[0] == 1 && !out[0].deleted && at == 1);
	ck_assert_int_eq(change_feed_read(f, &at, out, 8, &n, &dns, &caught, &cookie), 0);
	ck_assert(n == 1 && caught && out[0].uuid[0] == 2 && out[0].deleted && at == 2);
	ck_assert(out[0].dnlen == 5 && memcmp(dns.data + out[0].dn_off, "uid=x", 5) == 0);
	ck_assert(cookie.len == 2 && memcmp(cookie.data, "c1", 2) == 0);
	/* An aborted transaction's changes are forgotten. */
	ck_assert_int_eq(change_feed_note(f, u, false, NULL, 0), 0);
	change_feed_discard(f);
	ck_assert_int_eq(change_feed_publish(f, "c2", 2), 0);
	ck_assert_uint_eq(change_feed_head(f), 2);
	buf_free(&dns);
	buf_free(&cookie);
	change_feed_free(f);
}
END_TEST

START_TEST(behind_the_ring)
{
	struct change_feed *f = change_feed_new(4);
	struct buf dns = {0}, cookie = {0};
	struct feed_change out[8];
	unsigned char u[16];
	size_t n;
	bool caught;
	uint64_t reader = 0, late = 0;
	for (int i = 0; i < 6; i++) { /* six commits of one: the ring keeps the last four */
		uuid_of(u, i);
		ck_assert_int_eq(change_feed_note(f, u, false, NULL, 0), 0);
		ck_assert_int_eq(change_feed_publish(f, "c", 1), 0);
		if (i == 2)
			ck_assert_int_eq(
			    change_feed_read(f, &reader, out, 8, &n, &dns, &caught, &cookie), 0);
	}
	ck_assert_int_eq(change_feed_read(f, &late, out, 8, &n, &dns, &caught, &cookie),
	                 CHANGE_FEED_BEHIND);
	ck_assert_int_eq(change_feed_read(f, &reader, out, 8, &n, &dns, &caught, &cookie), 0);
	ck_assert(n == 3 && caught && out[0].uuid[0] == 3 && out[2].uuid[0] == 5);
	/* One commit of more than the ring keeps: every reader is behind. */
	for (int i = 0; i < 5; i++) {
		uuid_of(u, 10 + i);
		ck_assert_int_eq(change_feed_note(f, u, true, "dn", 2), 0);
	}
	ck_assert_int_eq(change_feed_publish(f, "d", 1), 0);
	ck_assert_uint_eq(change_feed_head(f), 11);
	ck_assert_int_eq(change_feed_read(f, &reader, out, 8, &n, &dns, &caught, &cookie),
	                 CHANGE_FEED_BEHIND);
	buf_free(&dns);
	buf_free(&cookie);
	change_feed_free(f);
}
END_TEST

static Suite *change_feed_suite(void)
{
	Suite *s = suite_create("change_feed");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, published_and_read);
	tcase_add_test(tc, behind_the_ring);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(change_feed_suite());
}
