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

struct sr_thread {
	pthread_t tid;
	bool started;         /* tid is a running or ended thread to join */
	int left_outstanding; /* requests still in flight when the run stopped */
};

/*
 * Starts fn on each of the n elements of array (elements of size bytes, each starting
 * with its struct sr_thread), passing the element. Returns true, or false after
 * "searchrate: pthread_create: ..." on stderr (threads started so far stay joinable).
 */
bool sr_threads_start(void *array, size_t size, int n, void *(*fn)(void *));

/* Joins the started threads of array (as above; NULL is none) and returns the sum of
 * their left_outstanding. */
int sr_threads_join(void *array, size_t size, int n);

#endif
