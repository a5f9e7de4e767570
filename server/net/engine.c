/* Choosing a worker's engine (engine.h): io_uring when asked for and allowed, else epoll. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/net/engine.h"
#include "server/log.h"

/* Why io_uring may not be used, from the kernel's switch (0: allowed), into why. */
static bool uring_forbidden(char *why, size_t whylen)
{
	const char *path = getenv("MINIDIR_IO_URING_DISABLED_FILE");
	if (!path || !*path)
		path = "/proc/sys/kernel/io_uring_disabled";
	FILE *f = fopen(path, "re");
	if (!f)
		return false; /* an older kernel has no switch: setup tells */
	int v = 0;
	/* 2: nobody may; 1: only root and io_uring_group, which setup finds out. */
	bool forbidden = fscanf(f, "%d", &v) == 1 && v >= 2;
	fclose(f);
	if (forbidden)
		snprintf(why, whylen, "%s is %d", path, v);
	return forbidden;
}

int engine_setup(struct worker *w, enum io_engine want)
{
	char why[256] = "";
	if (want == IO_ENGINE_IO_URING) {
		if (!uring_forbidden(why, sizeof(why)) &&
		    engine_uring.setup(w, why, sizeof(why)) == 0) {
			net_worker(w)->engine = &engine_uring;
			return 0;
		}
		log_info("worker %d: io_engine io_uring unavailable (%s); using epoll", w->id, why);
	}
	if (engine_epoll.setup(w, why, sizeof(why)) < 0) {
		log_error("worker %d: %s", w->id, why);
		return -1;
	}
	net_worker(w)->engine = &engine_epoll;
	return 0;
}
