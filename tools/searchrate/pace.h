/*
 * pace.h: --ratePerSecond for one load thread: a send is allowed once per period (the
 * thread's share of the total rate); far behind (a stall of over a second), the schedule
 * restarts from now rather than sending a burst.
 */
#ifndef SEARCHRATE_PACE_H
#define SEARCHRATE_PACE_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/searchrate/options.h"
#include "tools/searchrate/util.h"

struct sr_pacer {
	uint64_t period_ns; /* 0: no rate limit */
	uint64_t next_send;
};

/* The pacer of one of cfg->threads threads. */
static inline void pacer_init(struct sr_pacer *p, const struct sr_config *cfg)
{
	p->period_ns = 0;
	if (cfg->rate > 0)
		p->period_ns = (uint64_t)((double)NS_PER_SEC * cfg->threads / cfg->rate);
	if (cfg->rate > 0 && !p->period_ns)
		p->period_ns = 1;
	p->next_send = now_ns();
}

/* true: one send may go now (and is counted); false: not before the time lowered into *wake. */
static inline bool pacer_take(struct sr_pacer *p, uint64_t *wake)
{
	if (!p->period_ns)
		return true;
	uint64_t now = now_ns();
	if (now < p->next_send) {
		if (p->next_send < *wake)
			*wake = p->next_send;
		return false;
	}
	if (now - p->next_send > NS_PER_SEC) /* far behind: resume, no burst */
		p->next_send = now;
	p->next_send += p->period_ns;
	return true;
}

/* A failed reconnect: the wait before the next try doubles from 50 ms up to 1 s; returns
 * the time of that try. */
static inline uint64_t backoff_next(uint64_t *backoff_ns, uint64_t now)
{
	*backoff_ns = *backoff_ns ? *backoff_ns * 2 : 50 * NS_PER_MS;
	if (*backoff_ns > NS_PER_SEC)
		*backoff_ns = NS_PER_SEC;
	return now + *backoff_ns;
}

#endif
