/* A bind checked by the provider: see bind_passthrough.h. */
#include "server/ops/bind_passthrough.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "server/bind_limit.h"
#include "server/clock.h"
#include "server/ops/bind_pad.h"
#include "server/net/reply.h"
#include "server/replica/replica.h"

/* How often a waiting bind looks at its job. */
#define PASSTHROUGH_POLL_NS 1000000u

struct passthrough_task {
	struct conn_task task; /* first: a conn_task * is a passthrough_task * */
	struct conn_wake wake;
	struct chain_job *job;
	struct buf dn, key, controls;
	uint64_t dn_key, addr_key;
};

static void task_free(struct conn_task *ct)
{
	struct passthrough_task *t = (struct passthrough_task *)ct;
	conn_wake_cancel(&t->wake); /* closed or abandoned while waiting */
	chain_job_put(t->job);      /* the thread may still hold the other reference */
	buf_free(&t->dn);
	buf_free(&t->key);
	buf_free(&t->controls);
	free(t);
}

static void task_resume(struct conn *c)
{
	struct passthrough_task *t = (struct passthrough_task *)c->task;
	if (t->wake.queued)
		return; /* woken for another reason (the socket took output): still queued */
	if (!atomic_load_explicit(&t->job->done, memory_order_acquire)) {
		conn_wake_at(&t->wake, c, clock_ns() + PASSTHROUGH_POLL_NS);
		return;
	}
	c->task = NULL;
	int rc = t->job->rc;
	struct server *srv = c->w->srv;
	if (rc == LDAP_SUCCESS &&
	    conn_set_identity(c, AUTH_USER, t->dn.data, t->dn.len, t->key.data, t->key.len) == 0) {
		if (srv->bind_limit)
			bind_limit_succeeded(srv->bind_limit, t->dn_key, t->addr_key);
		struct result_extra x = {.controls = t->controls.data, .clen = t->controls.len};
		reply_begin(c);
		reply_result(c, t->task.msgid, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL, &x);
	} else if (rc == LDAP_SUCCESS || rc == LDAP_INVALID_CREDENTIALS) {
		/* (a success this connection could not take on: out of memory) */
		bind_fail_padded(c, t->task.msgid, &t->controls);
	} else {
		reply_done(c, t->task.msgid, LDAP_RES_BIND, LDAP_UNAVAILABLE, NULL,
		           "the provider, which checks this password, could not be asked");
	}
	task_free(&t->task);
}

void bind_passthrough(struct conn *c, struct passthrough_bind *b)
{
	struct passthrough_task *t = calloc(1, sizeof(*t));
	struct chain_job *job = t ? chain_job_new(CHAIN_VERIFY, b->dn->bv_val, b->dn->bv_len,
	                                          b->cred->bv_val, b->cred->bv_len)
	                          : NULL;
	if (!job || buf_append(&t->dn, b->dn->bv_val, b->dn->bv_len) < 0 ||
	    buf_append(&t->key, b->key->data, b->key->len) < 0) {
		if (job) {
			chain_job_put(job);
			chain_job_put(job);
		}
		if (t) {
			buf_free(&t->dn);
			buf_free(&t->key);
		}
		free(t);
		buf_free(b->controls);
		reply_done(c, b->msgid, LDAP_RES_BIND, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	t->task = (struct conn_task){.msgid = b->msgid, .resume = task_resume, .free = task_free};
	t->job = job;
	t->controls = *b->controls;
	*b->controls = (struct buf){0};
	t->dn_key = b->dn_key;
	t->addr_key = b->addr_key;
	/* The pool's share of one DN (CHAIN_MAX_JOBS_PER_USER): a client cannot take it all
	 * with one user's binds. */
	job->user = b->user ? b->user : 1;
	int rc = chain_submit(c->w->srv, job);
	if (rc < 0) {
		chain_job_put(job); /* the thread's reference: it never took it */
		task_free(&t->task);
		reply_done(c, b->msgid, LDAP_RES_BIND, LDAP_BUSY, NULL,
		           "too many binds are being checked by the provider; try again");
		return;
	}
	c->task = &t->task;
	conn_wake_at(&t->wake, c, clock_ns() + PASSTHROUGH_POLL_NS);
}
