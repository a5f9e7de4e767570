/*
 * Unit tests for storage/record_memo.c, the bounded table of records' places: what is put
 * is got back by its ID only; filled past its slots it evicts and never answers with
 * another ID's record; it takes no more bytes than it is given; readers racing writers
 * never get another ID's record (run it under TSAN=1 too).
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/record_memo.h"
#include "tests/check_run.h"

/* Records as a map would hold them: bytes that stay where they are, each naming its ID. */
#define NRECORDS 8192
static char records[NRECORDS][16];

static void fill_records(void)
{
	for (int i = 0; i < NRECORDS; i++)
		snprintf(records[i], sizeof(records[i]), "record %d", i);
}

/* The type summary put gives each ID, its own, so that a mixed-up slot shows. */
static uint32_t types_of(uint32_t id)
{
	return id * 2 + 1;
}

static void put(const struct record_memo *m, uint32_t id)
{
	record_memo_put(m, id, records[id], (uint32_t)strlen(records[id]), types_of(id));
}

/* Whether m answers for id, and then with id's own record (else the test fails). */
static bool got(const struct record_memo *m, uint32_t id)
{
	const void *data;
	uint32_t size, types;
	if (!record_memo_get(m, id, &data, &size, &types))
		return false;
	ck_assert_msg(data == records[id] && size == strlen(records[id]) && types == types_of(id),
	              "ID %u answered with another record", id);
	return true;
}

START_TEST(put_then_get)
{
	struct record_memo m;
	ck_assert_int_eq(record_memo_init(&m, 4096), 0);
	ck_assert(!got(&m, 17));
	put(&m, 17);
	ck_assert(got(&m, 17));
	ck_assert(!got(&m, 18));
	ck_assert(!got(&m, 17 + (uint32_t)(2 * (m.mask + 1)))); /* another ID, maybe its pair */
	record_memo_free(&m);
	ck_assert_ptr_null(m.slot);
}
END_TEST

START_TEST(sizes_within_the_bytes_given)
{
	struct record_memo m;
	/* a power of two of slots, at most the bytes given */
	size_t sizes[] = {64, 100, 4096, 5000, 1 << 20, (1 << 20) + 31, (size_t)3 << 20};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ck_assert_int_eq(record_memo_init(&m, sizes[i]), 0);
		size_t slots = 2 * (m.mask + 1);
		ck_assert_uint_eq(m.bytes, slots * RECORD_MEMO_SLOT_BYTES);
		ck_assert_uint_le(m.bytes, sizes[i]);
		ck_assert_uint_gt(2 * m.bytes, sizes[i]); /* the largest that fits */
		ck_assert_uint_eq(slots & (slots - 1), 0);
		record_memo_free(&m);
	}
	/* less than a pair: no table */
	ck_assert_int_eq(record_memo_init(&m, 2 * RECORD_MEMO_SLOT_BYTES - 1), 0);
	ck_assert_ptr_null(m.slot);
	ck_assert_uint_eq(m.bytes, 0);
	ck_assert_int_eq(record_memo_init(&m, 0), 0);
	ck_assert_ptr_null(m.slot);
}
END_TEST

/* 64 slots, 8,192 IDs put: at most 64 answer, each with its own record, and the last ones
 * put are there. */
START_TEST(filled_past_its_slots_evicts)
{
	struct record_memo m;
	ck_assert_int_eq(record_memo_init(&m, 64 * RECORD_MEMO_SLOT_BYTES), 0);
	ck_assert_uint_eq(2 * (m.mask + 1), 64);
	for (uint32_t id = 0; id < NRECORDS; id++)
		put(&m, id);
	int answered = 0;
	for (uint32_t id = 0; id < NRECORDS; id++)
		answered += got(&m, id);
	ck_assert_int_le(answered, 64);
	ck_assert_int_ge(answered, 32); /* every pair holds something */
	ck_assert(got(&m, NRECORDS - 1));
	/* put again, an evicted ID comes back */
	uint32_t gone = 0;
	while (got(&m, gone))
		gone++;
	put(&m, gone);
	ck_assert(got(&m, gone));
	record_memo_free(&m);
}
END_TEST

/* Two IDs of one pair, put by turns with others of that pair between them: the pair's two
 * slots take turns, so the one put just before the last stays too. */
START_TEST(a_pair_keeps_two)
{
	struct record_memo m;
	ck_assert_int_eq(record_memo_init(&m, 16 * RECORD_MEMO_SLOT_BYTES), 0);
	/* IDs sharing a pair with ID 0: in a table holding 0 alone, the one beside it */
	uint32_t same[8], n = 0;
	const void *data;
	uint32_t size, types;
	for (uint32_t id = 1; id < NRECORDS && n < 8; id++) {
		struct record_memo probe;
		ck_assert_int_eq(record_memo_init(&probe, 16 * RECORD_MEMO_SLOT_BYTES), 0);
		put(&probe, 0);
		put(&probe, id);
		for (size_t i = 0; i < 2 * (probe.mask + 1); i += 2)
			if (atomic_load(&probe.slot[i].seq) &&
			    atomic_load(&probe.slot[i].id) == 0 &&
			    atomic_load(&probe.slot[i + 1].seq))
				same[n++] = id;
		record_memo_free(&probe);
	}
	ck_assert_uint_eq(n, 8);
	for (uint32_t i = 0; i < n; i++) {
		put(&m, same[i]);
		ck_assert(got(&m, same[i]));
		if (i > 0)
			ck_assert_msg(got(&m, same[i - 1]), "the one before %u was evicted",
			              same[i]);
		if (i > 1)
			ck_assert(!record_memo_get(&m, same[i - 2], &data, &size, &types));
	}
	record_memo_free(&m);
}
END_TEST

/* Two writers and two readers on 64 slots: a reader's hit is always the ID's own record. */
struct racer {
	struct record_memo *m;
	uint32_t first;
	int wrong, hits;
};

static void *write_records(void *arg)
{
	struct racer *r = arg;
	for (int round = 0; round < 300; round++)
		for (uint32_t id = r->first; id < NRECORDS; id += 2)
			put(r->m, id);
	return NULL;
}

static void *read_records(void *arg)
{
	struct racer *r = arg;
	for (int round = 0; round < 300; round++)
		for (uint32_t id = 0; id < NRECORDS; id++) {
			const void *data;
			uint32_t size, types;
			if (record_memo_get(r->m, id, &data, &size, &types)) {
				r->hits++;
				if (data != records[id] || size != strlen(records[id]) ||
				    types != types_of(id))
					r->wrong++;
			}
		}
	return NULL;
}

START_TEST(readers_racing_writers)
{
	struct record_memo m;
	ck_assert_int_eq(record_memo_init(&m, 64 * RECORD_MEMO_SLOT_BYTES), 0);
	struct racer r[4] = {{&m, 0, 0, 0}, {&m, 1, 0, 0}, {&m, 0, 0, 0}, {&m, 0, 0, 0}};
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(
		    pthread_create(&t[i], NULL, i < 2 ? write_records : read_records, &r[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(r[2].wrong + r[3].wrong, 0);
	ck_assert_int_gt(r[2].hits + r[3].hits, 0);
	record_memo_free(&m);
}
END_TEST

static Suite *record_memo_suite(void)
{
	Suite *s = suite_create("record_memo");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, fill_records, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, put_then_get);
	tcase_add_test(tc, sizes_within_the_bytes_given);
	tcase_add_test(tc, filled_past_its_slots_evicts);
	tcase_add_test(tc, a_pair_keeps_two);
	tcase_add_test(tc, readers_racing_writers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(record_memo_suite());
}
