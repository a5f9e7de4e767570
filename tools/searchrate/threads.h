/*
 * threads.h: the client threads of either engine (worker.c, lean.c): each engine's
 * per-thread struct starts with a struct sr_thread, and these start and join an
 * array of them. Main thread only.
 */
#ifndef SEARCHRATE_THREADS_H
#define SEARCHRATE_THREADS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct sr_run;
struct sr_pacer;
struct sr_thread;

/* What a thread of one engine does: one round of its loop (send, wait, read), and at
 * the end of the run closing its connection i if open, returning the requests that
 * connection still had in flight. */
struct sr_thread_ops {
	void (*round)(struct sr_thread *th);
	int (*close_at_end)(struct sr_thread *th, int i);
};

struct sr_thread {
	pthread_t tid;
	bool started;         /* tid is a running or ended thread to join */
	int left_outstanding; /* requests still in flight when the run stopped */
	/* Set by the engine before the start: */
	const struct sr_thread_ops *ops;
	struct sr_run *run;
	struct sr_pacer *pacer; /* set up for the run's rate when the thread starts */
	int nconns;
};

/*
 * Starts each of the n elements of array (elements of size bytes, each starting with
 * its struct sr_thread): the thread runs ops->round until the run stops, then closes
 * its connections. Returns true, or false after "searchrate: pthread_create: ..." on
 * stderr (threads started so far stay joinable).
 */
bool sr_threads_start(void *array, size_t size, int n);

/* Joins the started threads of array (as above; NULL is none) and returns the sum of
 * their left_outstanding. */
int sr_threads_join(void *array, size_t size, int n);

#endif
