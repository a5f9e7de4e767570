/* server/replica_held.c: the set of entries a refresh brought before their parent. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "server/replica/held.h"
#include "tests/check_run.h"

static void uuid_of(int n, unsigned char *u)
{
	memset(u, 0, SYNC_UUID_LEN);
	u[0] = (unsigned char)n;
}

START_TEST(entries_are_copies_taken_in_order)
{
	struct held_set s = {0};
	char dn[64];
	unsigned char attrs[8] = "abcdefg", u[SYNC_UUID_LEN];
	/* More than the first allocation (16), each a copy of what it was given. */
	for (int i = 0; i < 40; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,ou=New Branch,dc=example,dc=com", i);
		uuid_of(i, u);
		ck_assert_int_eq(held_add(&s, u, dn, attrs, i % 8), 0);
	}
	memset(dn, 0, sizeof(dn));
	memset(attrs, 0, sizeof(attrs));
	ck_assert_uint_eq(s.n, 40);
	size_t bytes = s.bytes;
	/* The third out: the others keep their order. */
	struct held_entry e;
	held_take(&s, 2, &e);
	ck_assert_str_eq(e.dn, "uid=u2,ou=New Branch,dc=example,dc=com");
	ck_assert_uint_eq(e.attrslen, 2);
	ck_assert_int_eq(memcmp(e.attrs, "ab", 2), 0);
	ck_assert_int_eq(e.uuid[0], 2);
	ck_assert_uint_eq(s.bytes, bytes - strlen(e.dn) - 2);
	held_entry_free(&e);
	ck_assert_ptr_null(e.dn);
	ck_assert_uint_eq(s.n, 39);
	ck_assert_int_eq(s.v[2].uuid[0], 3);
	ck_assert_str_eq(s.v[38].dn, "uid=u39,ou=New Branch,dc=example,dc=com");
	/* An entry with no attributes at all is held too. */
	uuid_of(99, u);
	ck_assert_int_eq(held_add(&s, u, "cn=x,dc=example,dc=com", NULL, 0), 0);
	ck_assert_uint_eq(s.v[39].attrslen, 0);
	held_clear(&s);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_uint_eq(s.bytes, 0);
	ck_assert_ptr_null(s.v);
	/* Reusable after a clear. */
	ck_assert_int_eq(held_add(&s, u, "cn=y,dc=example,dc=com", attrs, 1), 0);
	ck_assert_uint_eq(s.n, 1);
	held_clear(&s);
}
END_TEST

/* take for held_sweep: the entries whose first uuid byte is in the set *arg (a bitmap of
 * 64), and a stop (-1) at the one numbered 63. */
static int take_some(void *arg, struct held_entry *e)
{
	const unsigned long long *want = arg;
	if (e->uuid[0] == 63)
		return -1;
	return (int)((*want >> e->uuid[0]) & 1);
}

START_TEST(sweep_takes_in_one_pass_keeping_order)
{
	struct held_set s = {0};
	char dn[64];
	unsigned char u[SYNC_UUID_LEN];
	for (int i = 0; i < 40; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,dc=example,dc=com", i);
		uuid_of(i, u);
		ck_assert_int_eq(held_add(&s, u, dn, (const unsigned char *)"abc", 3), 0);
	}
	size_t bytes = s.bytes, gone = 0;
	for (int i = 0; i < 20; i += 2) {
		snprintf(dn, sizeof(dn), "uid=u%d,dc=example,dc=com", i);
		gone += strlen(dn) + 3;
	}
	/* the even ones under 20 taken (10 entries), the rest kept in order */
	unsigned long long want = 0;
	for (int i = 0; i < 20; i += 2)
		want |= 1ull << i;
	ck_assert_int_eq(held_sweep(&s, take_some, &want), 10);
	ck_assert_uint_eq(s.n, 30);
	ck_assert_uint_eq(s.bytes, bytes - gone);
	int expect[30], k = 0;
	for (int i = 0; i < 40; i++)
		if (i >= 20 || i % 2)
			expect[k++] = i;
	for (int i = 0; i < 30; i++)
		ck_assert_int_eq(s.v[i].uuid[0], expect[i]);
	/* a stop keeps the entries from there on, after those kept before it */
	uuid_of(63, u);
	ck_assert_int_eq(held_add(&s, u, "uid=stop,dc=example,dc=com", NULL, 0), 0);
	uuid_of(50, u);
	ck_assert_int_eq(held_add(&s, u, "uid=after,dc=example,dc=com", NULL, 0), 0);
	want = 1ull << 21; /* u21 taken, then the stop */
	ck_assert_int_eq(held_sweep(&s, take_some, &want), -1);
	ck_assert_uint_eq(s.n, 31);
	ck_assert_int_eq(s.v[0].uuid[0], 1);
	ck_assert_int_eq(s.v[28].uuid[0], 39);
	ck_assert_int_eq(s.v[29].uuid[0], 63);
	ck_assert_int_eq(s.v[30].uuid[0], 50);
	held_clear(&s);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("replica_held");
	TCase *tc = tcase_create("replica_held");
	tcase_add_test(tc, entries_are_copies_taken_in_order);
	tcase_add_test(tc, sweep_takes_in_one_pass_keeping_order);
	suite_add_tcase(su, tc);
	return check_run(su);
}
