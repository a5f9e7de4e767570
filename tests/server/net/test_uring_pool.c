/* server/net/engine_uring_table.c: the io_uring engine's pool of spare send buffers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "server/net/engine_uring.h"
#include "tests/check_run.h"

/* b with capacity cap and some bytes, as a staged buffer after a send completed. */
static struct buf grown(size_t cap)
{
	struct buf b = {0};
	ck_assert_int_eq(buf_reserve(&b, cap), 0);
	ck_assert_uint_eq(b.cap, cap);
	memset(b.data, 'x', cap);
	b.len = cap;
	b.off = cap;
	return b;
}

START_TEST(a_large_staged_buffer_is_kept_for_the_next_send)
{
	/* A 64 KiB send (batch_bytes) grows a staged buffer to 256 KiB: the next response of a
	 * large search takes it back instead of faulting in new pages. */
	struct uring_state s = {0};
	struct buf b = grown(ENGINE_SEND_HELD);
	unsigned char *data = b.data;
	uring_pool_put(&s, &b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.cap, 0);
	ck_assert_int_eq(s.npool, 1);
	ck_assert_uint_eq(s.pool_bytes, ENGINE_SEND_HELD);
	struct buf again = {0};
	uring_pool_get(&s, &again);
	ck_assert_ptr_eq(again.data, data);
	ck_assert_uint_eq(again.cap, ENGINE_SEND_HELD);
	ck_assert_uint_eq(buf_pending(&again), 0);
	ck_assert_int_eq(s.npool, 0);
	ck_assert_uint_eq(s.pool_bytes, 0);
	buf_free(&again);
}
END_TEST

START_TEST(the_pool_holds_at_most_its_bytes)
{
	struct uring_state s = {0};
	int fit = (int)(URING_POOL_BYTES / ENGINE_SEND_HELD);
	for (int i = 0; i < fit + 3; i++) {
		struct buf b = grown(ENGINE_SEND_HELD);
		uring_pool_put(&s, &b);
		ck_assert_ptr_null(b.data); /* kept or freed, never left to the socket */
	}
	ck_assert_int_eq(s.npool, fit);
	ck_assert_uint_eq(s.pool_bytes, URING_POOL_BYTES);
	/* Larger than a staged buffer gets: freed, whatever room is left. */
	struct buf small = grown(4096), big = grown(2 * ENGINE_SEND_HELD);
	uring_pool_put(&s, &small); /* no room left either */
	uring_pool_put(&s, &big);
	ck_assert_int_eq(s.npool, fit);
	struct buf b = {0};
	uring_pool_get(&s, &b);
	ck_assert_uint_eq(s.pool_bytes, URING_POOL_BYTES - ENGINE_SEND_HELD);
	struct buf big2 = grown(2 * ENGINE_SEND_HELD);
	uring_pool_put(&s, &big2);
	ck_assert_int_eq(s.npool, fit - 1);
	ck_assert_ptr_null(big2.data);
	/* A buffer that already has capacity is left as it is. */
	uring_pool_get(&s, &b);
	ck_assert_int_eq(s.npool, fit - 1);
	buf_free(&b);
	while (s.npool > 0)
		buf_free(&s.pool[--s.npool]);
}
END_TEST

START_TEST(a_buffer_within_a_size)
{
	/* engine_send_buf hands a connection back a buffer no larger than the one it took: a
	 * lookup's connection does not keep a large search's 256 KiB. */
	struct uring_state s = {0};
	struct buf big = grown(ENGINE_SEND_HELD), small = grown(4096);
	unsigned char *small_data = small.data;
	uring_pool_put(&s, &small);
	uring_pool_put(&s, &big); /* the last put: uring_pool_get would give this one */
	struct buf b = {0};
	uring_pool_get_within(&s, &b, 8192);
	ck_assert_ptr_eq(b.data, small_data);
	ck_assert_int_eq(s.npool, 1);
	ck_assert_uint_eq(s.pool_bytes, ENGINE_SEND_HELD);
	struct buf none = {0};
	uring_pool_get_within(&s, &none, 8192); /* only the large one is left */
	ck_assert_ptr_null(none.data);
	ck_assert_int_eq(s.npool, 1);
	uring_pool_get_within(&s, &b, ENGINE_SEND_HELD); /* b has capacity: left as it is */
	ck_assert_ptr_eq(b.data, small_data);
	ck_assert_int_eq(s.npool, 1);
	buf_free(&b);
	while (s.npool > 0)
		buf_free(&s.pool[--s.npool]);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("uring_pool");
	TCase *tc = tcase_create("pool");
	tcase_add_test(tc, a_large_staged_buffer_is_kept_for_the_next_send);
	tcase_add_test(tc, the_pool_holds_at_most_its_bytes);
	tcase_add_test(tc, a_buffer_within_a_size);
	suite_add_tcase(suite, tc);
	return check_run(suite);
}
