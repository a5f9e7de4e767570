/*
 * A test rig for the I/O engines (server/net/engine.h): a worker with an engine's ops, no
 * listeners and upcalls that drop events (the checks read the peer themselves), and a
 * socket pair whose fd is added to it. Header-only, for tests/server's engine tests.
 */
#ifndef MINIDIR_TESTS_SERVER_ENGINE_RIG_H
#define MINIDIR_TESTS_SERVER_ENGINE_RIG_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/net/engine.h"

/* The loop's upcalls: the checks read the peer themselves, so events are dropped. */
static inline void on_listener(struct worker *w, int li)
{
	(void)w, (void)li;
}
static inline void on_accepted(struct worker *w, int li, int fd)
{
	(void)w, (void)li, (void)fd;
}
static inline void on_event(struct worker *w, void *handler, uint32_t events)
{
	(void)w, (void)handler, (void)events;
}
static const struct engine_upcalls upcalls = {
    .listener_ready = on_listener, .accepted = on_accepted, .event = on_event};

struct rig {
	struct net_worker nw;
	struct worker *w;
	int fd, peer;
};

/* A worker with engine ops (no listeners) and a socket pair, fd added to it. Returns
 * false, said on stderr, when the engine cannot be set up here (io_uring forbidden). */
static inline bool rig_open(struct rig *r, const struct engine_ops *ops)
{
	memset(r, 0, sizeof(*r));
	r->w = (struct worker *)&r->nw;
	r->nw.engine = ops;
	r->nw.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(r->nw.wakefd, 0);
	char why[256];
	if (ops->setup(r->w, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s not checked here: %s\n", program_invocation_short_name,
		        ops->name, why);
		close(r->nw.wakefd);
		return false;
	}
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	r->fd = sv[0];
	r->peer = sv[1];
	ck_assert_int_eq(engine_add(r->w, r->fd, r, EPOLLIN), 0);
	return true;
}

static inline void rig_close(struct rig *r)
{
	engine_close(r->w, r->fd);
	r->nw.engine->teardown(r->w);
	close(r->peer);
	close(r->nw.wakefd);
}

#endif
