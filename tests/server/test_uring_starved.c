/*
 * server/net/engine_uring.c when no submission slot can be had: the ring is full and the
 * kernel refuses the submit that would empty it. What wanted a slot then must be done
 * once the kernel takes submissions again, not forgotten: output staged on a socket
 * reaches its peer, and a socket closed while its receive was armed is cancelled and
 * closed (its peer sees the end of the stream). The kernel's refusal is made by pointing
 * the ring's descriptor at nothing for one wait (io_uring_enter fails with EBADF), over
 * a real ring and a real socket pair.
 */
#include <check.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/net/engine.h"
#include "server/net/engine_uring.h"
#include "tests/server/engine_rig.h"
#include "tests/check_run.h"

/* An io_uring rig (engine_rig.h) whose receive is armed. false: io_uring cannot be set
 * up here (said on stderr). */
static bool rig_open_armed(struct rig *r)
{
	if (!rig_open(r, &engine_uring))
		return false;
	engine_uring.wait(r->w, 0); /* the receive goes into the kernel */
	engine_uring.dispatch(r->w, &upcalls);
	return true;
}

static struct uring_state *ring_state(struct rig *r)
{
	return r->nw.engine_state;
}

/* The next wait finds the ring full of no-ops and cannot submit them: whatever it
 * flushes gets no submission slot. */
static void starve_next_wait(struct rig *r)
{
	struct io_uring_sqe *sqe;
	while ((sqe = io_uring_get_sqe(&ring_state(r)->ring))) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, UD(UD_CANCEL, -1));
	}
	int fd = ring_state(r)->ring.enter_ring_fd;
	ring_state(r)->ring.enter_ring_fd = -1;
	engine_uring.wait(r->w, 0); /* fails (EBADF): nothing reaches the kernel */
	ring_state(r)->ring.enter_ring_fd = fd;
	ck_assert(ring_state(r)->starved);
}

/* Runs the loop as the worker would, until the peer can read (or sees the end of the
 * stream): at most 1,000 rounds of up to 1 ms. Returns what recv gave then. */
static ssize_t run_until_readable(struct rig *r, char *buf, size_t cap)
{
	ssize_t n = -1;
	for (int i = 0; i < 1000 && n < 0; i++) {
		engine_uring.wait(r->w, 1000000);
		engine_uring.dispatch(r->w, &upcalls);
		n = recv(r->peer, buf, cap, MSG_DONTWAIT);
	}
	return n;
}

START_TEST(staged_output_goes_once_the_kernel_takes_submissions)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	ck_assert_int_eq(engine_send(r.w, r.fd, "hello", 5, 0), 5);
	starve_next_wait(&r);
	char got[8] = {0};
	ck_assert_int_eq(recv(r.peer, got, sizeof(got), MSG_DONTWAIT), -1); /* not yet */
	ck_assert_int_eq(run_until_readable(&r, got, sizeof(got)), 5);
	ck_assert_str_eq(got, "hello");
	rig_close(&r);
}
END_TEST

START_TEST(a_close_whose_cancel_found_no_slot_still_closes)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	engine_close(r.w, r.fd); /* the armed receive is to be cancelled first */
	starve_next_wait(&r);
	char c;
	ck_assert_int_eq(run_until_readable(&r, &c, 1), 0); /* the end of the stream */
	ck_assert_ptr_null(uring_sock(ring_state(&r), r.fd));
	engine_uring.teardown(r.w);
	close(r.peer);
	close(r.nw.wakefd);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("uring_starved");
	TCase *tc = tcase_create("starved");
	tcase_add_test(tc, staged_output_goes_once_the_kernel_takes_submissions);
	tcase_add_test(tc, a_close_whose_cancel_found_no_slot_still_closes);
	suite_add_tcase(suite, tc);
	return check_run(suite);
}
