/*
 * The threads SASL bind steps run on, off the workers' event loops (server/net/sasl.h
 * says why: a GSSAPI step costs about 0.6 ms of CPU and takes blocking file locks, and
 * on a worker it held up every connection of that worker). SASL_POOL_THREADS threads take
 * jobs in order; at most SASL_POOL_QUEUE wait (a bind that finds it full is answered busy,
 * 51). A job is counted: the bind's task holds one reference, the pool the other from
 * sasl_pool_submit until the step has run; the worker polls job->done (op_bind_sasl.c).
 *
 * Thread rules: sasl_pool_start and sasl_pool_stop in the main thread (after the workers
 * stop: jobs still queued are dropped unrun); sasl_pool_submit on any worker.
 */
#ifndef MINIDIR_SERVER_OPS_SASL_POOL_H
#define MINIDIR_SERVER_OPS_SASL_POOL_H

#include <lber.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "protocol/buf.h"

struct sasl_session;
struct sasl_pool;

#define SASL_POOL_THREADS 2
#define SASL_POOL_QUEUE 1024

/* One step to run: sasl_session_run(s, first, cred, has_cred, &out) into rc. */
struct sasl_job {
	struct sasl_session *s; /* a reference, put with the job */
	bool first, has_cred;
	struct buf cred; /* the client's credentials, a copy */
	struct buf out;  /* the step's data for the client */
	int rc;
	atomic_bool done; /* rc and out are set (release; read with acquire) */
	atomic_int refs;
	struct sasl_job *next;
};

/* The pool's threads started into *out. 0, or -1 (logged). */
int sasl_pool_start(struct sasl_pool **out);
/* Stops and joins the threads (NULL allowed); queued jobs are put unrun. */
void sasl_pool_stop(struct sasl_pool *p);
/* Queues j with a reference for the pool (taken here). 0, or -1 when SASL_POOL_QUEUE
 * jobs wait (the reference is not taken). */
int sasl_pool_submit(struct sasl_pool *p, struct sasl_job *j);
/* A new job for s (taking the caller's reference to s) with a copy of cred and one
 * reference, or NULL when out of memory (s then put). */
struct sasl_job *sasl_job_new(struct sasl_session *s, bool first, const struct berval *cred,
                              bool has_cred);
/* Gives back a reference; the last frees the job and puts its session. Any thread. */
void sasl_job_put(struct sasl_job *j);

#endif
