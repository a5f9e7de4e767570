/*
 * The worker's waking queue (conn.h): tasks that resume at a set time, in the order of
 * their times. A list rather than a heap: a failed bind queues a fixed delay after the
 * request's time, so the order of the calls is the order of the times and an entry goes
 * at the end, in O(1); an earlier time (a chain_passwd change polling, op_chain.c) walks
 * back from the end past the later ones only. Taking and dropping are O(1).
 *
 * With the ready list, below both its callers in the room: conn_input.c (a request for a
 * task that waits for it) and conn_life.c (the ready list's turn), which calls
 * conn_input.c; inside conn_life.c it would close a circle of calls.
 */
#include "server/clock.h"
#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/net_worker.h"

void conn_make_ready(struct conn *c)
{
	if (CI(c)->in_ready)
		return;
	CI(c)->in_ready = true;
	CI(c)->ready_next = net_worker(c->w)->ready;
	net_worker(c->w)->ready = CI(c);
}

void conn_wake_cancel(struct conn_wake *wk)
{
	if (!wk->queued)
		return;
	struct worker *w = wk->c->w;
	struct net_worker *nw = net_worker(w);
	if (wk->prev)
		wk->prev->next = wk->next;
	else
		nw->waking = wk->next;
	if (wk->next)
		wk->next->prev = wk->prev;
	else
		nw->waking_last = wk->prev;
	wk->queued = false;
	nw->wake_ns = nw->waking ? nw->waking->ns : 0;
}

void conn_wake_at(struct conn_wake *wk, struct conn *c, uint64_t ns)
{
	conn_wake_cancel(wk);
	struct worker *w = c->w;
	struct net_worker *nw = net_worker(w);
	struct conn_wake *after = nw->waking_last;
	while (after && after->ns > ns)
		after = after->prev;
	*wk = (struct conn_wake){.c = c, .ns = ns, .queued = true, .prev = after};
	wk->next = after ? after->next : nw->waking;
	if (after)
		after->next = wk;
	else
		nw->waking = wk;
	if (wk->next)
		wk->next->prev = wk;
	else
		nw->waking_last = wk;
	nw->wake_ns = nw->waking->ns;
}

void conn_wake_due(struct worker *w)
{
	struct net_worker *nw = net_worker(w);
	if (!nw->waking)
		return;
	uint64_t now = clock_ns();
	while (nw->waking && nw->waking->ns <= now) {
		struct conn_wake *wk = nw->waking;
		conn_wake_cancel(wk);
		conn_make_ready(wk->c);
	}
}
