/*
 * The I/O engine under a worker's event loop: how the loop waits, and how a
 * connection's socket is read, written and closed. Two implementations, chosen
 * per worker by io_engine: engine_epoll.c (readiness: epoll_wait, then recv and
 * send) and engine_uring.c (completions: multishot accept and receive into a
 * ring of provided buffers, sends gathered per connection and submitted for all
 * of the loop's connections at once, one io_uring_enter per round).
 *
 * Both speak the readiness language of the layer above, so the connection code
 * is the same on either: a socket is added with a handler and an event mask
 * (EPOLLIN, EPOLLOUT), events come back through engine_upcalls.event, and
 * engine_recv / engine_send behave as recv / send on a non-blocking socket (bytes,
 * 0 at end of stream, -1 with errno EAGAIN when nothing can move now). On
 * io_uring "sent" means handed to the engine, which keeps at most
 * ENGINE_SEND_HELD bytes per connection beyond the send in the kernel: past that,
 * EAGAIN, and EPOLLOUT once the kernel has taken them. A socket is identified by
 * its descriptor; the engine closes it (engine_close), on io_uring once nothing
 * of it is left in the kernel.
 *
 * The room's lowest header but net_worker.h (the worker's data, which its calls read):
 * it includes nothing else of the server. Which engine a worker gets (io_uring when asked
 * for and allowed, else epoll) is chosen at start-up by listeners.c (start_engines).
 *
 * Thread rules: setup runs before the worker's thread starts; everything else on the
 * worker's thread.
 */
#ifndef MINIDIR_SERVER_NET_ENGINE_H
#define MINIDIR_SERVER_NET_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "server/net/net_worker.h"

struct buf;
struct worker;

/* Bytes of output a connection may have waiting in the io_uring engine (beyond the send
 * the kernel is working on) before engine_send says EAGAIN. */
#define ENGINE_SEND_HELD (256 * 1024)

/* The loop above the engine (worker.c), called from the engine's dispatch (struct engine_ops). */
struct engine_upcalls {
	/* Listener li of w is readable (epoll): accept from it. */
	void (*listener_ready)(struct worker *w, int li);
	/* The kernel accepted fd on listener li (io_uring), or failed with -errno (fd < 0).
	 * A descriptor is the callee's to keep or close. */
	void (*accepted)(struct worker *w, int li, int fd);
	/* Events (EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR) for the handler of an added socket. */
	void (*event)(struct worker *w, void *handler, uint32_t events);
};

/* One implementation (engine_epoll.c, engine_uring.c). */
struct engine_ops {
	const char *name;
	/* Prepares w's loop: the wake-up descriptor and w's listeners watched. Returns 0, or
	 * -1 with why[0..whylen) telling (nothing is left to tear down). */
	int (*setup)(struct worker *w, char *why, size_t whylen);
	/* Closes every socket still held and frees the engine's state. */
	void (*teardown)(struct worker *w);
	/* Watches w's listeners (on) or stops (off; their backlog waits in the kernel). */
	void (*listen)(struct worker *w, bool on);
	int (*add)(struct worker *w, int fd, void *handler, uint32_t events);
	void (*watch)(struct worker *w, int fd, void *handler, uint32_t events);
	ssize_t (*recv)(struct worker *w, int fd, void *buf, size_t cap);
	ssize_t (*send)(struct worker *w, int fd, const void *buf, size_t len, int flags);
	ssize_t (*send_buf)(struct worker *w, int fd, struct buf *b, size_t len, int flags);
	int (*set_option)(struct worker *w, int fd, int level, int opt, int on);
	void (*close)(struct worker *w, int fd);
	/* Waits for events, at most timeout_ns nanoseconds (0: only those already there;
	 * below a millisecond counts: a padded bind's answer is due then, worker.c). Returns
	 * 0 (events, the time passed or a signal), or -1 with errno. */
	int (*wait)(struct worker *w, uint64_t timeout_ns);
	void (*dispatch)(struct worker *w, const struct engine_upcalls *up);
};

/* An implementation's table from its functions PREFIX_setup, PREFIX_teardown, ... */
#define ENGINE_OPS(prefix, engine_name)                                                            \
	{                                                                                          \
		.name = engine_name, .setup = prefix##_setup, .teardown = prefix##_teardown,       \
		.listen = prefix##_listen, .add = prefix##_add, .watch = prefix##_watch,           \
		.recv = prefix##_recv, .send = prefix##_send, .send_buf = prefix##_send_buf,       \
		.set_option = prefix##_set_option, .close = prefix##_close, .wait = prefix##_wait, \
		.dispatch = prefix##_dispatch,                                                     \
	}

extern const struct engine_ops engine_epoll;
extern const struct engine_ops engine_uring;

/* Starts watching socket fd for events (EPOLLIN and/or EPOLLOUT) for handler.
 * Returns 0, or -1 with errno (fd is still the caller's). */
static inline int engine_add(struct worker *w, int fd, void *handler, uint32_t events)
{
	return net_worker(w)->engine->add(w, fd, handler, events);
}
/* Changes the events fd is watched for. */
static inline void engine_watch(struct worker *w, int fd, void *handler, uint32_t events)
{
	net_worker(w)->engine->watch(w, fd, handler, events);
}
/* As recv(fd, buf, cap, 0) on a non-blocking socket: bytes copied into buf, 0 at end of
 * stream, -1 with errno (EAGAIN: nothing now). */
static inline ssize_t engine_recv(struct worker *w, int fd, void *buf, size_t cap)
{
	return net_worker(w)->engine->recv(w, fd, buf, cap);
}
/* As send(fd, buf, len, flags | MSG_NOSIGNAL) on a non-blocking socket: bytes taken
 * (buf is borrowed for the call only), or -1 with errno (EAGAIN: none now, EPOLLOUT
 * follows once some can go). flags: 0, MSG_MORE (more of the response follows),
 * MSG_DONTWAIT (what cannot go at once is dropped). */
static inline ssize_t engine_send(struct worker *w, int fd, const void *buf, size_t len, int flags)
{
	return net_worker(w)->engine->send(w, fd, buf, len, flags);
}
/* As engine_send of the first len pending bytes of b (len <= buf_pending(b)), and what
 * was taken is consumed from b. The engine may take b's storage instead of copying
 * from it (io_uring, when nothing of fd's is staged: the bytes are then not copied
 * again before the kernel's send), leaving b empty with other storage, possibly none:
 * no pointer into b->data survives the call. b stays the caller's, to free. */
static inline ssize_t engine_send_buf(struct worker *w, int fd, struct buf *b, size_t len,
                                      int flags)
{
	return net_worker(w)->engine->send_buf(w, fd, b, len, flags);
}
/* As setsockopt(fd, level, opt, &on, sizeof(on)), in order with the output: it applies
 * after the bytes engine_send took (cork-toggle's TCP_CORK off must come after the
 * response it pushes). On io_uring what is staged is submitted first, and the kernel
 * takes it at once unless the socket is full. Returns setsockopt's result. */
static inline int engine_set_option(struct worker *w, int fd, int level, int opt, int on)
{
	return net_worker(w)->engine->set_option(w, fd, level, opt, on);
}
/* Stops watching fd and closes it (output already taken is still sent, as by close()). */
static inline void engine_close(struct worker *w, int fd)
{
	net_worker(w)->engine->close(w, fd);
}

#endif
