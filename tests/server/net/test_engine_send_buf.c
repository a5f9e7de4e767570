/*
 * engine_send_buf (server/net/engine.h) on both engines, over a real socket pair: the
 * bytes taken reach the peer whole and in order, what was not taken stays in the
 * caller's buffer, and the buffer stays usable. On io_uring the engine may take the
 * buffer's storage instead of copying it (engine_uring.c, ur_send_buf), so these are
 * the cases where that could lose, repeat or reorder bytes: a whole buffer, a buffer
 * whose tail is held back (a batch's short segment), and a second send while the first
 * is still staged.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/net/engine.h"
#include "tests/server/net/engine_rig.h"
#include "tests/check_run.h"

/* b holds n bytes counting up from first (mod 251), after off consumed ones. */
static void fill(struct buf *b, size_t off, size_t n, unsigned first)
{
	ck_assert_int_eq(buf_reserve(b, off + n), 0);
	b->off = b->len;
	for (size_t i = 0; i < off + n; i++)
		b->data[b->len + i] = (unsigned char)((first + i) % 251);
	b->len += off + n;
	b->off += off;
}

/* Reads exactly n bytes from the peer, letting the engine's loop run between tries
 * (io_uring sends only when the loop waits), and checks they count up from first. */
static void expect(struct rig *r, size_t n, unsigned first)
{
	unsigned char *got = malloc(n);
	ck_assert_ptr_nonnull(got);
	size_t have = 0;
	for (int tries = 0; have < n && tries < 2000; tries++) {
		r->nw.engine->wait(r->w, 1000000);
		r->nw.engine->dispatch(r->w, &upcalls); /* io_uring: a send's completion */
		ssize_t k = recv(r->peer, got + have, n - have, 0);
		if (k > 0)
			have += (size_t)k;
		else
			ck_assert(k < 0 && errno == EAGAIN);
	}
	ck_assert_uint_eq(have, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(got[i], (first + i) % 251);
	ck_assert_int_eq(recv(r->peer, got, 1, MSG_DONTWAIT), -1); /* nothing more */
	free(got);
}

static const struct engine_ops *const engines[] = {&engine_epoll, &engine_uring};

START_TEST(a_whole_buffer_arrives_once_and_the_buffer_is_reusable)
{
	struct rig r;
	if (!rig_open(&r, engines[_i]))
		return; /* io_uring forbidden here (said on stderr): epoll's run still checks */
	struct buf b = {0};
	fill(&b, 7, 3000, 1);
	ck_assert_int_eq(engine_send_buf(r.w, r.fd, &b, 3000, 0), 3000);
	ck_assert_uint_eq(buf_pending(&b), 0);
	fill(&b, 0, 500, 9); /* written again at once, before the first left */
	expect(&r, 3000, 8);
	ck_assert_int_eq(engine_send_buf(r.w, r.fd, &b, 500, 0), 500);
	expect(&r, 500, 9);
	buf_free(&b);
	rig_close(&r);
}
END_TEST

START_TEST(a_held_back_tail_stays_with_the_caller)
{
	struct rig r;
	if (!rig_open(&r, engines[_i]))
		return;
	struct buf b = {0};
	fill(&b, 0, 5000, 3);
	ck_assert_int_eq(engine_send_buf(r.w, r.fd, &b, 4000, MSG_MORE), 4000);
	ck_assert_uint_eq(buf_pending(&b), 1000); /* the last 1000 bytes, as they were */
	for (size_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(b.data[b.off + i], (3 + 4000 + i) % 251);
	expect(&r, 4000, 3);
	ck_assert_int_eq(engine_send_buf(r.w, r.fd, &b, 1000, 0), 1000);
	expect(&r, 1000, 3 + 4000);
	buf_free(&b);
	rig_close(&r);
}
END_TEST

START_TEST(sends_before_the_loop_runs_keep_their_order)
{
	struct rig r;
	if (!rig_open(&r, engines[_i]))
		return;
	struct buf a = {0}, b = {0};
	fill(&a, 0, 2000, 0);
	fill(&b, 0, 2000, 2000 % 251);
	ck_assert_int_eq(engine_send_buf(r.w, r.fd, &a, 2000, MSG_MORE), 2000);
	ck_assert_int_eq(engine_send_buf(r.w, r.fd, &b, 2000, 0), 2000); /* joins the first */
	ck_assert_uint_eq(buf_pending(&a) + buf_pending(&b), 0);
	expect(&r, 4000, 0);
	buf_free(&a);
	buf_free(&b);
	rig_close(&r);
}
END_TEST

START_TEST(a_send_taken_while_another_waits_in_the_kernel_follows_it)
{
	struct rig r;
	if (!rig_open(&r, engines[_i]))
		return;
	/* A small send buffer, and more than it holds: the first send waits in the kernel
	 * (io_uring: MSG_WAITALL) while the second is taken. */
	int small = 4096;
	ck_assert_int_eq(setsockopt(r.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	size_t first = 200000, second = 3000;
	struct buf b = {0};
	fill(&b, 0, first, 5);
	ssize_t n = engine_send_buf(r.w, r.fd, &b, first, 0); /* epoll takes a part */
	ck_assert_int_gt(n, 0);
	size_t sent = (size_t)n;
	r.nw.engine->wait(r.w, 0); /* io_uring: the send goes into the kernel, and waits */
	r.nw.engine->dispatch(r.w, &upcalls);
	struct buf c = {0};
	fill(&c, 0, second, (unsigned)((5 + first) % 251));
	unsigned char *drain = malloc(first + second);
	ck_assert_ptr_nonnull(drain);
	size_t have = 0;
	bool second_taken = false;
	for (int tries = 0; have < first + second && tries < 5000; tries++) {
		if (sent < first) {
			n = engine_send_buf(r.w, r.fd, &b, first - sent, 0);
			if (n > 0)
				sent += (size_t)n;
		} else if (!second_taken) {
			ck_assert_int_eq(engine_send_buf(r.w, r.fd, &c, second, 0),
			                 (ssize_t)second);
			second_taken = true;
		}
		r.nw.engine->wait(r.w, 1000000);
		r.nw.engine->dispatch(r.w, &upcalls);
		ssize_t k = recv(r.peer, drain + have, first + second - have, MSG_DONTWAIT);
		if (k > 0)
			have += (size_t)k;
	}
	ck_assert_uint_eq(have, first + second);
	for (size_t i = 0; i < first + second; i++)
		ck_assert_uint_eq(drain[i], (5 + i) % 251);
	free(drain);
	buf_free(&b);
	buf_free(&c);
	rig_close(&r);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("engine_send_buf");
	TCase *tc = tcase_create("send_buf");
	tcase_add_loop_test(tc, a_whole_buffer_arrives_once_and_the_buffer_is_reusable, 0, 2);
	tcase_add_loop_test(tc, a_held_back_tail_stays_with_the_caller, 0, 2);
	tcase_add_loop_test(tc, sends_before_the_loop_runs_keep_their_order, 0, 2);
	tcase_add_loop_test(tc, a_send_taken_while_another_waits_in_the_kernel_follows_it, 0, 2);
	suite_add_tcase(suite, tc);
	return check_run(suite);
}
