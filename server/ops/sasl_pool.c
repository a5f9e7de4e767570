/* SASL bind steps off the event loop (sasl_pool.h). */
#include "server/ops/sasl_pool.h"

#include <errno.h>
#include <lber.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"
#include "server/net/sasl.h"

struct sasl_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct sasl_job *head, *tail;
	int queued;
	bool stop;
	pthread_t threads[SASL_POOL_THREADS];
	int nthreads;
};

struct sasl_job *sasl_job_new(struct sasl_session *s, bool first, const struct berval *cred,
                              bool has_cred)
{
	struct sasl_job *j = calloc(1, sizeof(*j));
	if (!j ||
	    (has_cred && cred->bv_len && buf_append(&j->cred, cred->bv_val, cred->bv_len) < 0)) {
		free(j);
		sasl_session_put(s);
		return NULL;
	}
	j->s = s;
	j->first = first;
	j->has_cred = has_cred;
	atomic_init(&j->refs, 1);
	atomic_init(&j->done, false);
	return j;
}

void sasl_job_put(struct sasl_job *j)
{
	if (!j || atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) != 1)
		return;
	sasl_session_put(j->s);
	buf_free(&j->cred);
	buf_free(&j->out);
	free(j);
}

static void *pool_main(void *arg)
{
	struct sasl_pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && !p->head)
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->stop)
			break;
		struct sasl_job *j = p->head;
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
		p->queued--;
		pthread_mutex_unlock(&p->lock);
		struct berval cred = {j->cred.len, (char *)j->cred.data};
		j->rc = sasl_session_run(j->s, j->first, &cred, j->has_cred, &j->out);
		atomic_store_explicit(&j->done, true, memory_order_release);
		sasl_job_put(j);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int sasl_pool_start(struct sasl_pool **out)
{
	struct sasl_pool *p = calloc(1, sizeof(*p));
	if (!p) {
		log_error("SASL threads: out of memory");
		return -1;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	for (; p->nthreads < SASL_POOL_THREADS; p->nthreads++) {
		int rc = pthread_create(&p->threads[p->nthreads], NULL, pool_main, p);
		if (rc != 0) {
			log_error("SASL threads: %s", strerror(rc));
			sasl_pool_stop(p);
			return -1;
		}
	}
	*out = p;
	return 0;
}

void sasl_pool_stop(struct sasl_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	for (struct sasl_job *j = p->head, *next; j; j = next) {
		next = j->next;
		sasl_job_put(j);
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int sasl_pool_submit(struct sasl_pool *p, struct sasl_job *j)
{
	pthread_mutex_lock(&p->lock);
	bool full = p->stop || p->queued >= SASL_POOL_QUEUE;
	if (!full) {
		atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
		j->next = NULL;
		if (p->tail)
			p->tail->next = j;
		else
			p->head = j;
		p->tail = j;
		p->queued++;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
	return full ? -1 : 0;
}
