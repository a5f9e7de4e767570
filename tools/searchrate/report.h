/*
 * report.h: what searchrate prints on stdout. bench/run.sh and the tests parse it, so its
 * format is fixed: the banner, the table header and one row per interval (six columns of
 * %12.3f, or CSV with --csv), then the summary ("Total searches:", "Searches/sec:",
 * "Latency ms: min .. p50 .. p90 .. p99 .. p99.9 .. max ..", result codes, CPU, "Client CPU
 * us/search:"), whose lines are '#' comments in CSV mode. Every function flushes stdout where a
 * reader may be waiting.
 */
#ifndef SEARCHRATE_REPORT_H
#define SEARCHRATE_REPORT_H

#include <stdbool.h>

#include "tools/searchrate/options.h"
#include "tools/searchrate/stats.h"

/* The two lines saying what the run does, then a blank line (not in CSV mode). */
void report_banner(const struct sr_config *cfg);

/* The column titles: three lines, or the CSV header line. */
void report_header(const struct sr_config *cfg);

/* One interval's row: the interval iv of secs seconds, and the overall all over all_secs
 * (in warm-up intervals "warming up" stands in the overall columns). */
void report_row(const struct sr_config *cfg, const struct stats *iv, double secs,
                const struct stats *all, double all_secs, bool warming);

/* "Warm-up completed..." after the last warm-up interval (not in CSV mode). */
void report_warmup_done(const struct sr_config *cfg);

/* The end of a run, for report_summary. */
struct report_end {
	const struct stats *overall; /* the measured intervals */
	const struct stats *warm;    /* the warm-up intervals */
	double measured;             /* seconds measured */
	bool interrupted;            /* by SIGINT or SIGTERM, in the last interval */
	int left;                    /* requests in flight at stop */
	double user, sys, wall;      /* the process's CPU seconds, and seconds since start */
	double measured_cpu;         /* the process's CPU seconds over the measured intervals */
};

void report_summary(const struct sr_config *cfg, const struct report_end *end);

/* On stderr, for the first connection that failed: "searchrate: WHAT: RESULT (CODE): DIAG",
 * with cert_rejected the reason ("; TLS: the server's certificate was rejected ..."). */
void report_open_failure(const struct sr_config *cfg, const char *what, int rc, const char *diag,
                         bool cert_rejected);

#endif
