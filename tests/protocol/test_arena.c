/* Unit tests for protocol/arena.c: alignment, growth, a caller's buffer, reset, take, recycle. */
#include <check.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "protocol/arena.h"
#include "tests/check_run.h"

static bool aligned(const void *p)
{
	return (uintptr_t)p % alignof(max_align_t) == 0;
}

START_TEST(pieces_aligned_and_apart)
{
	struct arena a = {0};
	unsigned char *prev = NULL;
	size_t prev_n = 0;
	/* Odd sizes, past several blocks: aligned, and no piece overlaps the one before. */
	for (size_t i = 0; i < 500; i++) {
		size_t n = 1 + (i * 37) % 300;
		unsigned char *p = arena_alloc(&a, n);
		ck_assert_ptr_nonnull(p);
		ck_assert(aligned(p));
		memset(p, (int)i, n);
		if (prev)
			ck_assert(p >= prev + prev_n || p + n <= prev);
		prev = p;
		prev_n = n;
	}
	unsigned char *big = arena_alloc(&a, 1 << 20); /* larger than any block */
	ck_assert_ptr_nonnull(big);
	memset(big, 1, 1 << 20);
	arena_free(&a);
	ck_assert_ptr_null(a.blocks);
}
END_TEST

START_TEST(strdup_terminates)
{
	struct arena a = {0};
	char *s = arena_strdup(&a, "uid=alice", 3);
	ck_assert_str_eq(s, "uid");
	ck_assert_str_eq(arena_strdup(&a, NULL, 0), "");
	arena_free(&a);
}
END_TEST

START_TEST(caller_buffer_first)
{
	unsigned char space[256];
	struct arena a;
	arena_init(&a, space + 1, sizeof(space) - 1); /* unaligned on purpose */
	unsigned char *p = arena_alloc(&a, 100);
	ck_assert(p > space && p + 100 <= space + sizeof(space));
	ck_assert(aligned(p));
	ck_assert_ptr_null(a.blocks); /* no malloc yet */
	unsigned char *q = arena_alloc(&a, 200);
	ck_assert(q < space || q >= space + sizeof(space)); /* did not fit: a block */
	ck_assert_ptr_nonnull(a.blocks);
	arena_free(&a);
}
END_TEST

START_TEST(reset_keeps_one_block)
{
	struct arena a = {0};
	for (int i = 0; i < 10; i++)
		ck_assert_ptr_nonnull(arena_alloc(&a, ARENA_BLOCK));
	void *newest = a.blocks;
	arena_reset(&a); /* the newest (largest) block stays; the next pieces come from it */
	ck_assert_ptr_eq(a.blocks, newest);
	unsigned char *again = arena_alloc(&a, ARENA_BLOCK);
	ck_assert_ptr_nonnull(again);
	ck_assert_ptr_eq(a.blocks, newest);
	arena_free(&a);
}
END_TEST

START_TEST(take_and_recycle)
{
	struct arena worker = {0}, search = {0};
	char *s = arena_strdup(&worker, "filter", 6);
	arena_take(&search, &worker);
	ck_assert_ptr_null(worker.blocks);
	ck_assert_str_eq(s, "filter"); /* pieces keep their address */
	/* The worker decodes another request meanwhile: a block of its own. */
	ck_assert_ptr_nonnull(arena_alloc(&worker, 8));
	arena_recycle(&worker, &search); /* the worker has one: the search's is freed */
	ck_assert_ptr_null(search.blocks);
	arena_free(&worker);
	/* The worker has none: the search's block comes back to it. */
	arena_strdup(&worker, "x", 1);
	arena_take(&search, &worker);
	void *lent = search.blocks;
	arena_recycle(&worker, &search);
	ck_assert_ptr_eq(worker.blocks, lent);
	ck_assert_ptr_null(search.blocks);
	arena_free(&worker);
}
END_TEST

static Suite *arena_suite(void)
{
	Suite *s = suite_create("arena");
	TCase *tc = tcase_create("arena");
	tcase_add_test(tc, pieces_aligned_and_apart);
	tcase_add_test(tc, strdup_terminates);
	tcase_add_test(tc, caller_buffer_first);
	tcase_add_test(tc, reset_keeps_one_block);
	tcase_add_test(tc, take_and_recycle);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(arena_suite());
}
