/*
 * The bounded queue between minidir-import's parser thread and its writer
 * (storage/ldif_import.c): a ring of batches of parsed records (storage/import_parse.h),
 * handed over in file order. The parser waits while every batch is full, so memory holds
 * at most IMPORT_QUEUE_BATCHES batches of IMPORT_BATCH_ITEMS records however large the
 * file; items keep their buffers from one use to the next.
 *
 * Thread rules: one producer and one consumer thread; every function locks the queue.
 */
#ifndef MINIDIR_STORAGE_IMPORT_QUEUE_H
#define MINIDIR_STORAGE_IMPORT_QUEUE_H

#include <pthread.h>
#include <stdbool.h>

#include "storage/import_parse.h"

#define IMPORT_BATCH_ITEMS 64
#define IMPORT_QUEUE_BATCHES 8

struct import_batch {
	struct import_item items[IMPORT_BATCH_ITEMS];
	int n; /* items filled */
};

struct import_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct import_batch batches[IMPORT_QUEUE_BATCHES];
	int head;  /* the oldest full batch (the consumer's) */
	int count; /* full batches from head on */
	bool done; /* the producer pushed its last batch */
	bool stop; /* the consumer wants no more */
};

/* Initializes q (zeroed batches). Returns 0 or an errno value. */
int import_queue_init(struct import_queue *q);
/* Frees q's items and locks; no thread may use it any more. */
void import_queue_free(struct import_queue *q);

/* Producer: the next batch to fill (its n set to 0), once one is free; NULL after
 * import_queue_stop. */
struct import_batch *import_queue_slot(struct import_queue *q);
/* Producer: hands the batch import_queue_slot gave over; last: it is the final one. */
void import_queue_push(struct import_queue *q, bool last);

/* Consumer: the oldest full batch, waiting for one; NULL when the producer is done and
 * every batch was taken. */
struct import_batch *import_queue_take(struct import_queue *q);
/* Consumer: gives the batch import_queue_take returned back to the producer. */
void import_queue_release(struct import_queue *q);
/* Consumer: asks the producer to stop (import_queue_slot returns NULL from then on). */
void import_queue_stop(struct import_queue *q);

#endif
