/* bench/loadrun.h: the driver bench/bindsearch.c and bench/saslbind.c share (header-only:
 * each is built alone by one cc line, -lpthread). THREADS threads run an operation back to
 * back for WARMUP seconds (not counted), then SECONDS (counted: only operations that start
 * and end inside the window); "measuring" and "done" are printed at the window's edges (the
 * bench scripts sample the server's CPU time at those lines). The caller gets the counted
 * latencies sorted, the errors and what the operations returned summed. */
#ifndef BENCH_LOADRUN_H
#define BENCH_LOADRUN_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* One operation; rng is the thread's own random state. Returns a count >= 0 (entries
 * received, say) or -1 for an error. */
typedef int (*load_op)(uint64_t *rng);

struct load_result {
	uint64_t *lat; /* ns per counted operation, sorted */
	size_t n;
	uint64_t errors, sum;
	double measured; /* seconds */
};

struct load_worker {
	pthread_t tid;
	load_op op;
	atomic_int *phase; /* 0 warm-up, 1 measuring, 2 stop */
	uint64_t rng, errors, sum;
	uint64_t *lat;
	size_t n, cap;
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *load_worker_main(void *arg)
{
	struct load_worker *w = arg;
	int ph;
	while ((ph = atomic_load(w->phase)) < 2) {
		uint64_t t0 = now_ns();
		int got = w->op(&w->rng);
		uint64_t t1 = now_ns();
		if (ph != 1 || atomic_load(w->phase) != 1)
			continue;
		if (got < 0) {
			w->errors++;
			continue;
		}
		w->sum += (uint64_t)got;
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 4096;
			uint64_t *p = realloc(w->lat, w->cap * sizeof(*p));
			if (!p) {
				perror("load");
				exit(1);
			}
			w->lat = p;
		}
		w->lat[w->n++] = t1 - t0;
	}
	return NULL;
}

static inline int load_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Percentile p (0..1) of r's latencies, in ms. */
static inline double load_ms(const struct load_result *r, double p)
{
	return r->n ? (double)r->lat[(size_t)((double)(r->n - 1) * p)] / 1e6 : 0.0;
}

/* This process's CPU seconds (user + system) so far. */
static inline double load_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Runs op on threads threads, prints banner (after the threads started), the warm-up and
 * the counted window; fills *r. Returns 0, or 1 on a failure (said). */
static int load_run(load_op op, int threads, double warmup, double secs, const char *banner,
                    struct load_result *r)
{
	static atomic_int phase;
	struct load_worker *ws = calloc((size_t)threads, sizeof(*ws));
	if (!ws)
		return 1;
	uint64_t seed = now_ns() ^ ((uint64_t)getpid() << 32);
	for (int t = 0; t < threads; t++) {
		ws[t].op = op;
		ws[t].phase = &phase;
		ws[t].rng = seed + (uint64_t)(t + 1) * 0x9e3779b97f4a7c15ull;
		if (pthread_create(&ws[t].tid, NULL, load_worker_main, &ws[t]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	fputs(banner, stdout);
	fflush(stdout);
	sleep_s(warmup);
	uint64_t t0 = now_ns();
	atomic_store(&phase, 1);
	puts("measuring");
	fflush(stdout);
	sleep_s(secs);
	atomic_store(&phase, 2);
	uint64_t t1 = now_ns();
	puts("done");
	fflush(stdout);
	memset(r, 0, sizeof(*r));
	r->measured = (double)(t1 - t0) / 1e9;
	for (int t = 0; t < threads; t++) {
		pthread_join(ws[t].tid, NULL);
		r->n += ws[t].n;
		r->errors += ws[t].errors;
		r->sum += ws[t].sum;
	}
	r->lat = malloc((r->n ? r->n : 1) * sizeof(*r->lat));
	size_t k = 0;
	for (int t = 0; t < threads; t++) {
		if (r->lat && ws[t].n)
			memcpy(r->lat + k, ws[t].lat, ws[t].n * sizeof(*r->lat));
		k += ws[t].n;
		free(ws[t].lat);
	}
	free(ws);
	if (!r->lat)
		return 1;
	qsort(r->lat, r->n, sizeof(*r->lat), load_cmp);
	return 0;
}

/* load_run, then report(the result, warmup); a main's last step. Returns its exit status. */
static inline int load_main(load_op op, void (*report)(const struct load_result *, double),
                            int threads, double warmup, double secs, const char *banner)
{
	struct load_result r;
	if (load_run(op, threads, warmup, secs, banner, &r) != 0)
		return 1;
	report(&r, warmup);
	free(r.lat);
	return 0;
}
#endif
