/*
 * The epoll engine (engine.h): level-triggered epoll over the wake-up eventfd,
 * the worker's listeners and its connections; recv, send and close are the
 * system calls themselves. A listener's readiness goes up as listener_ready, and
 * the worker accepts. A listener not watched is out of the set, not in it with no
 * events: a socket held bound but not listening (listen_after_refresh) is "hung up"
 * to epoll, which reports EPOLLHUP whatever the events asked for, and each round's
 * accept would fail with EINVAL.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/net/engine.h"

#define EPOLL_EVENTS 128
/* epoll data of what is not a connection: the wake-up descriptor, listener i as i + 2. */
#define TAG_WAKE ((void *)1)
#define TAG_LISTENER(i) ((void *)(intptr_t)((i) + 2))

struct epoll_state {
	int epfd;
	int n;         /* events from the last wait */
	bool watching; /* the listeners are in the set */
	struct epoll_event events[EPOLL_EVENTS];
};

static struct epoll_state *state(struct worker *w)
{
	return net_worker(w)->engine_state;
}

static int ep_setup(struct worker *w, char *why, size_t whylen)
{
	struct net_worker *nw = net_worker(w);
	struct epoll_state *s = calloc(1, sizeof(*s));
	if (!s || (s->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		snprintf(why, whylen, "epoll_create1: %s", strerror(errno));
		free(s);
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = TAG_WAKE};
	int rc = epoll_ctl(s->epfd, EPOLL_CTL_ADD, nw->wakefd, &ev);
	for (int i = 0; rc == 0 && !nw->listen_paused && i < nw->nlisten; i++) {
		ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = TAG_LISTENER(i)};
		rc = epoll_ctl(s->epfd, EPOLL_CTL_ADD, nw->listenfd[i], &ev);
	}
	s->watching = !nw->listen_paused;
	if (rc < 0) {
		snprintf(why, whylen, "epoll_ctl: %s", strerror(errno));
		close(s->epfd);
		free(s);
		return -1;
	}
	nw->engine_state = s;
	return 0;
}

static void ep_teardown(struct worker *w)
{
	struct epoll_state *s = state(w);
	if (!s)
		return;
	close(s->epfd);
	free(s);
	net_worker(w)->engine_state = NULL;
}

static void ep_listen(struct worker *w, bool on)
{
	struct epoll_state *s = state(w);
	if (s->watching == on)
		return;
	for (int i = 0; i < net_worker(w)->nlisten; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = TAG_LISTENER(i)};
		epoll_ctl(s->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, net_worker(w)->listenfd[i],
		          &ev);
	}
	s->watching = on;
}

static int ep_add(struct worker *w, int fd, void *handler, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = handler};
	return epoll_ctl(state(w)->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_watch(struct worker *w, int fd, void *handler, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = handler};
	epoll_ctl(state(w)->epfd, EPOLL_CTL_MOD, fd, &ev);
}

static ssize_t ep_recv(struct worker *w, int fd, void *buf, size_t cap)
{
	(void)w;
	ssize_t n;
	do
		n = recv(fd, buf, cap, 0);
	while (n < 0 && errno == EINTR);
	return n;
}

static ssize_t ep_send(struct worker *w, int fd, const void *buf, size_t len, int flags)
{
	STAT_ADD(w->stats.io_sends, 1);
	if (flags & MSG_MORE)
		STAT_ADD(w->stats.io_sends_more, 1);
	ssize_t n;
	do
		n = send(fd, buf, len, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

/* A system call copies the bytes into the socket: b keeps its storage. */
static ssize_t ep_send_buf(struct worker *w, int fd, struct buf *b, size_t len, int flags)
{
	ssize_t n = ep_send(w, fd, b->data + b->off, len, flags);
	if (n > 0)
		buf_consume(b, (size_t)n);
	return n;
}

/* Sends are system calls: what was taken is in the socket already. */
static int ep_set_option(struct worker *w, int fd, int level, int opt, int on)
{
	(void)w;
	return setsockopt(fd, level, opt, &on, sizeof(on));
}

static void ep_close(struct worker *w, int fd)
{
	(void)w;
	close(fd); /* also leaves the epoll set */
}

static int ep_wait(struct worker *w, uint64_t timeout_ns)
{
	struct epoll_state *s = state(w);
	STAT_ADD(w->stats.io_waits, 1);
	struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
	                      .tv_nsec = (long)(timeout_ns % 1000000000u)};
	s->n = epoll_pwait2(s->epfd, s->events, EPOLL_EVENTS, &ts, NULL);
	if (s->n < 0 && errno == ENOSYS) /* before Linux 5.11: milliseconds, rounded up */
		s->n = epoll_wait(s->epfd, s->events, EPOLL_EVENTS,
		                  (int)((timeout_ns + 999999u) / 1000000u));
	if (s->n >= 0)
		return 0;
	s->n = 0;
	return errno == EINTR ? 0 : -1;
}

static void ep_dispatch(struct worker *w, const struct engine_upcalls *up)
{
	struct epoll_state *s = state(w);
	for (int i = 0; i < s->n; i++) {
		void *ptr = s->events[i].data.ptr;
		intptr_t tag = (intptr_t)ptr;
		if (ptr == TAG_WAKE)
			continue;
		if (tag >= 2 && tag < 2 + net_worker(w)->nlisten)
			up->listener_ready(w, (int)(tag - 2));
		else
			up->event(w, ptr, s->events[i].events);
	}
	s->n = 0;
}

const struct engine_ops engine_epoll = ENGINE_OPS(ep, "epoll");
