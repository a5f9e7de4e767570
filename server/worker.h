/* The worker event loop (struct worker is in server.h). */
#ifndef MINIDIR_SERVER_WORKER_H
#define MINIDIR_SERVER_WORKER_H

#include "server/server.h"

/* Adds the wake-up descriptor and the listening sockets to w's epoll set. */
int worker_register(struct worker *w);
/* The thread body: runs until srv->stopping is set and w->wakefd is signalled. */
void *worker_main(void *arg);

#endif
