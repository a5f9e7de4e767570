/*
 * The io_uring engine's listeners (engine_uring.h): one multishot accept per listener,
 * each accepted socket handed up as a completion; out of descriptors (EMFILE, ENFILE)
 * the listener rests on a poll until a connection is pending, and what is pending is
 * shed through a fixed file slot. The accept half of engine_uring.c's summary.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "server/log.h"
#include "server/net/engine_uring.h"

static void arm_accept(struct uring_state *s, struct worker *w, int li)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_multishot_accept(sqe, net_worker(w)->listenfd[li], NULL, NULL,
	                               SOCK_NONBLOCK | SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, UD(UD_ACCEPT, li));
	s->accept_armed[li] = true;
}

/*
 * The accept of listener li failed for want of a descriptor. The kernel takes the
 * descriptor before it looks for a connection, so an accept armed again now would fail
 * again at once, round after round, with nothing to accept. A one-shot poll waits for a
 * pending connection instead; then the accept is armed again (and, still out of
 * descriptors, the worker sheds what is pending and the listener rests again).
 */
static void rest_listener(struct uring_state *s, struct worker *w, int li)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_poll_add(sqe, net_worker(w)->listenfd[li], POLLIN);
	io_uring_sqe_set_data64(sqe, UD(UD_LISTEN_POLL, li));
	s->poll_armed[li] = true;
}

/*
 * Out of descriptors with a connection pending on listener li: it is accepted into fixed
 * file slot li and closed there (two linked SQEs), then the listener rests again. The
 * spare descriptor of the worker (worker.c) cannot do this here: the descriptor it frees
 * for its accept4 may be taken first by another worker's accept in the kernel, which
 * holds no lock of ours, and the spare is then lost while the limit holds (the
 * listener paused, what is queued on it hanging).
 */
static void shed_one(struct uring_state *s, struct worker *w, int li)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_accept_direct(sqe, net_worker(w)->listenfd[li], NULL, NULL, 0, (unsigned)li);
	io_uring_sqe_set_data64(sqe, UD(UD_SHED, li));
	sqe->flags |= IOSQE_IO_LINK;
	struct io_uring_sqe *close_sqe = io_uring_get_sqe(&s->ring);
	if (!close_sqe) { /* the ring is full: the accept alone would keep the connection */
		sqe->flags &= (unsigned char)~IOSQE_IO_LINK;
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, UD(UD_SHED_CLOSE, li));
		s->shed_armed[li] = true;
		return;
	}
	io_uring_prep_close_direct(close_sqe, (unsigned)li);
	io_uring_sqe_set_data64(close_sqe, UD(UD_SHED_CLOSE, li));
	s->shed_armed[li] = true;
}

void uring_listen(struct uring_state *s, struct worker *w, bool on)
{
	s->listening = on;
	for (int i = 0; i < net_worker(w)->nlisten; i++) {
		if (on && !s->accept_armed[i] && !s->poll_armed[i] && !s->shed_armed[i])
			arm_accept(s, w, i);
		else if (!on && s->accept_armed[i])
			uring_cancel(s, UD(UD_ACCEPT, i), -1);
		else if (!on && s->poll_armed[i])
			uring_cancel(s, UD(UD_LISTEN_POLL, i), -1);
		else if (!on && s->shed_armed[i])
			uring_cancel(s, UD(UD_SHED, i), -1);
	}
}

void uring_listener_done(struct uring_state *s, struct worker *w, const struct engine_upcalls *up,
                         uint64_t ud, int res, unsigned flags)
{
	int idx = (int)(uint32_t)ud;
	switch ((enum ud_kind)(ud >> 32)) {
	case UD_ACCEPT:
		if (!(flags & IORING_CQE_F_MORE))
			s->accept_armed[idx] = false;
		if (s->direct && (res == -EMFILE || res == -ENFILE)) {
			log_error("worker %d: accept: %s; a pending connection closed", w->id,
			          strerror(-res));
			if (!s->accept_armed[idx] && s->listening && !s->shed_armed[idx])
				shed_one(s, w, idx);
			break;
		}
		if (res != -ECANCELED)
			up->accepted(w, idx, res);
		if (s->accept_armed[idx] || !s->listening)
			break;
		if (res == -EMFILE || res == -ENFILE)
			rest_listener(s, w, idx);
		else
			arm_accept(s, w, idx);
		break;
	case UD_LISTEN_POLL: /* a connection is pending (or the poll was cancelled) */
		s->poll_armed[idx] = false;
		if (s->listening && !s->accept_armed[idx] && !s->shed_armed[idx])
			arm_accept(s, w, idx);
		break;
	case UD_SHED: /* accepted into slot idx (its close follows), or failed */
		if (res >= 0)
			STAT_ADD(s->stats->connections_shed, 1);
		break;
	case UD_SHED_CLOSE: /* done (or cancelled with a failed accept): rest again */
		s->shed_armed[idx] = false;
		if (s->listening && !s->accept_armed[idx] && !s->poll_armed[idx])
			rest_listener(s, w, idx);
		break;
	default:
		break;
	}
}
