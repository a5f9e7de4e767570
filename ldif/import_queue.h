/*
 * The bounded queue between minidir-import's parsing threads and its writer
 * (ldif/ldif_import.c): a ring of batches of records (ldif/import_parse.h). A
 * parsing thread claims the next free batch in ring order and fills it with the next
 * records of the file (both under the caller's read lock, so batches follow the file),
 * parses them without any lock, and marks the batch ready; the writer takes the batches
 * in ring order, each once it is ready, so entries are stored in file order however many
 * threads parse. A thread that finds no free batch waits: memory holds at most
 * IMPORT_QUEUE_BATCHES batches of IMPORT_BATCH_ITEMS records however large the file;
 * items keep their buffers from one use to the next.
 *
 * Why 256 records a batch: every batch costs the writer a lock, a wake-up and, when the
 * parsers hold both cores, a wait to be scheduled again. With 64 a batch, 1,000,000
 * entries kept the writer waiting runnable 0.94-1.02 s and used 1.37-1.41 cores; with
 * 256, 0.23-0.33 s and 1.53-1.58 cores, 4.71-5.52 s of wall time against 5.67-6.11, for
 * a peak RssAnon of 13 MB instead of 7 (bench/results/import-batch-2026-12-04.md).
 * Larger batches or rings gave no more.
 *
 * Thread rules: any number of producers, one consumer; every function locks the queue.
 */
#ifndef MINIDIR_LDIF_IMPORT_QUEUE_H
#define MINIDIR_LDIF_IMPORT_QUEUE_H

#include <pthread.h>
#include <stdbool.h>

#include "ldif/import_parse.h"

#define IMPORT_BATCH_ITEMS 256
#define IMPORT_QUEUE_BATCHES 16

enum import_batch_state { IMPORT_BATCH_FREE, IMPORT_BATCH_FILLING, IMPORT_BATCH_READY };

struct import_batch {
	struct import_item items[IMPORT_BATCH_ITEMS];
	int n; /* items filled */
	enum import_batch_state state;
};

struct import_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct import_batch batches[IMPORT_QUEUE_BATCHES];
	int head;  /* the next batch the consumer takes */
	int tail;  /* the next batch a producer claims */
	bool stop; /* the consumer wants no more */
};

/* Initializes q (free, empty batches). Returns 0 or an errno value. */
int import_queue_init(struct import_queue *q);
/* Frees q's items and locks; no thread may use it any more. */
void import_queue_free(struct import_queue *q);

/* Producer: the next batch in ring order (n set to 0), once it is free; NULL after
 * import_queue_stop. */
struct import_batch *import_queue_claim(struct import_queue *q);
/* Producer: b, which import_queue_claim gave, is filled. */
void import_queue_ready(struct import_queue *q, struct import_batch *b);

/* Consumer: the next batch in ring order, once it is ready. Call only while a producer
 * will fill it (the consumer knows from the items when the file ended). */
struct import_batch *import_queue_take(struct import_queue *q);
/* Consumer: the batch import_queue_take returned is free again. */
void import_queue_release(struct import_queue *q);
/* Consumer: asks the producers to stop (import_queue_claim returns NULL from then on). */
void import_queue_stop(struct import_queue *q);

#endif
