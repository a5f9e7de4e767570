/*
 * A worker's event loop: accept on its own listening sockets, serve its own
 * connections, continue yielded searches, stop when woken by the main thread.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include "server/conn.h"
#include "server/log.h"
#include "server/worker.h"

#define WORKER_EVENTS 128
/* Tags for epoll data that are not connections. */
#define TAG_WAKE ((void *)1)

static bool is_listener(const struct worker *w, void *ptr, int *fd)
{
	intptr_t v = (intptr_t)ptr;
	for (int i = 0; i < w->nlisten; i++)
		if (v == (intptr_t)(i + 2)) {
			*fd = w->listenfd[i];
			return true;
		}
	return false;
}

/* Out of descriptors: shed one pending connection so the listener stops firing. */
static void shed_connection(struct worker *w, int lfd)
{
	if (w->reservefd >= 0) {
		close(w->reservefd);
		int fd = accept(lfd, NULL, NULL);
		if (fd >= 0)
			close(fd);
		w->reservefd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	log_error("worker %d: out of file descriptors; refusing connections", w->id);
}

static void accept_all(struct worker *w, int lfd)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				shed_connection(w, lfd);
			else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			         errno != ECONNABORTED)
				log_error("worker %d: accept: %s", w->id, strerror(errno));
			return;
		}
		conn_accept(w, fd);
	}
}

static void run_ready(struct worker *w)
{
	struct conn *list = w->ready;
	w->ready = NULL;
	while (list) {
		struct conn *c = list;
		list = c->ready_next;
		conn_resume(c);
	}
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event events[WORKER_EVENTS];
	time_t last_sweep = conn_now();
	for (;;) {
		/* Wakes once a second at most, to close clients past write_timeout or idle_timeout.
		 */
		int n = epoll_wait(w->epfd, events, WORKER_EVENTS, w->ready ? 0 : 1000);
		if (n < 0 && errno != EINTR) {
			log_error("worker %d: epoll_wait: %s", w->id, strerror(errno));
			break;
		}
		if (w->srv->stopping)
			break;
		for (int i = 0; i < n; i++) {
			void *ptr = events[i].data.ptr;
			int lfd;
			if (ptr == TAG_WAKE)
				continue;
			if (is_listener(w, ptr, &lfd))
				accept_all(w, lfd);
			else
				conn_event(ptr, events[i].events);
		}
		run_ready(w);
		time_t now = conn_now();
		if (now != last_sweep) {
			last_sweep = now;
			for (struct conn *c = w->conns, *next; c; c = next) {
				next = c->next;
				conn_check_timeouts(c, now);
			}
		}
	}
	while (w->conns)
		conn_close(w->conns, "server stopping");
	return NULL;
}

int worker_register(struct worker *w)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = TAG_WAKE};
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &ev) < 0)
		return -1;
	for (int i = 0; i < w->nlisten; i++) {
		ev.data.ptr = (void *)(intptr_t)(i + 2);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->listenfd[i], &ev) < 0)
			return -1;
	}
	return 0;
}
