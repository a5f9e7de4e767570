/*
 * Unit tests for storage/memo_split.h, how memo_bytes is split between the record memo and
 * the key memo, at the sizes of directories too large to import in a test: 10,000 and
 * 10,000,000 entries, with no bound, the default 64m, 256m and 1400m, and with the key
 * memo then made from its share (key_memo_init takes what the keys need, no more).
 */
#include <check.h>
#include <stdint.h>

#include "storage/db.h"
#include "storage/key_memo.h"
#include "storage/memo_split.h"
#include "tests/check_run.h"

#define MIB ((size_t)1 << 20)

/* A directory of n entries: its direct array's bytes and the key memo it wants unbounded. */
static size_t direct_of(size_t n)
{
	return (n + 1) * sizeof(struct db_record_at);
}
static size_t keys_of(size_t n)
{
	return key_memo_bytes_for(n * 2, KEY_MEMO_UNBOUNDED_SLOTS);
}

START_TEST(no_bound)
{
	size_t rec, key, n = 10000000;
	memo_split(SIZE_MAX, direct_of(n), true, keys_of(n), &rec, &key);
	ck_assert_uint_eq(rec, direct_of(n));
	ck_assert_uint_eq(key, 32 * MIB); /* unlimited keeps the key memo's 32 MiB */
}
END_TEST

START_TEST(ten_million_entries)
{
	size_t rec, key, n = 10000000;
	/* the default: half each, the records in a table */
	memo_split(64 * MIB, direct_of(n), true, keys_of(n), &rec, &key);
	ck_assert_uint_eq(rec, 32 * MIB);
	ck_assert_uint_eq(key, 32 * MIB);
	/* 256m: every record place, and the rest to the keys: 2^21 slots of them */
	memo_split(256 * MIB, direct_of(n), true, keys_of(n), &rec, &key);
	ck_assert_uint_eq(rec, direct_of(n));
	ck_assert_uint_eq(key, 256 * MIB - direct_of(n));
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, n * 2, key), 0);
	ck_assert_uint_eq(m.bytes, 64 * MIB);
	key_memo_free(&m);
	/* 1400m: a key memo of 2^25 slots, room for every uid */
	memo_split(1400 * MIB, direct_of(n), true, keys_of(n), &rec, &key);
	ck_assert_uint_eq(rec, direct_of(n));
	ck_assert_int_eq(key_memo_init(&m, n * 2, key), 0);
	ck_assert_uint_eq(m.bytes, 1024 * MIB);
	key_memo_free(&m);
}
END_TEST

START_TEST(ten_thousand_entries)
{
	size_t rec, key, n = 10000;
	/* the rest of the budget is the key memo's, but it takes only what 20,000 keys need */
	memo_split(64 * MIB, direct_of(n), true, keys_of(n), &rec, &key);
	ck_assert_uint_eq(rec, direct_of(n));
	ck_assert_uint_eq(key, 64 * MIB - direct_of(n));
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, n * 2, key), 0);
	ck_assert_uint_eq(m.bytes, keys_of(n));
	key_memo_free(&m);
	/* 1m: neither fits its half, half each */
	memo_split(MIB, direct_of(65536), true, keys_of(65536), &rec, &key);
	ck_assert_uint_eq(rec, MIB / 2);
	ck_assert_uint_eq(key, MIB / 2);
}
END_TEST

START_TEST(no_direct_array)
{
	/* an ID of UINT32_MAX: no direct array, the table and the keys share the budget */
	size_t rec, key;
	memo_split(64 * MIB, SIZE_MAX, false, 32 * MIB, &rec, &key);
	ck_assert_uint_eq(rec, 32 * MIB);
	ck_assert_uint_eq(key, 32 * MIB);
	memo_split(16 * MIB, SIZE_MAX, false, 32 * MIB, &rec, &key);
	ck_assert_uint_eq(rec + key, 16 * MIB);
	ck_assert_uint_eq(rec, 8 * MIB);
}
END_TEST

static Suite *memo_split_suite(void)
{
	Suite *s = suite_create("memo_split");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, no_bound);
	tcase_add_test(tc, ten_million_entries);
	tcase_add_test(tc, ten_thousand_entries);
	tcase_add_test(tc, no_direct_array);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(memo_split_suite());
}
