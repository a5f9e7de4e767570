/*
 * report.c: the table, the CSV rows and the summary (see report.h). The format is the
 * contract with bench/run.sh and tests/integration/searchrate_test.sh: change neither a
 * label nor a column without them.
 */
#include "tools/searchrate/report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include <ldap.h>

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

void report_banner(const struct sr_config *cfg)
{
	if (cfg->csv)
		return;
	printf("searchrate: %s%s%s, %s engine, %d thread%s, %d connection%s, %s", cfg->uri,
	       cfg->use_starttls ? " with StartTLS" : "",
	       cfg->resume_tls ? ", TLS sessions resumed" : "",
	       cfg->engine == SR_ENGINE_LIBLDAP ? "libldap" : "lean", cfg->threads,
	       cfg->threads == 1 ? "" : "s", cfg->conns, cfg->conns == 1 ? "" : "s",
	       cfg->async ? "asynchronous" : "synchronous");
	if (cfg->async)
		printf(" (up to %d outstanding per connection)", cfg->max_outstanding);
	if (cfg->rate > 0)
		printf(", target %g searches/s", cfg->rate);
	if (cfg->reconnect_every)
		printf(", reconnecting after every %" PRIu64 " search%s", cfg->reconnect_every,
		       cfg->reconnect_every == 1 ? "" : "es");
	printf("\nsearching base \"%s\" scope %s filter \"%s\"", cfg->base.src, cfg->scope_name,
	       cfg->filter.src);
	if (cfg->intervals)
		printf(" for %" PRIu64 " interval%s of %g s", cfg->intervals,
		       cfg->intervals == 1 ? "" : "s", cfg->interval);
	else
		printf(" in intervals of %g s until interrupted", cfg->interval);
	if (cfg->warmup)
		printf(" after %" PRIu64 " warm-up interval%s", cfg->warmup,
		       cfg->warmup == 1 ? "" : "s");
	printf("\n\n");
}

void report_header(const struct sr_config *cfg)
{
	if (cfg->csv) {
		puts("Recent Searches/Sec,Recent Avg Dur ms,Recent Entries/Srch,Recent Errors/Sec,"
		     "Overall Searches/Sec,Overall Avg Dur ms");
	} else {
		printf("%12s %12s %12s %12s %12s %12s\n", "Recent", "Recent", "Recent", "Recent",
		       "Overall", "Overall");
		printf("%12s %12s %12s %12s %12s %12s\n", "Searches/Sec", "Avg Dur ms",
		       "Entries/Srch", "Errors/Sec", "Searches/Sec", "Avg Dur ms");
		printf("%12s %12s %12s %12s %12s %12s\n", "------------", "------------",
		       "------------", "------------", "------------", "------------");
	}
	fflush(stdout);
}

void report_row(const struct sr_config *cfg, const struct stats *iv, double secs,
                const struct stats *all, double all_secs, bool warming)
{
	double r_rate = ratio((double)iv->searches, secs);
	double r_dur = ratio((double)iv->dur_ns / 1e6, (double)iv->searches);
	double r_ent = ratio((double)iv->entries, (double)iv->searches);
	double r_err = ratio((double)iv->errors, secs);
	printf(cfg->csv ? "%.3f,%.3f,%.3f,%.3f," : "%12.3f %12.3f %12.3f %12.3f ", r_rate, r_dur,
	       r_ent, r_err);
	if (warming) {
		printf(cfg->csv ? "warming up,warming up\n" : "%12s %12s\n", "warming up",
		       "warming up");
	} else {
		printf(cfg->csv ? "%.3f,%.3f\n" : "%12.3f %12.3f\n",
		       ratio((double)all->searches, all_secs),
		       ratio((double)all->dur_ns / 1e6, (double)all->searches));
	}
	fflush(stdout);
}

void report_warmup_done(const struct sr_config *cfg)
{
	if (cfg->csv)
		return;
	puts("Warm-up completed.  Beginning overall statistics collection.");
	fflush(stdout);
}

/* A summary line; in CSV mode a '#' comment after the rows. */
__attribute__((format(printf, 2, 3))) static void summary(const struct sr_config *cfg,
                                                          const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (cfg->csv)
		fputs("# ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
}

static void summary_result_codes(const struct sr_config *cfg, const struct stats *s,
                                 const char *indent)
{
	bool any = false;
	for (unsigned i = 0; i < RC_SLOTS; i++)
		any = any || s->rc[i];
	if (!any)
		summary(cfg, "%snone\n", indent);
	for (unsigned i = 0; i < RC_SLOTS; i++) {
		if (!s->rc[i])
			continue;
		if (i == RC_OTHER) {
			summary(cfg, "%sother result codes: %" PRIu64 "\n", indent, s->rc[i]);
		} else {
			int rc = stats_slot_rc(i);
			summary(cfg, "%s%d (%s): %" PRIu64 "\n", indent, rc, ldap_err2string(rc),
			        s->rc[i]);
		}
	}
}

/* Totals, rate and latency of the measured intervals. */
static void summary_totals(const struct sr_config *cfg, const struct stats *o, double measured)
{
	summary(cfg, "  Total searches:        %" PRIu64 "\n", o->searches);
	summary(cfg, "  Total entries:         %" PRIu64 " (%.3f per search)\n", o->entries,
	        ratio((double)o->entries, (double)o->searches));
	summary(cfg, "  Total errors:          %" PRIu64 "\n", o->errors);
	summary(cfg, "  Searches/sec:          %.3f\n", ratio((double)o->searches, measured));
	summary(cfg, "  Average duration ms:   %.3f\n",
	        ratio((double)o->dur_ns / 1e6, (double)o->searches));
	if (!o->searches) {
		summary(cfg, "  Latency ms:            no searches completed\n");
		return;
	}
	summary(cfg,
	        "  Latency ms:            min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  "
	        "p99.9 %.3f  max %.3f\n",
	        (double)o->min_ns / 1e6, (double)stats_percentile(o, 0.5) / 1e6,
	        (double)stats_percentile(o, 0.9) / 1e6, (double)stats_percentile(o, 0.99) / 1e6,
	        (double)stats_percentile(o, 0.999) / 1e6, (double)o->max_ns / 1e6);
}

void report_summary(const struct sr_config *cfg, const struct report_end *end)
{
	const struct stats *o = end->overall, *warm = end->warm;
	printf("\n");
	if (end->interrupted)
		summary(cfg, "Interrupted by a signal: the last interval was cut short.\n");
	summary(cfg, "Summary (%.3f s measured", end->measured);
	if (cfg->warmup)
		printf(", warm-up intervals excluded");
	printf("):\n");
	summary_totals(cfg, o, end->measured);
	summary(cfg, "  Result codes:\n");
	summary_result_codes(cfg, o, "    ");
	if (o->reconnects) /* with --iterationsBeforeReconnect, a TLS handshake rate */
		summary(cfg, "  Reconnects:            %" PRIu64 " (%.3f/s)\n", o->reconnects,
		        ratio((double)o->reconnects, end->measured));
	if (cfg->resume_tls)
		summary(cfg, "  Resumed TLS sessions:  %" PRIu64 " (%.3f/s)\n", o->resumed,
		        ratio((double)o->resumed, end->measured));
	if (cfg->warmup) {
		summary(cfg, "  Warm-up (excluded):    %" PRIu64 " searches, %" PRIu64 " errors\n",
		        warm->searches, warm->errors);
		if (warm->errors)
			summary_result_codes(cfg, warm, "    ");
	}
	if (end->left)
		summary(cfg, "  In flight at stop:     %d (not counted)\n", end->left);
	summary(cfg,
	        "  searchrate CPU:        %.3f s (user %.3f s, sys %.3f s) = %.1f%% of one core "
	        "over %.3f s wall\n",
	        end->user + end->sys, end->user, end->sys,
	        ratio((end->user + end->sys) * 100, end->wall), end->wall);
	if (o->searches) /* the measured intervals only: no start-up, no warm-up */
		summary(cfg,
		        "  Client CPU us/search:  %.2f (searchrate's user+sys over the measured "
		        "intervals)\n",
		        ratio(end->measured_cpu * 1e6, (double)o->searches));
	fflush(stdout);
}

void report_open_failure(const struct sr_config *cfg, const char *what, int rc, const char *diag,
                         bool cert_rejected)
{
	fprintf(stderr, "searchrate: %s: %s (%d)%s%s", what, ldap_err2string(rc), rc,
	        diag && *diag ? ": " : "", diag ? diag : "");
	if (cert_rejected)
		fprintf(
		    stderr,
		    "; TLS: the server's certificate was rejected (not issued by %s%s, expired, "
		    "or not for %s): give --trustStorePath with its CA certificate, or "
		    "--trustAll",
		    cfg->truststore ? "a CA in " : "one of the system's CAs",
		    cfg->truststore ? cfg->truststore : "", cfg->host);
	fputc('\n', stderr);
}
