/* The worker event loop (struct worker is in server.h). */
#ifndef MINIDIR_SERVER_WORKER_H
#define MINIDIR_SERVER_WORKER_H

#include "server/server.h"

/* Adds the wake-up descriptor and the listening sockets to w's epoll set. */
int worker_register(struct worker *w);
/* The thread body: runs until srv->stopping is set and w->wakefd is signalled. */
void *worker_main(void *arg);

/*
 * A descriptor of w's was closed: takes back the spare descriptor if it was lost
 * to another thread, and listens again if accepting had stopped for lack of one.
 */
void worker_fd_freed(struct worker *w);

#endif
