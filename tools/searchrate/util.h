/*
 * util.h: the small helpers every searchrate file uses: the monotonic clock in nanoseconds
 * and allocation that ends the program on failure (a load tool has nothing better to do when
 * memory runs out before or during a run).
 */
#ifndef SEARCHRATE_UTIL_H
#define SEARCHRATE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NS_PER_SEC 1000000000ull
#define NS_PER_MS 1000000ull

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* calloc(n, size), or "searchrate: <errno text>" on stderr and exit status 1. */
static inline void *sr_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		perror("searchrate");
		exit(1);
	}
	return p;
}

/* realloc(p, size), or "searchrate: <errno text>" on stderr and exit status 1. */
static inline void *sr_xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);
	if (!q) {
		perror("searchrate");
		exit(1);
	}
	return q;
}

#endif
