/* bench/bindsearch.c: the bind+search workload of bench/run.sh, which searchrate
 * cannot produce (it binds once per connection). Each operation is what a PAM or
 * web login does: open a new TCP connection, simple-bind as a random user
 * uid=user.I,ou=people,BASE with PASSWORD, read that user's entry (base search),
 * unbind and close. THREADS threads run operations back to back for WARMUP
 * seconds (not counted), then for SECONDS seconds (counted).
 *
 *   bindsearch -H URI -b BASE -N ENTRIES -w PASSWORD [-n THREADS] [-W WARMUP] [-d SECONDS]
 *
 * Prints "measuring" when the counted window starts and "done" when it ends (run.sh
 * samples the server's CPU time at those lines), then a summary in searchrate's
 * format: Total searches (= bind+search operations), Total entries, Total errors,
 * Searches/sec, Latency ms percentiles of the whole operation, and its own CPU.
 * Built by bench/run.sh with: cc -O2 -o bindsearch bindsearch.c -lldap -llber -lpthread
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ldap.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *uri, *base, *password;
static long nentries;
static atomic_int phase; /* 0 warm-up, 1 measuring, 2 stop */

struct worker {
	pthread_t tid;
	uint64_t rng;
	uint64_t *lat; /* ns per counted operation */
	size_t n, cap;
	uint64_t entries, errors;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One bind+search; returns entries received, or -1 on any error. */
static int one_op(long i)
{
	char dn[512];
	snprintf(dn, sizeof(dn), "uid=user.%ld,ou=people,%s", i, base);
	LDAP *ld = NULL;
	int got = -1, v3 = LDAP_VERSION3;
	if (ldap_initialize(&ld, uri) != LDAP_SUCCESS)
		return -1;
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	struct berval cred = {strlen(password), (char *)password};
	if (ldap_sasl_bind_s(ld, dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL) == LDAP_SUCCESS) {
		LDAPMessage *res = NULL;
		int rc = ldap_search_ext_s(ld, dn, LDAP_SCOPE_BASE, "(objectClass=*)", NULL, 0,
		                           NULL, NULL, NULL, 0, &res);
		if (rc == LDAP_SUCCESS)
			got = ldap_count_entries(ld, res);
		ldap_msgfree(res);
	}
	ldap_unbind_ext_s(ld, NULL, NULL);
	return got;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int ph;
	while ((ph = atomic_load(&phase)) < 2) {
		uint64_t t0 = now_ns();
		int got = one_op((long)(next_rand(&w->rng) % (uint64_t)nentries));
		uint64_t t1 = now_ns();
		/* Count only operations that started and ended inside the window. */
		if (ph != 1 || atomic_load(&phase) != 1)
			continue;
		if (got < 0) {
			w->errors++;
			continue;
		}
		w->entries += (uint64_t)got;
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 4096;
			w->lat = realloc(w->lat, w->cap * sizeof(*w->lat));
			if (!w->lat) {
				perror("bindsearch");
				exit(1);
			}
		}
		w->lat[w->n++] = t1 - t0;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void usage(void)
{
	fputs("usage: bindsearch -H URI -b BASE -N ENTRIES -w PASSWORD [-n THREADS] [-W WARMUP_S] "
	      "[-d SECONDS]\n",
	      stderr);
	exit(2);
}

/* Reads the command line into the globals, *threads, *warmup and *secs; exits 2 on a bad one. */
static void parse_args(int argc, char **argv, int *threads, double *warmup, double *secs)
{
	int opt;
	while ((opt = getopt(argc, argv, "H:b:N:w:n:W:d:")) != -1) {
		switch (opt) {
		case 'H':
			uri = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case 'N':
			nentries = atol(optarg);
			break;
		case 'w':
			password = optarg;
			break;
		case 'n':
			*threads = atoi(optarg);
			break;
		case 'W':
			*warmup = atof(optarg);
			break;
		case 'd':
			*secs = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (!uri || !base || !password || nentries < 1 || *threads < 1 || *threads > 1024 ||
	    *secs <= 0 || *warmup < 0)
		usage();
}

/* Starts the threads workers, each with its own random sequence. NULL on failure (said). */
static struct worker *start_workers(int threads)
{
	struct worker *ws = calloc((size_t)threads, sizeof(*ws));
	if (!ws)
		return NULL;
	uint64_t seed = now_ns() ^ ((uint64_t)getpid() << 32);
	for (int t = 0; t < threads; t++) {
		ws[t].rng = seed + (uint64_t)(t + 1) * 0x9e3779b97f4a7c15ull;
		if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) {
			perror("bindsearch: pthread_create");
			return NULL;
		}
	}
	return ws;
}

/* Joins the workers and prints the summary of the measured seconds (their latencies, sorted,
 * for the percentiles). Returns 0, or 1 out of memory. */
static int report(struct worker *ws, int threads, double warmup, double measured)
{
	size_t n = 0;
	uint64_t entries = 0, errors = 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(ws[t].tid, NULL);
		n += ws[t].n;
		entries += ws[t].entries;
		errors += ws[t].errors;
	}
	uint64_t *all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return 1;
	size_t k = 0;
	for (int t = 0; t < threads; t++) {
		memcpy(all + k, ws[t].lat, ws[t].n * sizeof(*all));
		k += ws[t].n;
		free(ws[t].lat);
	}
	qsort(all, n, sizeof(*all), cmp_u64);
#define PCT(p) (n ? (double)all[(size_t)((double)(n - 1) * (p))] / 1e6 : 0.0)
	printf("\nSummary (%.3f s measured, warm-up excluded):\n", measured);
	printf("  Total searches:        %zu\n", n);
	printf("  Total entries:         %llu\n", (unsigned long long)entries);
	printf("  Total errors:          %llu\n", (unsigned long long)errors);
	printf("  Searches/sec:          %.3f\n", (double)n / measured);
	printf("  Latency ms:            min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
	       "max %.3f\n",
	       PCT(0), PCT(0.5), PCT(0.9), PCT(0.99), PCT(0.999), PCT(1));
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("  bindsearch CPU:        %.3f s = %.1f%% of one core over %.3f s wall\n", cpu,
	       100 * cpu / (warmup + measured), warmup + measured);
	free(all);
	return 0;
}

int main(int argc, char **argv)
{
	int threads = 8;
	double warmup = 1, secs = 5;
	parse_args(argc, argv, &threads, &warmup, &secs);

	/* One probe first: a wrong password or base fails here, not silently per op. */
	if (one_op(0) != 1) {
		fprintf(stderr, "bindsearch: bind+search of uid=user.0,ou=people,%s at %s failed\n",
		        base, uri);
		return 1;
	}
	struct worker *ws = start_workers(threads);
	if (!ws)
		return 1;
	printf("bindsearch: %s, %d threads, new connection + bind + base search per operation, "
	       "%g s warm-up, %g s measured\n",
	       uri, threads, warmup, secs);
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
	int rc = report(ws, threads, warmup, (double)(t1 - t0) / 1e9);
	free(ws);
	return rc;
}
