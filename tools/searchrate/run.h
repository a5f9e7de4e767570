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
#include <stdbool.h>
#include <stdint.h>

#include "tools/searchrate/options.h"

#include "tools/searchrate/stats.h"

struct sr_run;
struct sr_worker;
struct sr_lean;

/*
 * A load engine: the libldap one (worker.h) or the lean one (lean.h). The main thread calls
 * create, connect, start; then, every interval, collect; then sets stop and calls join; free
 * last (also after a failure anywhere). worker.h documents each step.
 */
struct sr_engine {
	const char *name;
	void (*create)(struct sr_run *run, uint64_t seed);
	bool (*connect)(struct sr_run *run);
	bool (*start)(struct sr_run *run);
	int (*join)(struct sr_run *run);
	void (*collect)(struct sr_run *run, struct stats *into, struct stats *scratch);
	void (*free)(struct sr_run *run);
};

struct sr_run {
	struct sr_config cfg;
	const struct sr_engine *engine; /* as cfg.engine says */
	atomic_bool stop;               /* set once by the main thread; the load threads then end */
	struct sr_worker *workers;      /* the libldap engine's threads, cfg.threads of them */
	struct sr_lean *lean;           /* the lean engine's threads, cfg.threads of them */
};

#endif
