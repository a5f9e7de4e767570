/*
 * The worker event loop (over struct net_worker, net_worker.h): its engine (engine.h:
 * epoll or io_uring) over the worker's listening sockets and its connections, the spare descriptor
 * for running out of them, a sweep once a second. It knows nothing of connections: what to do with
 * a new socket, with events on a registered descriptor, with the ready list and at the sweep, the
 * layer above says through struct worker_hooks. The room's own; worker_main, the thread
 * body start-up runs, is declared in net.h.
 */
#ifndef MINIDIR_SERVER_NET_WORKER_H
#define MINIDIR_SERVER_NET_WORKER_H

#include <stdint.h>
#include <time.h>

struct listen_addr;
struct worker;

/* The layer above the loop (conn_life.c's conn_worker_hooks), called on the worker's thread. */
struct worker_hooks {
	/* A freshly accepted non-blocking socket, now the hook's to keep or close
	 * (returns 0, or -1 when it closed it), and its listener's address (srv->cfg's). */
	int (*accepted)(struct worker *w, int fd, const struct listen_addr *la);
	/* Events for a socket the layer above added with engine_add(..., handler, ...). */
	void (*event)(void *handler, uint32_t events);
	/* After each round of events: continue what is on w's ready. */
	void (*run_ready)(struct worker *w);
	/* Once a second (CLOCK_MONOTONIC seconds now): timeouts, idle memory. */
	void (*sweep)(struct worker *w, time_t now);
	/* The loop is stopping: close everything. */
	void (*stop)(struct worker *w);
};

/*
 * A descriptor of w's was closed: takes back the spare descriptor if it was lost
 * to another thread, and listens again if accepting had stopped for lack of one.
 */
void worker_fd_freed(struct worker *w);

#endif
