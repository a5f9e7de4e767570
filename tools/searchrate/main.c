/*
 * searchrate: an LDAP search load generator on libldap. Its options, output table and value
 * patterns follow the UnboundID/Ping Identity searchrate tool.
 *
 * The files: options.c reads the command line into the configuration, pattern.c expands
 * the value patterns, worker.c runs the load threads and their connections, stats.c counts
 * and keeps the latency histogram, report.c prints. This file ties them together: the main
 * thread wakes at each interval boundary, moves every thread's counters into the interval
 * and overall totals, prints a row, and at the end (or on SIGINT/SIGTERM) stops the threads
 * and prints the summary with latency percentiles, result code counts and the tool's own
 * CPU use. Everything the run shares is in one struct sr_run (run.h), passed explicitly.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools/searchrate/lean.h"
#include "tools/searchrate/options.h"
#include "tools/searchrate/report.h"
#include "tools/searchrate/run.h"
#include "tools/searchrate/stats.h"
#include "tools/searchrate/util.h"
#include "tools/searchrate/worker.h"

/* The main thread's counters: each interval's, the measured intervals', the warm-up's. */
struct totals {
	struct stats *overall, *warm, *iv, *scratch;
	uint64_t measure_start, end, measured_intervals;
	double cpu_start, cpu_end; /* the process's CPU seconds when measuring started, ended */
	bool interrupted;
};

static double tv_secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The process's CPU seconds so far (user and system, every thread). */
static double cpu_secs(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return tv_secs(ru.ru_utime) + tv_secs(ru.ru_stime);
}

/* Sleeps until the monotonic deadline; true if SIGINT or SIGTERM arrived instead. */
static bool wait_until(uint64_t deadline, const sigset_t *sigs)
{
	for (;;) {
		uint64_t now = now_ns();
		if (now >= deadline)
			return false;
		uint64_t rem = deadline - now;
		struct timespec ts = {(time_t)(rem / NS_PER_SEC), (long)(rem % NS_PER_SEC)};
		int sig = sigtimedwait(sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			return true;
	}
}

/* Runs the intervals from t0 (or until a signal), printing a row after each. */
static void run_intervals(struct sr_run *run, struct totals *tot, uint64_t t0, const sigset_t *sigs)
{
	const struct sr_config *cfg = &run->cfg;
	const uint64_t interval_ns = (uint64_t)(cfg->interval * (double)NS_PER_SEC);
	const uint64_t total = cfg->intervals ? cfg->warmup + cfg->intervals : UINT64_MAX;
	uint64_t prev = t0;
	tot->measure_start = t0;
	tot->cpu_start = cpu_secs();
	for (uint64_t i = 1; i <= total && !tot->interrupted; i++) {
		tot->interrupted = wait_until(t0 + i * interval_ns, sigs);
		uint64_t now = now_ns();
		bool warming = i <= cfg->warmup;
		stats_reset(tot->iv);
		run->engine->collect(run, tot->iv, tot->scratch);
		stats_add(warming ? tot->warm : tot->overall, tot->iv);
		if (!warming)
			tot->measured_intervals++;
		report_row(cfg, tot->iv, (double)(now - prev) / 1e9, tot->overall,
		           (double)(now - tot->measure_start) / 1e9, warming);
		prev = now;
		if (warming && i == cfg->warmup) {
			tot->measure_start = now;
			tot->cpu_start = cpu_secs();
			report_warmup_done(cfg);
		}
	}
	tot->end = prev;
	tot->cpu_end = cpu_secs();
}

static void summarize(const struct sr_run *run, const struct totals *tot, int left,
                      uint64_t t_start)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct report_end end = {
	    .overall = tot->overall,
	    .warm = tot->warm,
	    .measured = tot->measured_intervals ? (double)(tot->end - tot->measure_start) / 1e9 : 0,
	    .interrupted = tot->interrupted,
	    .left = left,
	    .user = tv_secs(ru.ru_utime),
	    .sys = tv_secs(ru.ru_stime),
	    .wall = (double)(now_ns() - t_start) / 1e9,
	    .measured_cpu = tot->cpu_end - tot->cpu_start,
	};
	report_summary(&run->cfg, &end);
}

/* Connects, runs the load and reports; returns the exit status. */
static int run_load(struct sr_run *run, struct totals *tot, uint64_t t_start)
{
	signal(SIGPIPE, SIG_IGN);
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* threads inherit it; main takes them */

	run->engine->create(run, (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ t_start);
	if (!run->engine->connect(run))
		return 1;
	report_banner(&run->cfg);
	report_header(&run->cfg);
	uint64_t t0 = now_ns();
	bool started = run->engine->start(run);
	if (started)
		run_intervals(run, tot, t0, &sigs);
	atomic_store(&run->stop, true);
	int left = run->engine->join(run);
	if (!started)
		return 1;
	summarize(run, tot, left, t_start);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t t_start = now_ns();
	struct sr_run run = {0};
	atomic_init(&run.stop, false);
	int status = options_parse(&run.cfg, argc, argv);
	run.engine = run.cfg.engine == SR_ENGINE_LIBLDAP ? &sr_engine_libldap : &sr_engine_lean;
	if (status < 0) {
		struct totals tot = {
		    .overall = sr_xcalloc(1, sizeof(struct stats)),
		    .warm = sr_xcalloc(1, sizeof(struct stats)),
		    .iv = sr_xcalloc(1, sizeof(struct stats)),
		    .scratch = sr_xcalloc(1, sizeof(struct stats)),
		};
		stats_reset(tot.overall);
		stats_reset(tot.warm);
		status = run_load(&run, &tot, t_start);
		free(tot.overall);
		free(tot.warm);
		free(tot.iv);
		free(tot.scratch);
	}
	run.engine->free(&run);
	options_free(&run.cfg);
	return status;
}
