/*
 * run.h: the one struct a searchrate run shares between its threads: the configuration
 * (written before the load threads start, read-only afterwards), the stop flag, and the
 * load threads themselves. It is passed explicitly; searchrate has no global mutable state.
 * SIGINT and SIGTERM are blocked in every thread and taken by the main thread with
 * sigtimedwait (main.c), which then sets stop: no signal handler touches anything.
 */
#ifndef SEARCHRATE_RUN_H
#define SEARCHRATE_RUN_H

#include <stdatomic.h>

#include "tools/searchrate/options.h"

struct sr_worker;

struct sr_run {
	struct sr_config cfg;
	atomic_bool stop;          /* set once by the main thread; the load threads then end */
	struct sr_worker *workers; /* cfg.threads of them (worker.h) */
};

#endif
