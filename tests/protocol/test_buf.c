/* Unit tests for protocol/buf.c: appending, consuming, compacting, growing, escaping. */
#include <check.h>
#include <string.h>

#include "protocol/buf.h"
#include "tests/check_run.h"

START_TEST(buf_append_consume_compact)
{
	struct buf b = {0};
	ck_assert_int_eq(buf_append(&b, "hello", 5), 0);
	ck_assert_int_eq(buf_append(&b, "world", 5), 0);
	ck_assert_uint_eq(buf_pending(&b), 10);
	ck_assert_mem_eq(b.data + b.off, "helloworld", 10);

	buf_consume(&b, 3);
	ck_assert_uint_eq(b.off, 3);
	ck_assert_uint_eq(buf_pending(&b), 7);
	ck_assert_mem_eq(b.data + b.off, "loworld", 7);

	buf_compact(&b);
	ck_assert_uint_eq(b.off, 0);
	ck_assert_uint_eq(b.len, 7);
	ck_assert_mem_eq(b.data, "loworld", 7);

	buf_compact(&b); /* nothing to do */
	ck_assert_uint_eq(b.len, 7);
	ck_assert_mem_eq(b.data, "loworld", 7);

	ck_assert_int_eq(buf_append(&b, "!", 1), 0);
	ck_assert_mem_eq(b.data + b.off, "loworld!", 8);

	/* Consuming everything resets the buffer to empty. */
	buf_consume(&b, 8);
	ck_assert_uint_eq(b.off, 0);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(buf_pending(&b), 0);
	ck_assert_int_eq(buf_append(&b, "x", 1), 0);
	ck_assert_uint_eq(b.off, 0);
	ck_assert_uint_eq(b.data[0], 'x');
	buf_free(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(b.cap, 0);
}
END_TEST

START_TEST(buf_append_zero_and_grow)
{
	struct buf b = {0};
	ck_assert_int_eq(buf_append(&b, NULL, 0), 0);
	ck_assert_uint_eq(b.len, 0);
	/* Grow far past the initial capacity, one byte pattern at a time. */
	unsigned char chunk[1000];
	for (int round = 0; round < 50; round++) {
		memset(chunk, round, sizeof(chunk));
		ck_assert_int_eq(buf_append(&b, chunk, sizeof(chunk)), 0);
	}
	ck_assert_uint_eq(b.len, 50000);
	ck_assert_uint_ge(b.cap, 50000);
	for (size_t i = 0; i < b.len; i++)
		ck_assert_uint_eq(b.data[i], i / 1000);
	buf_free(&b);
}
END_TEST

START_TEST(buf_reserve_reuses_consumed_space)
{
	struct buf b = {0};
	unsigned char big[4000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)i;
	ck_assert_int_eq(buf_append(&b, big, sizeof(big)), 0);
	size_t cap = b.cap;
	buf_consume(&b, 3900); /* 100 pending at the end */
	/* Room exists only if the pending bytes move to the front. */
	ck_assert_int_eq(buf_reserve(&b, cap - 100), 0);
	ck_assert_uint_ge(b.cap - b.len, cap - 100);
	ck_assert_uint_eq(buf_pending(&b), 100);
	ck_assert_mem_eq(b.data + b.off, big + 3900, 100);
	ck_assert_int_eq(buf_append(&b, big, cap - 100), 0);
	ck_assert_uint_eq(buf_pending(&b), cap);
	ck_assert_mem_eq(b.data + b.off, big + 3900, 100);
	ck_assert_mem_eq(b.data + b.off + 100, big, cap - 100);
	buf_free(&b);
}
END_TEST

START_TEST(buf_append_after_partial_consume_keeps_order)
{
	/* A stream pattern: append, consume some, append more, many times. */
	struct buf b = {0};
	unsigned next_in = 0, next_out = 0;
	for (int round = 0; round < 2000; round++) {
		unsigned char tmp[37];
		for (size_t i = 0; i < sizeof(tmp); i++)
			tmp[i] = (unsigned char)(next_in++ % 251);
		ck_assert_int_eq(buf_append(&b, tmp, sizeof(tmp)), 0);
		size_t take = (size_t)(round % 5) * 9;
		if (take > buf_pending(&b))
			take = buf_pending(&b);
		for (size_t i = 0; i < take; i++)
			ck_assert_uint_eq(b.data[b.off + i], next_out++ % 251);
		buf_consume(&b, take);
		if (round % 7 == 0)
			buf_compact(&b);
	}
	ck_assert_uint_eq(buf_pending(&b), next_in - next_out);
	for (size_t i = 0; i < buf_pending(&b); i++)
		ck_assert_uint_eq(b.data[b.off + i], (next_out + i) % 251);
	buf_free(&b);
}
END_TEST

START_TEST(buf_append_escaped_hex)
{
	/* Control bytes, DEL, the backslash and the special bytes become \XX; the rest stays. */
	struct buf b = {0};
	buf_append_escaped(&b, "a\nb\\c(d)\x7f\0e", 11, "()");
	ck_assert_uint_eq(b.len, 23);
	ck_assert_mem_eq(b.data, "a\\0ab\\5cc\\28d\\29\\7f\\00e", 23);
	buf_free(&b);
}
END_TEST

static Suite *buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");
	tcase_add_test(tc, buf_append_consume_compact);
	tcase_add_test(tc, buf_append_zero_and_grow);
	tcase_add_test(tc, buf_reserve_reuses_consumed_space);
	tcase_add_test(tc, buf_append_after_partial_consume_keeps_order);
	tcase_add_test(tc, buf_append_escaped_hex);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(buf_suite());
}
