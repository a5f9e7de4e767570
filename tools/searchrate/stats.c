/*
 * stats.c: counters and the latency histogram (see stats.h). Recording is a handful of
 * additions and one bucket increment, cheap enough for the load threads' hot path;
 * percentiles are computed only for the summary, by one pass over the buckets.
 */
#include "tools/searchrate/stats.h"

#include <math.h>
#include <string.h>

unsigned stats_hist_index(uint64_t v)
{
	if (v < STATS_HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	return (e - STATS_HIST_SUB_BITS + 1u) * STATS_HIST_SUB +
	       (unsigned)((v >> (e - STATS_HIST_SUB_BITS)) - STATS_HIST_SUB);
}

uint64_t stats_hist_value(unsigned idx)
{
	if (idx < STATS_HIST_SUB)
		return idx;
	unsigned e = idx / STATS_HIST_SUB + STATS_HIST_SUB_BITS - 1u;
	uint64_t sub = idx % STATS_HIST_SUB;
	uint64_t width = 1ull << (e - STATS_HIST_SUB_BITS);
	return ((STATS_HIST_SUB + sub) << (e - STATS_HIST_SUB_BITS)) + (width - 1) / 2;
}

void stats_reset(struct stats *s)
{
	memset(s, 0, sizeof(*s));
	s->min_ns = UINT64_MAX;
}

void stats_add(struct stats *to, const struct stats *from)
{
	to->searches += from->searches;
	to->entries += from->entries;
	to->errors += from->errors;
	to->dur_ns += from->dur_ns;
	to->reconnects += from->reconnects;
	to->resumed += from->resumed;
	if (from->min_ns < to->min_ns)
		to->min_ns = from->min_ns;
	if (from->max_ns > to->max_ns)
		to->max_ns = from->max_ns;
	for (unsigned i = 0; i < RC_SLOTS; i++)
		to->rc[i] += from->rc[i];
	if (from->searches)
		for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++)
			to->hist[i] += from->hist[i];
}

unsigned stats_rc_slot(int rc)
{
	return rc >= RC_MIN && rc <= RC_MAX ? (unsigned)(rc - RC_MIN) : RC_OTHER;
}

int stats_slot_rc(unsigned i)
{
	return (int)i + RC_MIN;
}

void stats_record_search(struct stats *s, int rc, uint64_t entries, uint64_t ns)
{
	s->searches++;
	s->entries += entries;
	s->dur_ns += ns;
	if (ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->hist[stats_hist_index(ns)]++;
	s->rc[stats_rc_slot(rc)]++;
	if (rc != 0)
		s->errors++;
}

void stats_record_error(struct stats *s, int rc, uint64_t n)
{
	s->errors += n;
	s->rc[stats_rc_slot(rc)] += n;
}

uint64_t stats_percentile(const struct stats *s, double q)
{
	if (!s->searches)
		return 0;
	uint64_t rank = (uint64_t)ceil(q * (double)s->searches);
	if (rank < 1)
		rank = 1;
	uint64_t cum = 0;
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		cum += s->hist[i];
		if (cum >= rank) {
			uint64_t v = stats_hist_value(i);
			if (v < s->min_ns)
				v = s->min_ns;
			if (v > s->max_ns)
				v = s->max_ns;
			return v;
		}
	}
	return s->max_ns;
}
