/*
 * stats.h: what searchrate counts. One struct stats holds the counters of a span of time
 * (one thread's since the last interval, one interval, the whole run): searches, entries,
 * errors by result code, and durations in a log-linear histogram from which percentiles
 * are read.
 *
 * Histogram buckets over nanoseconds: values below 128 ns are exact; above, each power of two
 * is split into 128 equal buckets, so a bucket is at most 1/128 of its values wide and its
 * midpoint is within 0.4% of any value in it. STATS_HIST_BUCKETS counters cover all of
 * uint64_t. A struct stats is about 63 KB: allocate it, do not put it on a thread's stack.
 *
 * No locking here: the caller guards a struct stats that several threads touch.
 */
#ifndef SEARCHRATE_STATS_H
#define SEARCHRATE_STATS_H

#include <stdint.h>

#define STATS_HIST_SUB_BITS 7u
#define STATS_HIST_SUB (1u << STATS_HIST_SUB_BITS)
#define STATS_HIST_BUCKETS ((64u - STATS_HIST_SUB_BITS + 1u) * STATS_HIST_SUB)

/* Result codes RC_MIN..RC_MAX are counted one by one (libldap's client-side codes are
 * negative); any other code in the slot RC_OTHER. */
#define RC_MIN (-64)
#define RC_MAX 447
#define RC_OTHER (RC_MAX - RC_MIN + 1)
#define RC_SLOTS (RC_OTHER + 1)

struct stats {
	uint64_t searches; /* searches answered with a SearchResultDone, any result code */
	uint64_t entries;
	uint64_t errors; /* non-zero result codes, requests lost with a connection, failed
	                    connects */
	uint64_t dur_ns; /* total duration of the searches */
	uint64_t reconnects;
	uint64_t resumed;        /* TLS handshakes that resumed a session (--resumeTLSSessions) */
	uint64_t min_ns, max_ns; /* exact; min_ns is UINT64_MAX while searches is 0 */
	uint64_t rc[RC_SLOTS];   /* by stats_rc_slot() */
	uint64_t hist[STATS_HIST_BUCKETS];
};

/* Zeroes every counter (min_ns to UINT64_MAX). */
void stats_reset(struct stats *s);

/* Adds the counters of from to to (min and max as the smaller and larger). */
void stats_add(struct stats *to, const struct stats *from);

/* Counts a completed search: its result code, entries returned and duration. A result code
 * other than 0 (success) is also an error. */
void stats_record_search(struct stats *s, int rc, uint64_t entries, uint64_t ns);

/* Counts n errors with result code rc that are not completed searches (a request lost
 * with its connection, a failed connect). */
void stats_record_error(struct stats *s, int rc, uint64_t n);

/* The slot of result code rc in stats.rc. */
unsigned stats_rc_slot(int rc);

/* The result code of slot i (i < RC_OTHER). */
int stats_slot_rc(unsigned i);

/*
 * The duration in nanoseconds at quantile q (0..1) of the searches counted: the midpoint of
 * the bucket holding the ceil(q * searches)-th fastest (at least the first), clamped to the
 * exact min_ns and max_ns. 0 when no search was counted.
 */
uint64_t stats_percentile(const struct stats *s, double q);

/* The histogram bucket of duration v, and the value a bucket stands for (its midpoint). */
unsigned stats_hist_index(uint64_t v);
uint64_t stats_hist_value(unsigned idx);

#endif
