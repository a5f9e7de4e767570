#include "ldif/import_queue.h"

#include <string.h>

int import_queue_init(struct import_queue *q)
{
	memset(q, 0, sizeof(*q));
	int rc = pthread_mutex_init(&q->mu, NULL);
	if (rc == 0 && (rc = pthread_cond_init(&q->cv, NULL)) != 0)
		pthread_mutex_destroy(&q->mu);
	return rc;
}

void import_queue_free(struct import_queue *q)
{
	for (int b = 0; b < IMPORT_QUEUE_BATCHES; b++)
		for (int i = 0; i < IMPORT_BATCH_ITEMS; i++)
			import_item_free(&q->batches[b].items[i]);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
}

struct import_batch *import_queue_claim(struct import_queue *q)
{
	pthread_mutex_lock(&q->mu);
	while (!q->stop && q->batches[q->tail].state != IMPORT_BATCH_FREE)
		pthread_cond_wait(&q->cv, &q->mu);
	struct import_batch *b = q->stop ? NULL : &q->batches[q->tail];
	if (b) {
		b->state = IMPORT_BATCH_FILLING;
		b->n = 0;
		q->tail = (q->tail + 1) % IMPORT_QUEUE_BATCHES;
	}
	pthread_mutex_unlock(&q->mu);
	return b;
}

void import_queue_ready(struct import_queue *q, struct import_batch *b)
{
	pthread_mutex_lock(&q->mu);
	b->state = IMPORT_BATCH_READY;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

struct import_batch *import_queue_take(struct import_queue *q)
{
	pthread_mutex_lock(&q->mu);
	while (q->batches[q->head].state != IMPORT_BATCH_READY)
		pthread_cond_wait(&q->cv, &q->mu);
	struct import_batch *b = &q->batches[q->head];
	pthread_mutex_unlock(&q->mu);
	return b;
}

void import_queue_release(struct import_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->batches[q->head].state = IMPORT_BATCH_FREE;
	q->head = (q->head + 1) % IMPORT_QUEUE_BATCHES;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void import_queue_stop(struct import_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
