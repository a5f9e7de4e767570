/*
 * Unit tests for storage/key_memo.c: what is put is got back by its bytes and table
 * only, a slot taken by another key answers no, and readers racing writers never get
 * another key's ID.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/key_memo.h"
#include "tests/check_run.h"

/* Keys as a map would hold them: bytes that stay where they are. */
#define NKEYS 4096
static char map_keys[NKEYS][16];

static void fill_keys(void)
{
	for (int i = 0; i < NKEYS; i++)
		snprintf(map_keys[i], sizeof(map_keys[i]), "user.%d", i);
}

START_TEST(put_then_get)
{
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, 100, SIZE_MAX), 0);
	uint32_t id = 0;
	char asked[16] = "user.17"; /* the same bytes elsewhere: the value a filter holds */
	ck_assert(!key_memo_get(&m, 3, asked, strlen(asked), &id));
	key_memo_put(&m, 3, map_keys[17], strlen(map_keys[17]), 1017);
	ck_assert(key_memo_get(&m, 3, asked, strlen(asked), &id));
	ck_assert_uint_eq(id, 1017);
	/* Another table, a prefix, a longer key, another key of the same length: no. */
	ck_assert(!key_memo_get(&m, 4, asked, strlen(asked), &id));
	ck_assert(!key_memo_get(&m, 3, asked, strlen(asked) - 1, &id));
	ck_assert(!key_memo_get(&m, 3, "user.170", 8, &id));
	ck_assert(!key_memo_get(&m, 3, "user.18", 7, &id));
	key_memo_free(&m);
	ck_assert_ptr_null(m.slot);
}
END_TEST

START_TEST(crowded_slots_never_answer_wrong)
{
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, 1, SIZE_MAX), 0); /* 64 slots for 4,096 keys */
	ck_assert_uint_eq(2 * (m.mask + 1), 64);
	int found = 0;
	for (int i = 0; i < NKEYS; i++) {
		key_memo_put(&m, 1, map_keys[i], strlen(map_keys[i]), (uint32_t)i);
		uint32_t id;
		/* the key just put is there, whatever it replaced */
		ck_assert(key_memo_get(&m, 1, map_keys[i], strlen(map_keys[i]), &id));
		ck_assert_uint_eq(id, (uint32_t)i);
	}
	for (int i = 0; i < NKEYS; i++) {
		uint32_t id;
		if (key_memo_get(&m, 1, map_keys[i], strlen(map_keys[i]), &id)) {
			ck_assert_uint_eq(id, (uint32_t)i);
			found++;
		}
	}
	ck_assert_int_gt(found, 0);
	ck_assert_int_le(found, 64);
	key_memo_free(&m);
}
END_TEST

/* 20 keys in 32 pairs: some share a pair (as 20 keys in 64 single slots would collide),
 * none of these three to a pair, so every one stays. */
START_TEST(pairs_keep_colliding_keys)
{
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, 1, SIZE_MAX), 0);
	for (int i = 0; i < 20; i++)
		key_memo_put(&m, 1, map_keys[i], strlen(map_keys[i]), (uint32_t)i);
	for (int i = 0; i < 20; i++) {
		uint32_t id;
		ck_assert_msg(key_memo_get(&m, 1, map_keys[i], strlen(map_keys[i]), &id), "%s lost",
		              map_keys[i]);
		ck_assert_uint_eq(id, (uint32_t)i);
	}
	key_memo_free(&m);
}
END_TEST

START_TEST(sizes_and_limits)
{
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, 10000, SIZE_MAX), 0);
	/* slots: the power of two at or above twice the keys, in pairs */
	ck_assert_uint_eq(2 * (m.mask + 1), 32768);
	key_memo_free(&m);
	ck_assert_int_eq(key_memo_init(&m, (size_t)1 << 30, SIZE_MAX), 0);
	ck_assert_uint_eq(2 * (m.mask + 1), KEY_MEMO_UNBOUNDED_SLOTS);
	key_memo_free(&m);
	/* a bound in bytes past the unbounded cap: as many slots as it holds */
	ck_assert_int_eq(key_memo_init(&m, (size_t)1 << 30, (size_t)128 << 20), 0);
	ck_assert_uint_eq(2 * (m.mask + 1), ((size_t)128 << 20) / sizeof(struct key_memo_slot));
	key_memo_free(&m);
	/* and never past KEY_MEMO_MAX_SLOTS (counted, not mapped: 4 GiB) */
	ck_assert_uint_eq(key_memo_bytes_for((size_t)1 << 30, KEY_MEMO_MAX_SLOTS),
	                  KEY_MEMO_MAX_SLOTS * sizeof(struct key_memo_slot));
	ck_assert_int_eq(key_memo_init(&m, (size_t)1 << 30, (size_t)1 << 20), 0);
	/* A key too long for a slot's length, or a table number past 16 bits: not kept. */
	size_t big = 70000;
	char *key = calloc(1, big);
	uint32_t id;
	key_memo_put(&m, 1, key, big, 5);
	ck_assert(!key_memo_get(&m, 1, key, big, &id));
	key_memo_put(&m, 0x10000, map_keys[1], strlen(map_keys[1]), 5);
	ck_assert(!key_memo_get(&m, 0x10000, map_keys[1], strlen(map_keys[1]), &id));
	free(key);
	key_memo_free(&m);
}
END_TEST

/* Two writers and two readers on 64 slots: a reader's hit is always the key's own ID. */
struct racer {
	struct key_memo *m;
	int first, wrong, hits;
};

static void *write_keys(void *arg)
{
	struct racer *r = arg;
	for (int round = 0; round < 1000; round++)
		for (int i = r->first; i < NKEYS; i += 2)
			key_memo_put(r->m, 1, map_keys[i], strlen(map_keys[i]), (uint32_t)i);
	return NULL;
}

static void *read_keys(void *arg)
{
	struct racer *r = arg;
	for (int round = 0; round < 1000; round++)
		for (int i = 0; i < NKEYS; i++) {
			uint32_t id;
			if (key_memo_get(r->m, 1, map_keys[i], strlen(map_keys[i]), &id)) {
				r->hits++;
				if (id != (uint32_t)i)
					r->wrong++;
			}
		}
	return NULL;
}

START_TEST(readers_racing_writers)
{
	struct key_memo m;
	ck_assert_int_eq(key_memo_init(&m, 1, SIZE_MAX), 0);
	struct racer r[4] = {{&m, 0, 0, 0}, {&m, 1, 0, 0}, {&m, 0, 0, 0}, {&m, 0, 0, 0}};
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, i < 2 ? write_keys : read_keys, &r[i]),
		                 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(r[2].wrong + r[3].wrong, 0);
	key_memo_free(&m);
}
END_TEST

static Suite *key_memo_suite(void)
{
	Suite *s = suite_create("key_memo");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, fill_keys, NULL);
	tcase_add_test(tc, put_then_get);
	tcase_add_test(tc, crowded_slots_never_answer_wrong);
	tcase_add_test(tc, pairs_keep_colliding_keys);
	tcase_add_test(tc, sizes_and_limits);
	tcase_add_test(tc, readers_racing_writers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(key_memo_suite());
}
