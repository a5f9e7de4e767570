/*
 * The io_uring engine (engine.h). One ring per worker; what epoll does with
 * readiness, this does with completions, and the layer above cannot tell:
 *
 *   accept   one multishot accept per listener: each accepted socket is a
 *            completion, handed up as accepted (no accept4, no readiness).
 *   receive  one multishot recv per socket, into a ring of provided buffers
 *            (IOSQE_BUFFER_SELECT from group URING_BGID). A completion is handed up
 *            as EPOLLIN while its buffer is "the socket": engine_recv copies from
 *            it, whatever the connection leaves goes to the socket's spill buffer,
 *            and the buffer goes straight back to the ring. When the connection
 *            stops wanting input the recv is cancelled, and armed again when it
 *            wants input again, so input stays bounded as with epoll.
 *   send     engine_send copies into the socket's staged buffer (at most
 *            ENGINE_SEND_HELD bytes) and returns; before the loop waits, the staged
 *            bytes of every socket become one send SQE each, all submitted with the
 *            wait in one io_uring_enter. One send per socket is in the kernel at a
 *            time (so bytes keep their order), with MSG_WAITALL (the kernel finishes
 *            it however long the socket stays full) and the policy's MSG_MORE when
 *            the staged bytes end inside a response. A full staged buffer is EAGAIN,
 *            and EPOLLOUT comes when the send in the kernel completes.
 *   close    the recv and a send still waiting for room are cancelled, output
 *            staged but not yet sent goes with MSG_DONTWAIT (what the socket takes,
 *            as close() after a send would), and the descriptor is closed when the
 *            last completion of it has come back: its number is not reused before.
 *
 * A socket's state lives in a table indexed by descriptor; entries are reused,
 * never freed before teardown, so a pointer to one stays valid across upcalls.
 * Completions are tagged (kind << 32 | descriptor or listener index).
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/engine.h"

#define URING_ENTRIES 512          /* submission queue; completions 4x */
#define URING_BUFS 128             /* provided receive buffers per worker */
#define URING_BUF_SIZE (16 * 1024) /* each (as the epoll path's read chunk) */
#define URING_BGID 0               /* their group */
#define URING_CQE_BATCH 256

enum ud_kind { UD_WAKE = 1, UD_ACCEPT, UD_RECV, UD_SEND, UD_CANCEL };
#define UD(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))

struct usock {
	int fd;
	bool live;     /* between add and the real close */
	void *handler; /* NULL once the connection closed it */
	uint32_t want; /* EPOLLIN, EPOLLOUT */
	bool recv_armed, recv_cancelling, eof;
	int err;      /* errno of a failed recv or send (0: none) */
	bool sending; /* flight is in the kernel */
	bool send_cancelling;
	bool on_dirty, on_pending;
	const unsigned char *chunk; /* a completion's bytes being handed up now */
	size_t chunk_len;
	struct buf spill;  /* received, not yet taken by the connection */
	struct buf staged; /* to send, not yet submitted */
	int staged_flags;  /* MSG_MORE when the staged bytes end inside a response */
	struct buf flight; /* the send in the kernel */
	int flight_flags;  /* its flags */
	struct usock *dirty_next, *pending_next;
};

struct uring_state {
	struct io_uring ring;
	struct worker_stats *stats; /* the worker's */
	struct io_uring_buf_ring *br;
	unsigned char *bufs;
	struct usock **socks; /* by descriptor */
	int nsocks;
	struct usock *dirty;   /* to arm, cancel or send before the next wait */
	struct usock *pending; /* may have input or output room to report */
	bool listening;
	bool accept_armed[CONFIG_MAX_LISTEN];
	uint64_t wake_value;
};

static struct uring_state *state(struct worker *w)
{
	return w->engine_state;
}

static struct usock *usock_of(struct uring_state *s, int fd)
{
	return fd >= 0 && fd < s->nsocks ? s->socks[fd] : NULL;
}

/* A free submission slot, submitting what is queued when the ring is full. */
static struct io_uring_sqe *sqe_get(struct uring_state *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
	if (!sqe) {
		STAT_ADD(s->stats->io_waits, 1);
		io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
	}
	return sqe;
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

static void recycle(struct uring_state *s, unsigned bid)
{
	io_uring_buf_ring_add(s->br, s->bufs + (size_t)bid * URING_BUF_SIZE, URING_BUF_SIZE, bid,
	                      io_uring_buf_ring_mask(URING_BUFS), 0);
	io_uring_buf_ring_advance(s->br, 1);
}

static void arm_accept(struct uring_state *s, struct worker *w, int li)
{
	struct io_uring_sqe *sqe = sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_multishot_accept(sqe, w->listenfd[li], NULL, NULL,
	                               SOCK_NONBLOCK | SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, UD(UD_ACCEPT, li));
	s->accept_armed[li] = true;
}

static void arm_wake(struct uring_state *s, struct worker *w)
{
	struct io_uring_sqe *sqe = sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, w->wakefd, &s->wake_value, sizeof(s->wake_value), 0);
	io_uring_sqe_set_data64(sqe, UD(UD_WAKE, 0));
}

static void cancel(struct uring_state *s, uint64_t target, int fd)
{
	struct io_uring_sqe *sqe = sqe_get(s);
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, target, 0);
	io_uring_sqe_set_data64(sqe, UD(UD_CANCEL, fd));
}

/* A send SQE of u's flight bytes (from flight.off), with flags and the tag of u's send. */
static void prep_send(struct uring_state *s, struct io_uring_sqe *sqe, struct usock *u, int flags)
{
	io_uring_prep_send(sqe, u->fd, u->flight.data + u->flight.off, buf_pending(&u->flight),
	                   flags | MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, UD(UD_SEND, u->fd));
	STAT_ADD(s->stats->io_sends, 1);
	if (flags & MSG_MORE)
		STAT_ADD(s->stats->io_sends_more, 1);
}

/* The staged bytes become the send in the kernel. */
static void submit_send(struct uring_state *s, struct usock *u, int flags)
{
	struct io_uring_sqe *sqe = sqe_get(s);
	if (!sqe)
		return;
	struct buf t = u->flight;
	u->flight = u->staged;
	u->staged = t;
	u->staged.off = u->staged.len = 0;
	prep_send(s, sqe, u, flags);
	u->flight_flags = flags;
	u->staged_flags = 0;
	u->sending = true;
}

/* Closes u's descriptor once nothing of it is left in the kernel. */
static void finish_close(struct usock *u)
{
	if (u->handler || !u->live || u->recv_armed || u->sending)
		return;
	close(u->fd);
	u->live = false;
	buf_free(&u->spill);
	buf_free(&u->staged);
	buf_free(&u->flight);
}

/* Before waiting: receives armed or cancelled, staged output submitted, closes finished. */
static void flush(struct uring_state *s)
{
	while (s->dirty) {
		struct usock *u = s->dirty;
		s->dirty = u->dirty_next;
		u->on_dirty = false;
		if (!u->live)
			continue;
		bool want_in = u->handler && (u->want & EPOLLIN) && !u->eof && !u->err;
		if (want_in && !u->recv_armed) {
			struct io_uring_sqe *sqe = sqe_get(s);
			if (sqe) {
				io_uring_prep_recv_multishot(sqe, u->fd, NULL, 0, 0);
				sqe->flags |= IOSQE_BUFFER_SELECT;
				sqe->buf_group = URING_BGID;
				io_uring_sqe_set_data64(sqe, UD(UD_RECV, u->fd));
				u->recv_armed = true;
			}
		} else if (!want_in && u->recv_armed && !u->recv_cancelling) {
			cancel(s, UD(UD_RECV, u->fd), u->fd);
			u->recv_cancelling = true;
		}
		if (!u->handler) { /* closed: what cannot go at once is dropped, as by close() */
			if (u->sending && !u->send_cancelling) {
				cancel(s, UD(UD_SEND, u->fd), u->fd);
				u->send_cancelling = true;
			} else if (!u->sending && buf_pending(&u->staged) > 0 && !u->err) {
				submit_send(s, u, MSG_DONTWAIT);
			}
			finish_close(u);
		} else if (!u->sending && buf_pending(&u->staged) > 0 && !u->err) {
			submit_send(s, u, MSG_WAITALL | u->staged_flags);
		}
	}
}

static void on_recv(struct uring_state *s, struct worker *w, const struct engine_upcalls *up,
                    int fd, int res, unsigned flags)
{
	struct usock *u = usock_of(s, fd);
	if (!u || !u->live) {
		if (res > 0 && (flags & IORING_CQE_F_BUFFER))
			recycle(s, flags >> IORING_CQE_BUFFER_SHIFT);
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
		recycle(s, bid);
	} else if (res == 0) {
		u->eof = true;
		mark_pending(s, u);
	} else if (res != -ENOBUFS && res != -ECANCELED) {
		u->err = -res;
		mark_pending(s, u);
	}
}

static void on_send(struct uring_state *s, int fd, int res)
{
	struct usock *u = usock_of(s, fd);
	if (!u || !u->live)
		return;
	if (res < 0) {
		if (u->handler && res != -ECANCELED)
			u->err = -res;
		u->flight.off = u->flight.len = 0;
	} else {
		buf_consume(&u->flight, (size_t)res);
		if (buf_pending(&u->flight) > 0 && u->handler) { /* short: the rest goes on */
			struct io_uring_sqe *sqe = sqe_get(s);
			if (sqe) {
				prep_send(s, sqe, u, MSG_WAITALL | u->flight_flags);
				return;
			}
		}
		u->flight.off = u->flight.len = 0;
	}
	u->sending = u->send_cancelling = false;
	if (!u->handler) {
		mark_dirty(s, u);
		return;
	}
	if (buf_pending(&u->staged) > 0 && !u->err) /* room for more at once: EPOLLOUT */
		submit_send(s, u, MSG_WAITALL | u->staged_flags);
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
			arm_wake(s, w);
			break;
		case UD_ACCEPT:
			if (!(done[i].flags & IORING_CQE_F_MORE))
				s->accept_armed[idx] = false;
			if (res != -ECANCELED)
				up->accepted(w, idx, res);
			if (!s->accept_armed[idx] && s->listening)
				arm_accept(s, w, idx);
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

static int ur_wait(struct worker *w, int timeout_ms)
{
	struct uring_state *s = state(w);
	flush(s);
	int rc;
	bool submit = io_uring_sq_ready(&s->ring) > 0;
	if (timeout_ms == 0 || s->pending) {
		if (submit)
			STAT_ADD(s->stats->io_waits, 1);
		rc = submit ? io_uring_submit(&s->ring) : 0;
	} else {
		if (submit || io_uring_cq_ready(&s->ring) == 0)
			STAT_ADD(s->stats->io_waits, 1);
		struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
		                               .tv_nsec = (timeout_ms % 1000) * 1000000L};
		struct io_uring_cqe *cqe;
		rc = io_uring_submit_and_wait_timeout(&s->ring, &cqe, 1, &ts, NULL);
	}
	if (rc >= 0 || rc == -ETIME || rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
		return 0;
	errno = -rc;
	return -1;
}

static void ur_listen(struct worker *w, bool on)
{
	struct uring_state *s = state(w);
	s->listening = on;
	for (int i = 0; i < w->nlisten; i++) {
		if (on && !s->accept_armed[i])
			arm_accept(s, w, i);
		else if (!on && s->accept_armed[i])
			cancel(s, UD(UD_ACCEPT, i), -1);
	}
}

static int ur_add(struct worker *w, int fd, void *handler, uint32_t events)
{
	struct uring_state *s = state(w);
	if (fd >= s->nsocks) {
		int n = s->nsocks ? s->nsocks : 64;
		while (n <= fd)
			n *= 2;
		struct usock **t = realloc(s->socks, (size_t)n * sizeof(*t));
		if (!t)
			return -1;
		memset(t + s->nsocks, 0, (size_t)(n - s->nsocks) * sizeof(*t));
		s->socks = t;
		s->nsocks = n;
	}
	struct usock *u = s->socks[fd];
	if (!u && !(u = s->socks[fd] = calloc(1, sizeof(*u))))
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
	struct usock *u = usock_of(s, fd);
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
	struct usock *u = usock_of(state(w), fd);
	if (!u || !u->live) {
		errno = EBADF;
		return -1;
	}
	size_t n = 0, k;
	if ((k = buf_pending(&u->spill)) > 0) {
		n = k < cap ? k : cap;
		memcpy(buf, u->spill.data + u->spill.off, n);
		buf_consume(&u->spill, n);
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
	struct usock *u = usock_of(s, fd);
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
	if (buf_append(&u->staged, buf, n) < 0) {
		errno = ENOMEM;
		return -1;
	}
	u->staged_flags = n < len ? MSG_MORE : flags & MSG_MORE;
	mark_dirty(s, u);
	return (ssize_t)n;
}

static void ur_close(struct worker *w, int fd)
{
	struct uring_state *s = state(w);
	struct usock *u = usock_of(s, fd);
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
	struct uring_state *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN,
	                            .cq_entries = 4 * URING_ENTRIES};
	int rc = io_uring_queue_init_params(URING_ENTRIES, &s->ring, &p);
	if (rc == -EINVAL) { /* a kernel before 5.19 knows no COOP_TASKRUN */
		memset(&p, 0, sizeof(p));
		rc = io_uring_queue_init_params(URING_ENTRIES, &s->ring, &p);
	}
	if (rc < 0) {
		snprintf(why, whylen, "io_uring_setup: %s", strerror(-rc));
		free(s);
		return -1;
	}
	const char *fail = NULL;
	if (!(p.features & IORING_FEAT_EXT_ARG))
		fail = "kernel without IORING_FEAT_EXT_ARG (5.11)";
	size_t ringsz = URING_BUFS * sizeof(struct io_uring_buf);
	if (!fail) {
		s->br =
		    mmap(NULL, ringsz, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
		s->bufs = malloc((size_t)URING_BUFS * URING_BUF_SIZE);
		if (s->br == MAP_FAILED || !s->bufs)
			fail = "out of memory for the receive buffers";
	}
	if (!fail) {
		/* liburing 2.3 has no io_uring_setup_buf_ring: registered by hand. */
		struct io_uring_buf_reg reg = {
		    .ring_addr = (uintptr_t)s->br, .ring_entries = URING_BUFS, .bgid = URING_BGID};
		io_uring_buf_ring_init(s->br);
		if ((rc = io_uring_register_buf_ring(&s->ring, &reg, 0)) < 0) {
			snprintf(why, whylen, "io_uring_register_buf_ring: %s", strerror(-rc));
			fail = why;
		}
	}
	if (fail) {
		if (fail != why)
			snprintf(why, whylen, "%s", fail);
		io_uring_queue_exit(&s->ring);
		if (s->br && s->br != MAP_FAILED)
			munmap(s->br, ringsz);
		free(s->bufs);
		free(s);
		return -1;
	}
	for (unsigned i = 0; i < URING_BUFS; i++)
		io_uring_buf_ring_add(s->br, s->bufs + (size_t)i * URING_BUF_SIZE, URING_BUF_SIZE,
		                      i, io_uring_buf_ring_mask(URING_BUFS), (int)i);
	io_uring_buf_ring_advance(s->br, URING_BUFS);
	w->engine_state = s;
	s->stats = &w->stats;
	arm_wake(s, w);
	ur_listen(w, true);
	return 0;
}

static void ur_teardown(struct worker *w)
{
	struct uring_state *s = state(w);
	if (!s)
		return;
	io_uring_queue_exit(&s->ring); /* ends what is still in the kernel */
	for (int fd = 0; fd < s->nsocks; fd++) {
		struct usock *u = s->socks[fd];
		if (!u)
			continue;
		if (u->live)
			close(fd);
		buf_free(&u->spill);
		buf_free(&u->staged);
		buf_free(&u->flight);
		free(u);
	}
	free(s->socks);
	munmap(s->br, URING_BUFS * sizeof(struct io_uring_buf));
	free(s->bufs);
	free(s);
	w->engine_state = NULL;
}

const struct engine_ops engine_uring = ENGINE_OPS(ur, "io_uring");
