/*
 * The server's monotonic clock, in one place: whole seconds for timeouts, the
 * sweep and log rate limits (CLOCK_MONOTONIC_COARSE: no syscall, a tick's
 * precision), nanoseconds for latencies and timing (CLOCK_MONOTONIC).
 * Any thread.
 */
#ifndef MINIDIR_SERVER_CLOCK_H
#define MINIDIR_SERVER_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline time_t clock_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

static inline uint64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
