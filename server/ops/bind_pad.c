/* A failed bind answered at its time: see bind_pad.h. */
#include "server/ops/bind_pad.h"

#include <ldap.h>
#include <stdlib.h>

#include "server/clock.h"
#include "server/db/db.h"
#include "server/net/reply.h"
#include "server/ops/ops.h"

/*
 * A failed bind's answer, waiting for its time (op_start_ns + bind_pad_ns() below) as
 * c's task: the worker serves its other connections meanwhile, and
 * c's later requests wait their turn as behind any task.
 */
struct bind_pad {
	struct conn_task task; /* first: a conn_task * is a bind_pad * */
	struct conn_wake wake;
	struct buf controls; /* the answer's [0] Controls (empty: none) */
};

static void bind_pad_free(struct conn_task *t)
{
	struct bind_pad *p = (struct bind_pad *)t;
	conn_wake_cancel(&p->wake); /* closed or abandoned before its time */
	buf_free(&p->controls);
	free(p);
}

/* A failed bind's answer, with controls (a whole [0] Controls; empty: none). */
static void bind_fail_answer(struct conn *c, int32_t msgid, const struct buf *controls)
{
	struct result_extra x = {.controls = controls->data, .clen = controls->len};
	reply_begin(c);
	reply_result(c, msgid, LDAP_RES_BIND, LDAP_INVALID_CREDENTIALS, NULL, NULL, &x);
}

static void bind_pad_resume(struct conn *c)
{
	struct bind_pad *p = (struct bind_pad *)c->task;
	if (clock_ns() < p->wake.ns)
		return; /* woken early (the socket took output): still queued */
	c->task = NULL;
	bind_fail_answer(c, p->task.msgid, &p->controls);
	bind_pad_free(&p->task);
}

/*
 * How long after it was read a failed bind is answered: at least the generation's
 * bind_pad_ns (measured at start-up), more while checks take longer (a busy machine; a
 * client keeping the worker busy with costly ones): three times the worker's running
 * average of how long failed binds took to check (each counts for 1/16; an average, not the
 * slowest, so that one stall of the machine does not hold back every answer for long).
 * A bind's own check (took_ns) counts for the binds after it, not for itself, so that
 * its answer's time does not follow its cost.
 */
static uint64_t bind_pad_ns(struct worker *w, uint64_t took_ns)
{
	uint64_t pad = 3 * ops_worker(w)->bind_took_ns;
	if (pad < db_worker(w)->gen->bind_pad_ns)
		pad = db_worker(w)->gen->bind_pad_ns;
	if (took_ns > ops_worker(w)->bind_took_ns)
		ops_worker(w)->bind_took_ns += (took_ns - ops_worker(w)->bind_took_ns) / 16;
	else
		ops_worker(w)->bind_took_ns -= (ops_worker(w)->bind_took_ns - took_ns) / 16;
	return pad;
}

void bind_fail_padded(struct conn *c, int32_t msgid, struct buf *controls)
{
	uint64_t now = clock_ns(), start = c->op_start_ns ? c->op_start_ns : now;
	uint64_t due = start + bind_pad_ns(c->w, now - start);
	struct bind_pad *p = now < due ? malloc(sizeof(*p)) : NULL;
	if (!p) { /* already late (a slow check), or out of memory: answered now */
		bind_fail_answer(c, msgid, controls);
		buf_free(controls);
		return;
	}
	*p = (struct bind_pad){
	    .task = {.msgid = msgid, .resume = bind_pad_resume, .free = bind_pad_free},
	    .controls = *controls};
	*controls = (struct buf){0};
	c->task = &p->task;
	conn_wake_at(&p->wake, c, due);
}
