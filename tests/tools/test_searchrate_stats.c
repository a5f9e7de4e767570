/* Counters and the latency histogram of tools/searchrate/stats.c: known durations give known
 * percentiles, percentiles are clamped to the exact min and max, merging keeps both. */
#include <check.h>
#include <stdlib.h>

#include "tests/tools/searchrate_check.h"
#include "tools/searchrate/stats.h"

static struct stats *s, *t;

static void setup(void)
{
	s = malloc(sizeof(*s));
	t = malloc(sizeof(*t));
	ck_assert(s && t);
	stats_reset(s);
	stats_reset(t);
}

static void teardown(void)
{
	free(s);
	free(t);
}

/* |got - want| within want / 256 (half a bucket: buckets are at most 1/128 wide). */
static void near(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;
	ck_assert_msg(d <= want / 256, "got %llu, want %llu", (unsigned long long)got,
	              (unsigned long long)want);
}

START_TEST(small_values_are_exact)
{
	for (uint64_t v = 1; v <= 100; v++)
		stats_record_search(s, 0, 1, v);
	ck_assert_uint_eq(stats_percentile(s, 0.5), 50);
	ck_assert_uint_eq(stats_percentile(s, 0.9), 90);
	ck_assert_uint_eq(stats_percentile(s, 0.99), 99);
	ck_assert_uint_eq(stats_percentile(s, 0.999), 100);
	ck_assert_uint_eq(stats_percentile(s, 0), 1); /* at least the first */
	ck_assert_uint_eq(stats_percentile(s, 1), 100);
}
END_TEST

START_TEST(milliseconds_within_a_bucket)
{
	/* 1000 searches of 1..1000 ms, in a scrambled order. */
	for (uint64_t i = 0; i < 1000; i++)
		stats_record_search(s, 0, 1, ((i * 7919) % 1000 + 1) * 1000000);
	near(stats_percentile(s, 0.5), 500000000);
	near(stats_percentile(s, 0.9), 900000000);
	near(stats_percentile(s, 0.99), 990000000);
	near(stats_percentile(s, 0.999), 999000000);
	ck_assert_uint_eq(s->min_ns, 1000000);
	ck_assert_uint_eq(s->max_ns, 1000000000);
	ck_assert_uint_eq(s->dur_ns, 500500ull * 1000000);
}
END_TEST

START_TEST(clamped_to_min_and_max)
{
	/* One value: every percentile is that value exactly, not its bucket's midpoint. */
	stats_record_search(s, 0, 1, 1234567);
	ck_assert_uint_ne(stats_hist_value(stats_hist_index(1234567)), 1234567);
	ck_assert_uint_eq(stats_percentile(s, 0.5), 1234567);
	ck_assert_uint_eq(stats_percentile(s, 0.999), 1234567);
	/* A bucket's midpoint above the max is clamped down, one below the min up. */
	stats_reset(s);
	uint64_t lo = 1ull << 20; /* the first value of its bucket */
	uint64_t hi = lo + 1;
	stats_record_search(s, 0, 1, lo);
	stats_record_search(s, 0, 1, hi);
	ck_assert_uint_eq(stats_hist_index(lo), stats_hist_index(hi));
	ck_assert_uint_gt(stats_hist_value(stats_hist_index(lo)), hi);
	ck_assert_uint_eq(stats_percentile(s, 0.5), hi);
	stats_reset(s);
	uint64_t top = (1ull << 21) - 1; /* the last value of its bucket */
	stats_record_search(s, 0, 1, top);
	stats_record_search(s, 0, 1, top - 1);
	ck_assert_uint_lt(stats_hist_value(stats_hist_index(top)), top - 1);
	ck_assert_uint_eq(stats_percentile(s, 0.5), top - 1);
	ck_assert_uint_eq(stats_percentile(s, 1), top - 1); /* the same bucket: clamped up too */
}
END_TEST

START_TEST(histogram_covers_uint64)
{
	ck_assert_uint_eq(stats_hist_index(0), 0);
	ck_assert_uint_eq(stats_hist_index(127), 127);
	ck_assert_uint_eq(stats_hist_index(128), 128);
	ck_assert_uint_eq(stats_hist_index(UINT64_MAX), STATS_HIST_BUCKETS - 1);
	uint64_t vals[] = {129, 1000, 123456789, 1ull << 40, 3ull << 61, UINT64_MAX - 1};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t mid = stats_hist_value(stats_hist_index(vals[i]));
		uint64_t d = mid > vals[i] ? mid - vals[i] : vals[i] - mid;
		ck_assert_msg(d <= vals[i] / 128, "%llu stands as %llu",
		              (unsigned long long)vals[i], (unsigned long long)mid);
	}
	stats_record_search(s, 0, 1, UINT64_MAX);
	ck_assert_uint_eq(stats_percentile(s, 0.5), UINT64_MAX);
}
END_TEST

START_TEST(result_codes_and_errors)
{
	stats_record_search(s, 0, 3, 10);
	stats_record_search(s, 32, 0, 20);
	stats_record_error(s, -1, 4); /* LDAP_SERVER_DOWN, four requests lost */
	stats_record_error(s, 100000, 1);
	ck_assert_uint_eq(s->searches, 2);
	ck_assert_uint_eq(s->entries, 3);
	ck_assert_uint_eq(s->errors, 6);
	ck_assert_uint_eq(s->rc[stats_rc_slot(0)], 1);
	ck_assert_uint_eq(s->rc[stats_rc_slot(32)], 1);
	ck_assert_uint_eq(s->rc[stats_rc_slot(-1)], 4);
	ck_assert_uint_eq(s->rc[RC_OTHER], 1);
	ck_assert_uint_eq(stats_rc_slot(RC_MIN - 1), RC_OTHER);
	ck_assert_uint_eq(stats_rc_slot(RC_MAX + 1), RC_OTHER);
	ck_assert_int_eq(stats_slot_rc(stats_rc_slot(-64)), -64);
	ck_assert_int_eq(stats_slot_rc(stats_rc_slot(447)), 447);
}
END_TEST

START_TEST(intervals_add_up)
{
	/* Two intervals merged into the overall totals, as the main thread does. */
	stats_record_search(s, 0, 1, 5000);
	stats_record_search(s, 0, 1, 7000);
	stats_record_search(t, 0, 2, 1000);
	stats_record_search(t, 49, 0, 9000);
	t->reconnects = 2;
	struct stats *all = malloc(sizeof(*all));
	ck_assert_ptr_nonnull(all);
	stats_reset(all);
	stats_add(all, s);
	stats_add(all, t);
	ck_assert_uint_eq(all->searches, 4);
	ck_assert_uint_eq(all->entries, 4);
	ck_assert_uint_eq(all->errors, 1);
	ck_assert_uint_eq(all->dur_ns, 22000);
	ck_assert_uint_eq(all->reconnects, 2);
	ck_assert_uint_eq(all->min_ns, 1000);
	ck_assert_uint_eq(all->max_ns, 9000);
	near(stats_percentile(all, 0.5), 5000);
	near(stats_percentile(all, 0.75), 7000);
	/* An empty interval changes nothing, and reset empties. */
	stats_reset(t);
	stats_add(all, t);
	ck_assert_uint_eq(all->min_ns, 1000);
	ck_assert_uint_eq(all->searches, 4);
	ck_assert_uint_eq(t->min_ns, UINT64_MAX);
	ck_assert_uint_eq(stats_percentile(t, 0.5), 0);
	free(all);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
	    small_values_are_exact,  milliseconds_within_a_bucket, clamped_to_min_and_max,
	    histogram_covers_uint64, result_codes_and_errors,      intervals_add_up,
	};
	return searchrate_check_run("searchrate_stats", setup, teardown, tests,
	                            sizeof(tests) / sizeof(tests[0]));
}
