/*
 * The worker's waking queue (conn.h): connections whose task resumes at a set time, in
 * the order they were queued. A FIFO rather than a heap: its users queue a fixed delay
 * after the request's time, so the order of the calls is the order of the times, and
 * taking, queueing and dropping are O(1) however many connections wait.
 */
#include "server/clock.h"
#include "server/conn.h"

void conn_wake_cancel(struct conn *c)
{
	struct worker *w = c->w;
	if (!c->wake_queued)
		return;
	if (c->wake_prev)
		c->wake_prev->wake_next = c->wake_next;
	else
		w->waking = c->wake_next;
	if (c->wake_next)
		c->wake_next->wake_prev = c->wake_prev;
	else
		w->waking_last = c->wake_prev;
	c->wake_queued = false;
	w->wake_ns = w->waking ? w->waking->wake_ns : 0;
}

void conn_wake_at(struct conn *c, uint64_t ns)
{
	struct worker *w = c->w;
	conn_wake_cancel(c);
	c->wake_ns = ns;
	c->wake_queued = true;
	c->wake_next = NULL;
	c->wake_prev = w->waking_last;
	if (w->waking_last)
		w->waking_last->wake_next = c;
	else
		w->waking = c;
	w->waking_last = c;
	w->wake_ns = w->waking->wake_ns;
}

void conn_wake_due(struct worker *w)
{
	if (!w->waking)
		return;
	uint64_t now = clock_ns();
	while (w->waking && w->waking->wake_ns <= now) {
		struct conn *c = w->waking;
		conn_wake_cancel(c);
		conn_make_ready(c);
	}
}
