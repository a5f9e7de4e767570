/*
 * The io_uring engine (engine.h). One ring per worker; what epoll does with
 * readiness, this does with completions, and the layer above cannot tell:
 *
 *   accept   one multishot accept per listener: each accepted socket is a
 *            completion, handed up as accepted (no accept4, no readiness). Out of
 *            descriptors (EMFILE, ENFILE) the listener rests on a poll until a
 *            connection is pending, as epoll waits for readiness: an accept armed
 *            again at once would fail at once, however long nothing comes. What is
 *            pending then is shed through a fixed file slot (shed_one), not the
 *            worker's spare descriptor, which another worker's accept could take.
 *   receive  one multishot recv per socket, into a ring of provided buffers
 *            (IOSQE_BUFFER_SELECT from group URING_BGID). A completion is handed up
 *            as EPOLLIN while its buffer is "the socket": engine_recv copies from
 *            it, whatever the connection leaves goes to the socket's spill buffer,
 *            and the buffer goes straight back to the ring. When the connection
 *            stops wanting input the recv is cancelled, and armed again when it
 *            wants input again, so input stays bounded as with epoll.
 *   send     engine_send copies into the socket's staged buffer (at most
 *            ENGINE_SEND_HELD bytes) and returns; engine_send_buf, when nothing is
 *            staged, takes the connection's buffer as the staged one instead (the
 *            copy was 8% of the server's CPU on a 100-entry search,
 *            bench/results/scale-2026-12-04.md) and hands back an empty one no
 *            larger. Before the loop waits, the staged bytes of every socket become
 *            one send SQE each, all submitted with the wait in one io_uring_enter.
 *            One send per socket is in the kernel at a time (so bytes keep their
 *            order), with MSG_WAITALL (the kernel finishes it however long the
 *            socket stays full) and the policy's MSG_MORE when the staged bytes end
 *            inside a response. A full staged buffer is EAGAIN, and EPOLLOUT comes
 *            when the send in the kernel completes.
 *   close    the recv and a send still waiting for room are cancelled, output
 *            staged but not yet sent goes with MSG_DONTWAIT (what the socket takes,
 *            as close() after a send would), and the descriptor is closed when the
 *            last completion of it has come back: its number is not reused before.
 *
 * A socket's state lives in a slot of the worker's table (blocks of URING_BLOCK, each
 * new socket in the lowest free slot, found from its descriptor through slot_of); a
 * slot is reused only once its close finished, and a block is unmapped only when none
 * of it is in use or listed, so a pointer to one stays valid across upcalls. Send
 * buffers come from a per-worker pool and go back to it once empty, so an idle
 * connection holds no buffer here (only its slot); the pool keeps buffers as large as a
 * staged buffer grows (ENGINE_SEND_HELD), at most URING_POOL_BYTES a worker, so that a
 * large search's sends reuse them instead of faulting new pages in each time.
 * Completions are tagged (kind << 32 | slot or listener index). Where no submission slot
 * can be had (the ring full and the kernel refusing the submit that would empty it), what
 * wanted one is left as it was and done again before the next wait (uring_state.starved):
 * nothing staged, cancelled or armed is forgotten.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/net/engine.h"
#include "server/net/engine_uring.h"

static struct uring_state *state(struct worker *w)
{
	return net_worker(w)->engine_state;
}

/* Puts u on a list once (on: whether it is there already). */
static void push_once(struct usock **head, struct usock *u, bool *on, struct usock **next)
{
	if (*on)
		return;
	*on = true;
	*next = *head;
	*head = u;
}

static void mark_dirty(struct uring_state *s, struct usock *u)
{
	push_once(&s->dirty, u, &u->on_dirty, &u->dirty_next);
}

static void mark_pending(struct uring_state *s, struct usock *u)
{
	push_once(&s->pending, u, &u->on_pending, &u->pending_next);
}

static void arm_wake(struct uring_state *s, struct worker *w)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, net_worker(w)->wakefd, &s->wake_value, sizeof(s->wake_value), 0);
	io_uring_sqe_set_data64(sqe, UD(UD_WAKE, 0));
	s->wake_armed = true;
}

/* A send SQE of u's flight bytes (from flight.off), with flags and the tag of u's send. */
static void prep_send(struct uring_state *s, struct io_uring_sqe *sqe, struct usock *u, int flags)
{
	io_uring_prep_send(sqe, u->fd, u->flight.data + u->flight.off, buf_pending(&u->flight),
	                   flags | MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, UD(UD_SEND, u->slot));
	STAT_ADD(s->stats->io_sends, 1);
	if (flags & MSG_MORE)
		STAT_ADD(s->stats->io_sends_more, 1);
}

/* The staged bytes become the send in the kernel. Returns false when no submission slot
 * could be had: they stay staged. */
static bool submit_send(struct uring_state *s, struct usock *u, int flags)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	if (!sqe)
		return false;
	struct buf t = u->flight;
	u->flight = u->staged;
	u->staged = t;
	u->staged.off = u->staged.len = 0;
	prep_send(s, sqe, u, flags);
	u->flight_flags = flags;
	u->staged_flags = 0;
	u->sending = true;
	return true;
}

/* Whether u has staged bytes to send now: none in the kernel (they would follow it) and
 * the socket has not failed. */
static bool has_staged(const struct usock *u)
{
	return !u->sending && buf_pending(&u->staged) > 0 && !u->err;
}

/* The rest of u's short send goes on (flags: the first send's), or false when no
 * submission slot could be had: flush tries again (u->resend). */
static bool resend(struct uring_state *s, struct usock *u, int flags)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	u->resend = !sqe;
	if (sqe)
		prep_send(s, sqe, u, flags);
	return sqe != NULL;
}

/* Closes u's descriptor once nothing of it is left in the kernel. */
static void finish_close(struct uring_state *s, struct usock *u)
{
	if (u->handler || !u->live || u->recv_armed || u->sending)
		return;
	close(u->fd);
	u->live = false;
	buf_free(&u->spill);
	uring_pool_put(s, &u->staged);
	uring_pool_put(s, &u->flight);
	uring_sock_dead(s, u);
}

/* What u needs in the kernel before the wait: its receive armed or cancelled, its
 * staged output (or the rest of a short send) submitted, and once closed, a send still
 * waiting cancelled and the descriptor closed. Returns false when a submission slot was
 * wanted and none could be had: u is to be flushed again. */
static bool flush_one(struct uring_state *s, struct usock *u)
{
	bool want_in = u->handler && (u->want & EPOLLIN) && !u->eof && !u->err;
	if (want_in && !u->recv_armed) {
		struct io_uring_sqe *sqe = uring_sqe_get(s);
		if (!sqe)
			return false;
		io_uring_prep_recv_multishot(sqe, u->fd, NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = URING_BGID;
		io_uring_sqe_set_data64(sqe, UD(UD_RECV, u->slot));
		u->recv_armed = true;
	} else if (!want_in && u->recv_armed && !u->recv_cancelling) {
		if (!uring_cancel(s, UD(UD_RECV, u->slot), u->slot))
			return false;
		u->recv_cancelling = true;
	}
	if (u->resend) /* closed since: what the socket takes at once, as for staged bytes */
		return resend(s, u,
		              u->handler
		                  ? MSG_WAITALL | u->flight_flags
		                  : MSG_DONTWAIT | (u->flight_flags & ~(MSG_WAITALL | MSG_MORE)));
	if (u->handler)
		return !has_staged(u) || submit_send(s, u, MSG_WAITALL | u->staged_flags);
	/* closed: what cannot go at once is dropped, as by close() */
	if (u->sending && !u->send_cancelling) {
		if (!uring_cancel(s, UD(UD_SEND, u->slot), u->slot))
			return false;
		u->send_cancelling = true;
	} else if (has_staged(u) && !submit_send(s, u, MSG_DONTWAIT)) {
		return false;
	}
	finish_close(s, u);
	return true;
}

/* Before waiting: every dirty socket flushed (flush_one); those that could not be stay
 * dirty for the next round. */
static void flush(struct uring_state *s)
{
	struct usock *again = NULL;
	while (s->dirty) {
		struct usock *u = s->dirty;
		s->dirty = u->dirty_next;
		u->on_dirty = false;
		/* once starved, the rest wait too: each try would be a failing submit */
		if (u->live && (s->starved || !flush_one(s, u)))
			push_once(&again, u, &u->on_dirty, &u->dirty_next);
	}
	s->dirty = again;
}

static void on_recv(struct uring_state *s, struct worker *w, const struct engine_upcalls *up,
                    int slot, int res, unsigned flags)
{
	struct usock *u = uring_slot(s, slot);
	if (!u || !u->live) {
		if (res > 0 && (flags & IORING_CQE_F_BUFFER))
			uring_recycle(s, flags >> IORING_CQE_BUFFER_SHIFT);
		return;
	}
	if (!(flags & IORING_CQE_F_MORE)) {
		u->recv_armed = u->recv_cancelling = false;
		mark_dirty(s, u); /* armed again if still wanted, or the close finishes */
	}
	if (res > 0) {
		unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
		const unsigned char *data = s->bufs + (size_t)bid * URING_BUF_SIZE;
		if (u->handler && (u->want & EPOLLIN) && buf_pending(&u->spill) == 0) {
			u->chunk = data;
			u->chunk_len = (size_t)res;
			up->event(w, u->handler, EPOLLIN);
			data = u->chunk;
			res = (int)u->chunk_len;
			u->chunk = NULL;
			u->chunk_len = 0;
		}
		if (u->handler && res > 0) {
			if (buf_append(&u->spill, data, (size_t)res) < 0)
				u->err = ENOMEM;
			mark_pending(s, u);
		}
		uring_recycle(s, bid);
	} else if (res == 0) {
		u->eof = true;
		mark_pending(s, u);
	} else if (res != -ENOBUFS && res != -ECANCELED) {
		u->err = -res;
		mark_pending(s, u);
	}
}

static void on_send(struct uring_state *s, int slot, int res)
{
	struct usock *u = uring_slot(s, slot);
	if (!u || !u->live)
		return;
	if (res < 0) {
		if (u->handler && res != -ECANCELED)
			u->err = -res;
		u->flight.off = u->flight.len = 0;
	} else {
		buf_consume(&u->flight, (size_t)res);
		if (buf_pending(&u->flight) > 0 && u->handler) { /* short: the rest goes on */
			if (!resend(s, u, MSG_WAITALL | u->flight_flags))
				mark_dirty(s, u);
			return;
		}
		u->flight.off = u->flight.len = 0;
	}
	u->sending = u->send_cancelling = false;
	uring_pool_put(s, &u->flight);
	if (!u->handler) {
		mark_dirty(s, u);
		return;
	}
	if (buf_pending(&u->staged) > 0 && !u->err) { /* room for more at once: EPOLLOUT */
		if (!submit_send(s, u, MSG_WAITALL | u->staged_flags))
			mark_dirty(s, u);
	} else {
		uring_pool_put(s, &u->staged);
	}
	mark_pending(s, u);
}

/* What u can report now: input (or its end) and room for output, as epoll would. */
static uint32_t ready_events(const struct usock *u)
{
	uint32_t ev = 0;
	if (!u->live || !u->handler)
		return 0;
	if ((u->want & EPOLLIN) && (buf_pending(&u->spill) > 0 || u->eof || u->err))
		ev |= EPOLLIN;
	if ((u->want & EPOLLOUT) && (u->err || buf_pending(&u->staged) < ENGINE_SEND_HELD))
		ev |= EPOLLOUT;
	if (ev && u->err)
		ev |= EPOLLERR;
	return ev;
}

static void ur_dispatch(struct worker *w, const struct engine_upcalls *up)
{
	struct uring_state *s = state(w);
	struct io_uring_cqe *cqes[URING_CQE_BATCH];
	struct {
		uint64_t ud;
		int res;
		unsigned flags;
	} done[URING_CQE_BATCH];
	unsigned n = io_uring_peek_batch_cqe(&s->ring, cqes, URING_CQE_BATCH);
	for (unsigned i = 0; i < n; i++)
		done[i].ud = cqes[i]->user_data, done[i].res = cqes[i]->res,
		done[i].flags = cqes[i]->flags;
	io_uring_cq_advance(&s->ring, n);
	for (unsigned i = 0; i < n; i++) {
		int idx = (int)(uint32_t)done[i].ud, res = done[i].res;
		switch ((enum ud_kind)(done[i].ud >> 32)) {
		case UD_WAKE:
			s->wake_armed = false;
			arm_wake(s, w);
			break;
		case UD_ACCEPT:
		case UD_LISTEN_POLL:
		case UD_SHED:
		case UD_SHED_CLOSE:
			uring_listener_done(s, w, up, done[i].ud, res, done[i].flags);
			break;
		case UD_RECV:
			on_recv(s, w, up, idx, res, done[i].flags);
			break;
		case UD_SEND:
			on_send(s, idx, res);
			break;
		case UD_CANCEL:
			break;
		}
	}
	/* Level-triggered: what is still there is reported again, each round. */
	struct usock *list = s->pending;
	s->pending = NULL;
	for (struct usock *u = list, *next; u; u = next) {
		next = u->pending_next;
		u->on_pending = false;
		uint32_t ev = ready_events(u);
		if (ev)
			up->event(w, u->handler, ev);
		if (ready_events(u) & EPOLLIN)
			mark_pending(s, u);
	}
}

static int ur_wait(struct worker *w, uint64_t timeout_ns)
{
	struct uring_state *s = state(w);
	if (s->starved) { /* what wanted a submission slot last round tries again */
		s->starved = false;
		if (!s->wake_armed)
			arm_wake(s, w);
		uring_listen(s, w, s->listening);
	}
	flush(s);
	int rc;
	bool submit = io_uring_sq_ready(&s->ring) > 0;
	if (timeout_ns == 0 || s->pending || s->starved) {
		if (submit)
			STAT_ADD(s->stats->io_waits, 1);
		rc = submit ? io_uring_submit(&s->ring) : 0;
	} else {
		if (submit || io_uring_cq_ready(&s->ring) == 0)
			STAT_ADD(s->stats->io_waits, 1);
		struct __kernel_timespec ts = {.tv_sec = (long long)(timeout_ns / 1000000000u),
		                               .tv_nsec = (long long)(timeout_ns % 1000000000u)};
		struct io_uring_cqe *cqe;
		rc = io_uring_submit_and_wait_timeout(&s->ring, &cqe, 1, &ts, NULL);
	}
	/* -EAGAIN with submissions pending: the kernel could not allocate for them (short of
	 * memory); they stay queued, and the worker pauses before it tries again (worker.c)
	 * rather than spin on a refusal. */
	if (rc == -EAGAIN && submit) {
		errno = EAGAIN;
		return -1;
	}
	if (rc >= 0 || rc == -ETIME || rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
		return 0;
	errno = -rc;
	return -1;
}

static void ur_listen(struct worker *w, bool on)
{
	uring_listen(state(w), w, on);
}

static int ur_add(struct worker *w, int fd, void *handler, uint32_t events)
{
	struct uring_state *s = state(w);
	struct usock *u = uring_sock_new(s, fd);
	if (!u)
		return -1;
	if (u->live) { /* cannot be: the descriptor is ours until its close finished */
		errno = EEXIST;
		return -1;
	}
	u->fd = fd;
	u->live = true;
	u->handler = handler;
	u->want = events;
	u->recv_armed = u->recv_cancelling = u->eof = false;
	u->sending = u->send_cancelling = false;
	u->err = 0;
	u->staged_flags = 0;
	mark_dirty(s, u);
	return 0;
}

static void ur_watch(struct worker *w, int fd, void *handler, uint32_t events)
{
	struct uring_state *s = state(w);
	struct usock *u = uring_sock(s, fd);
	if (!u || !u->live)
		return;
	u->handler = handler;
	bool in_changed = (u->want ^ events) & EPOLLIN;
	u->want = events;
	if (in_changed)
		mark_dirty(s, u);
	if (ready_events(u))
		mark_pending(s, u);
}

static ssize_t ur_recv(struct worker *w, int fd, void *buf, size_t cap)
{
	struct usock *u = uring_sock(state(w), fd);
	if (!u || !u->live) {
		errno = EBADF;
		return -1;
	}
	size_t n = 0, k;
	if ((k = buf_pending(&u->spill)) > 0) {
		n = k < cap ? k : cap;
		memcpy(buf, u->spill.data + u->spill.off, n);
		buf_consume(&u->spill, n);
		if (buf_pending(&u->spill) == 0)
			buf_free(&u->spill); /* rare: input the connection did not take at once */
	}
	if (n < cap && u->chunk_len > 0) {
		k = u->chunk_len < cap - n ? u->chunk_len : cap - n;
		memcpy((unsigned char *)buf + n, u->chunk, k);
		u->chunk += k;
		u->chunk_len -= k;
		n += k;
	}
	if (n > 0)
		return (ssize_t)n;
	if (u->err) {
		errno = u->err;
		return -1;
	}
	if (u->eof)
		return 0;
	errno = EAGAIN;
	return -1;
}

static ssize_t ur_send(struct worker *w, int fd, const void *buf, size_t len, int flags)
{
	struct uring_state *s = state(w);
	struct usock *u = uring_sock(s, fd);
	if (!u || !u->live) {
		errno = EBADF;
		return -1;
	}
	if (u->err) {
		errno = u->err;
		return -1;
	}
	size_t held = buf_pending(&u->staged);
	if (held >= ENGINE_SEND_HELD) {
		errno = EAGAIN;
		return -1;
	}
	size_t n = len < ENGINE_SEND_HELD - held ? len : ENGINE_SEND_HELD - held;
	uring_pool_get(s, &u->staged);
	if (buf_append(&u->staged, buf, n) < 0) {
		errno = ENOMEM;
		return -1;
	}
	u->staged_flags = n < len ? MSG_MORE : flags & MSG_MORE;
	mark_dirty(s, u);
	return (ssize_t)n;
}

/*
 * When nothing of u's is staged, b's storage becomes the staged buffer: the kernel's send
 * reads the bytes where the connection wrote them, and b gets the staged buffer's empty
 * storage (from the pool when it had none, never larger than b's: a lookup's connection
 * does not keep a large search's buffer) with b's bytes past len copied into it, when they
 * are fewer than len (a batch's tail short of a segment). Storage larger than
 * ENGINE_SEND_HELD is not taken (a slow client's output grown to max_pending_bytes would
 * stay held by the send in the kernel while the connection grew another): a copy, as
 * ur_send, which also takes the bytes when something is staged. Either way the bytes
 * taken are consumed from b.
 */
static ssize_t ur_send_buf(struct worker *w, int fd, struct buf *b, size_t len, int flags)
{
	struct uring_state *s = state(w);
	struct usock *u = uring_sock(s, fd);
	size_t tail = buf_pending(b) - len;
	if (u && u->live && !u->err && buf_pending(&u->staged) == 0 && len > 0 &&
	    b->cap <= ENGINE_SEND_HELD && tail <= len) {
		struct buf t = u->staged;
		if (t.cap > b->cap) /* an empty buffer larger than b's goes back to the pool */
			uring_pool_put(s, &t);
		uring_pool_get_within(s, &t, b->cap);
		if (buf_append(&t, b->data + b->off + len, tail) == 0) {
			u->staged = *b;
			u->staged.len -= tail;
			*b = t;
			u->staged_flags = flags & MSG_MORE;
			mark_dirty(s, u);
			return (ssize_t)len;
		}
		u->staged = t; /* out of memory for the tail: the copy below says so */
	}
	ssize_t n = ur_send(w, fd, b->data + b->off, len, flags);
	if (n > 0)
		buf_consume(b, (size_t)n);
	return n;
}

/* The staged bytes go to the kernel first (one io_uring_enter), unless a send is still
 * in the kernel: then they follow it, and the option applies before them. */
static int ur_set_option(struct worker *w, int fd, int level, int opt, int on)
{
	struct uring_state *s = state(w);
	struct usock *u = uring_sock(s, fd);
	if (u && u->live && has_staged(u) && submit_send(s, u, MSG_WAITALL | u->staged_flags))
		io_uring_submit(&s->ring);
	return setsockopt(fd, level, opt, &on, sizeof(on));
}

static void ur_close(struct worker *w, int fd)
{
	struct uring_state *s = state(w);
	struct usock *u = uring_sock(s, fd);
	if (!u || !u->live) {
		close(fd);
		return;
	}
	u->handler = NULL;
	u->want = 0;
	u->chunk_len = 0;
	buf_free(&u->spill);
	mark_dirty(s, u); /* flush cancels, sends what is staged, and closes */
}

static int ur_setup(struct worker *w, char *why, size_t whylen)
{
	struct net_worker *nw = net_worker(w);
	struct uring_state *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (uring_ring_init(s, why, whylen) < 0) {
		free(s);
		return -1;
	}
	nw->engine_state = s;
	s->stats = &w->stats;
	/* One fixed file slot a listener, to shed through (shed_one); no descriptor is used. */
	s->direct = io_uring_register_files_sparse(&s->ring, (unsigned)nw->nlisten) == 0;
	arm_wake(s, w);
	ur_listen(w, !nw->listen_paused);
	return 0;
}

static void ur_teardown(struct worker *w)
{
	struct uring_state *s = state(w);
	if (!s)
		return;
	uring_ring_exit(s);
	free(s);
	net_worker(w)->engine_state = NULL;
}

const struct engine_ops engine_uring = ENGINE_OPS(ur, "io_uring");
