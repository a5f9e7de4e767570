/*
 * server/net/engine_uring.c when no submission slot can be had: the ring is full and the
 * kernel refuses the submit that would empty it. What wanted a slot then must be done
 * once the kernel takes submissions again, not forgotten: output staged on a socket
 * reaches its peer, a socket closed while its receive was armed is cancelled and closed
 * (its peer sees the end of the stream), the rest of a short send reaches the peer whole
 * and in order, and the wake read and a listener's accept are armed again. The kernel's
 * refusal is made by pointing the ring's descriptor at nothing for one wait or dispatch
 * (io_uring_enter fails with EBADF), over a real ring and real sockets. A wait that found
 * no slot returns at once, however long its timeout: the kernel's refusal there is a second
 * ring that takes none of the engine's submissions but would wait (struct standin).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/net/engine.h"
#include "server/net/engine_uring.h"
#include "tests/server/net/engine_rig.h"
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

/* Fills the ring's free submission slots with no-ops, tagged as a cancel's completion
 * (which dispatch ignores). */
static void fill_ring(struct rig *r)
{
	struct io_uring_sqe *sqe;
	while ((sqe = io_uring_get_sqe(&ring_state(r)->ring))) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, UD(UD_CANCEL, -1));
	}
}

/* The next wait finds the ring full of no-ops and cannot submit them: whatever it
 * flushes gets no submission slot. */
static void starve_next_wait(struct rig *r)
{
	fill_ring(r);
	int fd = ring_state(r)->ring.enter_ring_fd;
	ring_state(r)->ring.enter_ring_fd = -1;
	engine_uring.wait(r->w, 0); /* fails (EBADF): nothing reaches the kernel */
	ring_state(r)->ring.enter_ring_fd = fd;
	ck_assert(ring_state(r)->starved);
}

/* One dispatch as starve_next_wait's wait: what the completions already in the queue
 * want armed or sent again (a wake read, an accept, the rest of a short send) finds no
 * submission slot. */
static void starve_dispatch(struct rig *r, const struct engine_upcalls *up)
{
	fill_ring(r);
	int fd = ring_state(r)->ring.enter_ring_fd;
	ring_state(r)->ring.enter_ring_fd = -1;
	engine_uring.dispatch(r->w, up);
	ring_state(r)->ring.enter_ring_fd = fd;
	ck_assert(ring_state(r)->starved);
}

/* Cancels, from the test, what the engine has in the kernel under tag target, as the
 * kernel ends an operation on its own (a multishot accept, a send cut short), and waits
 * up to 5 s until both completions are in the queue, left there for the engine's
 * dispatch. Returns the target's result. */
static int cancel_in_kernel(struct rig *r, uint64_t target)
{
	struct io_uring *ring = &ring_state(r)->ring;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	ck_assert_ptr_nonnull(sqe);
	io_uring_prep_cancel64(sqe, target, 0);
	io_uring_sqe_set_data64(sqe, UD(UD_CANCEL, -1));
	ck_assert_int_eq(io_uring_submit(ring), 1);
	struct __kernel_timespec ts = {.tv_sec = 5};
	struct io_uring_cqe *cqe;
	ck_assert_int_eq(io_uring_wait_cqes(ring, &cqe, 2, &ts, NULL), 0);
	int res = INT_MIN;
	unsigned head;
	io_uring_for_each_cqe(ring, head, cqe)
	{
		if (cqe->user_data == target)
			res = cqe->res;
	}
	ck_assert_int_ne(res, INT_MIN);
	return res;
}

/* Waits (and dispatches) with no timeout until no completion is left: the no-ops of a
 * starved round come back; at most 10 rounds. */
static void settle(struct rig *r)
{
	for (int i = 0; i < 10; i++) {
		engine_uring.wait(r->w, 0);
		engine_uring.dispatch(r->w, &upcalls);
		if (io_uring_cq_ready(&ring_state(r)->ring) == 0)
			return;
	}
	ck_abort_msg("completions still coming after 10 rounds");
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
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

/* Once a socket found no slot, the others listed after it wait too (each try would be a
 * failing submit): they stay listed, and their output goes as well. */
START_TEST(every_sockets_staged_output_goes_once_the_kernel_takes_submissions)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ck_assert_int_eq(engine_add(r.w, sv[0], &r, EPOLLIN), 0);
	engine_uring.wait(r.w, 0); /* its receive goes into the kernel */
	engine_uring.dispatch(r.w, &upcalls);
	ck_assert_int_eq(engine_send(r.w, r.fd, "hello", 5, 0), 5);
	ck_assert_int_eq(engine_send(r.w, sv[0], "world", 5, 0), 5);
	starve_next_wait(&r);
	char got[8] = {0};
	ck_assert_int_eq(run_until_readable(&r, got, sizeof(got)), 5);
	ck_assert_str_eq(got, "hello");
	struct rig other = r; /* the second pair read through the same loop */
	other.peer = sv[1];
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(run_until_readable(&other, got, sizeof(got)), 5);
	ck_assert_str_eq(got, "world");
	engine_close(r.w, sv[0]);
	rig_close(&r);
	close(sv[1]);
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

#define SHORT_SEND_BYTES 200000 /* under ENGINE_SEND_HELD: one engine_send takes it all */

/* Reads from the peer into in[got..want) while the loop runs, until it has want bytes or
 * sees the end of the stream (*eof): at most 5,000 rounds of up to 1 ms. Returns how many
 * bytes in holds then. */
static size_t read_peer(struct rig *r, unsigned char *in, size_t got, size_t want, bool *eof)
{
	*eof = false;
	for (int i = 0; i < 5000 && got < want && !*eof; i++) {
		engine_uring.wait(r->w, 1000000);
		engine_uring.dispatch(r->w, &upcalls);
		ssize_t n = recv(r->peer, in + got, want - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		*eof = n == 0;
	}
	return got;
}

/*
 * out (SHORT_SEND_BYTES counting up mod 251) is staged and goes into the kernel, where a
 * small send buffer takes part of it, and the send is then cut short (cancel_in_kernel):
 * with MSG_WAITALL the kernel itself finishes a send however small the buffers, so only
 * an end such as this completes one short. The rest is the engine's to send (on_send),
 * and the dispatch that would send it finds no submission slot: it waits as u->resend.
 * Returns the bytes the short send took (in the peer's socket, unread), or -1 (said on
 * stderr) where the kernel reports a cancelled send as -ECANCELED rather than the bytes it
 * sent (older kernels; 6.18, where this was written, reports the bytes): there no send can
 * be cut short so, and the case is not checked.
 */
static int short_send_found_no_slot(struct rig *r, unsigned char *out)
{
	int small = 4096; /* a unix stream's bytes in flight count against the sender's buffer */
	ck_assert_int_eq(setsockopt(r->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	for (size_t i = 0; i < SHORT_SEND_BYTES; i++)
		out[i] = (unsigned char)(i % 251);
	ck_assert_int_eq(engine_send(r->w, r->fd, out, SHORT_SEND_BYTES, 0), SHORT_SEND_BYTES);
	engine_uring.wait(r->w, 0); /* the send goes into the kernel and fills the socket */
	struct usock *u = uring_sock(ring_state(r), r->fd);
	int took = cancel_in_kernel(r, UD(UD_SEND, u->slot));
	if (took == -ECANCELED) {
		fprintf(stderr,
		        "%s: a short send not checked here: this kernel reports a cancelled "
		        "send as -ECANCELED, not the bytes it sent\n",
		        program_invocation_short_name);
		return -1;
	}
	ck_assert_int_gt(took, 0);
	ck_assert_int_lt(took, SHORT_SEND_BYTES);
	starve_dispatch(r, &upcalls);
	ck_assert(u->resend);
	return took;
}

START_TEST(the_rest_of_a_short_send_goes_once_the_kernel_takes_submissions)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	unsigned char *out = malloc(SHORT_SEND_BYTES), *in = malloc(SHORT_SEND_BYTES);
	ck_assert(out && in);
	if (short_send_found_no_slot(&r, out) < 0) {
		free(out);
		free(in);
		rig_close(&r);
		return;
	}
	starve_next_wait(&r); /* the wait after it finds none either */
	ck_assert(uring_sock(ring_state(&r), r.fd)->resend);
	bool eof;
	ck_assert_uint_eq(read_peer(&r, in, 0, SHORT_SEND_BYTES, &eof), SHORT_SEND_BYTES);
	ck_assert(memcmp(in, out, SHORT_SEND_BYTES) == 0); /* whole, once, in order */
	free(out);
	free(in);
	rig_close(&r);
}
END_TEST

/* A connection closed while the rest of its short send waits for a slot: the rest goes as
 * close() would send it, what the socket takes at once (MSG_DONTWAIT), and the descriptor
 * is closed without waiting for the peer to read (MSG_WAITALL would hold it open until the
 * peer read everything). The connection wants no input, as one that stopped reading: no
 * receive's cancel comes back to have the send cancelled too. */
START_TEST(a_closed_sockets_rest_of_a_short_send_goes_without_waiting_for_the_peer)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	engine_watch(r.w, r.fd, &r, 0);
	for (int i = 0; i < 1000 && uring_sock(ring_state(&r), r.fd)->recv_armed; i++) {
		engine_uring.wait(r.w, 1000000);
		engine_uring.dispatch(r.w, &upcalls);
	}
	ck_assert(!uring_sock(ring_state(&r), r.fd)->recv_armed);
	unsigned char *out = malloc(SHORT_SEND_BYTES), *in = malloc(SHORT_SEND_BYTES);
	ck_assert(out && in);
	int cut = short_send_found_no_slot(&r, out);
	if (cut < 0) {
		free(out);
		free(in);
		rig_close(&r);
		return;
	}
	size_t took = (size_t)cut;
	engine_close(r.w, r.fd);
	ck_assert_int_eq(recv(r.peer, in, SHORT_SEND_BYTES, MSG_DONTWAIT), (ssize_t)took);
	/* the socket has room again, and the peer reads nothing more until the close ends */
	for (int i = 0; i < 1000 && uring_sock(ring_state(&r), r.fd); i++) {
		engine_uring.wait(r.w, 1000000);
		engine_uring.dispatch(r.w, &upcalls);
	}
	ck_assert_ptr_null(uring_sock(ring_state(&r), r.fd));
	bool eof;
	size_t got = read_peer(&r, in, took, SHORT_SEND_BYTES, &eof);
	ck_assert(eof);
	ck_assert_uint_gt(got, took);             /* the rest went, as far as the room */
	ck_assert_uint_lt(got, SHORT_SEND_BYTES); /* and no further: dropped, as by close() */
	ck_assert(memcmp(in, out, got) == 0);
	free(out);
	free(in);
	engine_uring.teardown(r.w);
	close(r.peer);
	close(r.nw.wakefd);
}
END_TEST

START_TEST(a_wake_read_that_found_no_slot_is_armed_again)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	uint64_t one = 1;
	ck_assert_int_eq(write(r.nw.wakefd, &one, sizeof(one)), sizeof(one));
	struct __kernel_timespec ts = {.tv_sec = 5};
	struct io_uring_cqe *cqe;
	ck_assert_int_eq(io_uring_wait_cqe_timeout(&ring_state(&r)->ring, &cqe, &ts), 0);
	ck_assert_uint_eq(cqe->user_data, UD(UD_WAKE, 0));
	starve_dispatch(&r, &upcalls); /* the read of the next wake-up finds no slot */
	ck_assert(!ring_state(&r)->wake_armed);
	settle(&r);
	ck_assert_int_eq(write(r.nw.wakefd, &one, sizeof(one)), sizeof(one));
	double t0 = now_s();
	ck_assert_int_eq(engine_uring.wait(r.w, 5000000000u), 0);
	ck_assert_double_lt(now_s() - t0, 1.0); /* woken, not timed out */
	rig_close(&r);
}
END_TEST

static int accepted_fd = -2, accepted_li = -1;
static void keep_accepted(struct worker *w, int li, int fd)
{
	(void)w;
	accepted_li = li;
	accepted_fd = fd;
}
static const struct engine_upcalls accepting = {
    .listener_ready = on_listener, .accepted = keep_accepted, .event = on_event};

START_TEST(an_accept_that_found_no_slot_is_armed_again)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t salen = sizeof(sa);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 8), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &salen), 0);
	r.nw.listenfd[0] = lfd;
	r.nw.nlisten = 1;
	engine_uring.listen(r.w, true);
	engine_uring.wait(r.w, 0); /* the multishot accept goes into the kernel */
	/* the kernel ends it (as on an error), and the dispatch that would arm it again
	 * finds no slot */
	ck_assert_int_eq(cancel_in_kernel(&r, UD(UD_ACCEPT, 0)), -ECANCELED);
	starve_dispatch(&r, &accepting);
	ck_assert(!ring_state(&r)->accept_armed[0]);
	int cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(cfd, 0);
	int rc = connect(cfd, (struct sockaddr *)&sa, sizeof(sa));
	ck_assert(rc == 0 || errno == EINPROGRESS);
	for (int i = 0; i < 1000 && accepted_fd == -2; i++) {
		engine_uring.wait(r.w, 1000000);
		engine_uring.dispatch(r.w, &accepting);
	}
	ck_assert_int_eq(accepted_li, 0);
	ck_assert_int_ge(accepted_fd, 0);
	close(accepted_fd);
	close(cfd);
	rig_close(&r);
	close(lfd);
}
END_TEST

/*
 * A second ring standing in for a kernel that takes none of the engine's submissions but
 * would wait: the engine's ring pointed at it (enter_ring_fd), each io_uring_enter submits
 * as many of the stand-in's own queued polls instead (on a pipe nothing is written to:
 * none completes), and one asked to wait waits its whole timeout. The engine's submission
 * queue stays full: uring_sqe_get finds no slot.
 */
#define STANDIN_POLLS (4 * URING_ENTRIES) /* each enter takes up to URING_ENTRIES of them */
struct standin {
	struct io_uring ring;
	int pipe[2];
};

static void standin_open(struct standin *x)
{
	ck_assert_int_eq(pipe2(x->pipe, O_CLOEXEC), 0);
	ck_assert_int_eq(io_uring_queue_init(STANDIN_POLLS, &x->ring, 0), 0);
	struct io_uring_sqe *sqe;
	while ((sqe = io_uring_get_sqe(&x->ring)))
		io_uring_prep_poll_add(sqe, x->pipe[0], POLLIN);
	/* queued for the kernel without entering it (liburing's __io_uring_flush_sq) */
	x->ring.sq.sqe_head = x->ring.sq.sqe_tail;
	io_uring_smp_store_release(x->ring.sq.ktail, x->ring.sq.sqe_tail);
}

static void standin_close(struct standin *x)
{
	io_uring_queue_exit(&x->ring); /* its polls cancelled */
	close(x->pipe[0]);
	close(x->pipe[1]);
}

START_TEST(a_wait_that_found_no_slot_returns_at_once)
{
	struct rig r;
	if (!rig_open_armed(&r))
		return;
	struct standin x;
	standin_open(&x);
	ck_assert_int_eq(engine_send(r.w, r.fd, "hello", 5, 0), 5); /* the wait wants a slot */
	fill_ring(&r);
	int fd = ring_state(&r)->ring.enter_ring_fd;
	ring_state(&r)->ring.enter_ring_fd = x.ring.ring_fd;
	double t0 = now_s();
	int rc = engine_uring.wait(r.w, 5000000000u);
	double took = now_s() - t0;
	ring_state(&r)->ring.enter_ring_fd = fd;
	ck_assert_int_eq(rc, 0);
	ck_assert(ring_state(&r)->starved);
	ck_assert_double_lt(took, 1.0); /* it only submitted: the send is to be tried again */
	char got[8] = {0};
	ck_assert_int_eq(run_until_readable(&r, got, sizeof(got)), 5);
	ck_assert_str_eq(got, "hello");
	rig_close(&r);
	standin_close(&x);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("uring_starved");
	TCase *tc = tcase_create("starved");
	tcase_add_test(tc, staged_output_goes_once_the_kernel_takes_submissions);
	tcase_add_test(tc, every_sockets_staged_output_goes_once_the_kernel_takes_submissions);
	tcase_add_test(tc, a_close_whose_cancel_found_no_slot_still_closes);
	tcase_add_test(tc, the_rest_of_a_short_send_goes_once_the_kernel_takes_submissions);
	tcase_add_test(tc, a_closed_sockets_rest_of_a_short_send_goes_without_waiting_for_the_peer);
	tcase_add_test(tc, a_wake_read_that_found_no_slot_is_armed_again);
	tcase_add_test(tc, an_accept_that_found_no_slot_is_armed_again);
	tcase_add_test(tc, a_wait_that_found_no_slot_returns_at_once);
	suite_add_tcase(suite, tc);
	return check_run(suite);
}
