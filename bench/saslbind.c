/* bench/saslbind.c: many binds in flight, for bench/gssapi_binds.sh. Each of THREADS
 * threads (one connection each at a time) loops: a new connection, one bind, unbind and
 * close. The bind is SASL GSSAPI (-Y GSSAPI: ldap_sasl_interactive_bind_s, quiet, with
 * the tickets of $KRB5CCNAME, SASL_NOCANON so the service is ldap/HOST of the URI) or a
 * simple bind (-D DN -w PASSWORD). Runs WARMUP seconds (not counted), then SECONDS
 * (counted), and records each counted bind's latency (connect to bound).
 *
 *   saslbind -H URI (-Y GSSAPI [-O SECPROPS] | -D DN -w PASSWORD) [-n THREADS]
 *            [-W WARMUP] [-d SECONDS]
 *
 * -O: the SASL security properties (default "maxssf=0": no security layer; -O default
 * leaves libldap's, which GSSAPI answers with privacy). Prints "measuring" when the
 * counted window starts and "done" when it ends (the caller samples the server's CPU
 * time at those lines), then a summary: Total binds, Total errors (the first error's
 * code and text on stderr), Binds/sec, Latency ms percentiles, its own CPU, and every
 * bind it began (for a count per bind of what a tracer saw of the whole run).
 * Built by bench/gssapi_binds.sh with: cc -O2 -o saslbind saslbind.c -lldap -llber -lpthread
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ldap.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loadrun.h"

static const char *uri, *mech, *secprops = "maxssf=0", *binddn, *password;
static atomic_int first_error; /* the first failed bind's code was said */
static atomic_ulong attempts;  /* every bind_once, the probe and the warm-up's too */

/* GSSAPI with tickets in the cache asks nothing; libldap wants a callback all the same. */
static int no_interaction(LDAP *ld, unsigned flags, void *defaults, void *prompts)
{
	(void)ld, (void)flags, (void)defaults, (void)prompts;
	return LDAP_SUCCESS;
}

/* One connection, one bind, unbind. Returns the bind's result code (or the connect's). */
static int bind_once(void)
{
	LDAP *ld = NULL;
	atomic_fetch_add(&attempts, 1);
	int v3 = LDAP_VERSION3, rc = ldap_initialize(&ld, uri);
	if (rc != LDAP_SUCCESS)
		return rc;
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	if (mech) {
		ldap_set_option(ld, LDAP_OPT_X_SASL_NOCANON, LDAP_OPT_ON);
		if (strcmp(secprops, "default") != 0)
			ldap_set_option(ld, LDAP_OPT_X_SASL_SECPROPS, secprops);
		rc = ldap_sasl_interactive_bind_s(ld, NULL, mech, NULL, NULL, LDAP_SASL_QUIET,
		                                  no_interaction, NULL);
	} else {
		struct berval cred = {strlen(password), (char *)password};
		rc = ldap_sasl_bind_s(ld, binddn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
	}
	if (rc != LDAP_SUCCESS && !atomic_exchange(&first_error, 1)) {
		char *info = NULL;
		ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &info);
		fprintf(stderr, "saslbind: first failed bind: %d (%s) %s\n", rc,
		        ldap_err2string(rc), info ? info : "");
		ldap_memfree(info);
	}
	ldap_unbind_ext_s(ld, NULL, NULL);
	return rc;
}

/* bind_once as load_run's operation: 0 bound, -1 not. */
static int bind_op(uint64_t *rng)
{
	(void)rng;
	return bind_once() == LDAP_SUCCESS ? 0 : -1;
}

static void usage(void)
{
	fputs("usage: saslbind -H URI (-Y GSSAPI [-O SECPROPS|default] | -D DN -w PASSWORD) "
	      "[-n THREADS] [-W WARMUP_S] [-d SECONDS]\n",
	      stderr);
	exit(2);
}

/* Prints the summary of the measured seconds. */
static void summarize(const struct load_result *r, double warmup)
{
	double cpu = load_cpu_s();
	printf("\nSummary (%.3f s measured, %g s warm-up excluded), %s binds:\n"
	       "  Total binds:           %zu\n"
	       "  Total errors:          %llu\n"
	       "  Binds/sec:             %.3f\n"
	       "  Latency ms:            min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n"
	       "  saslbind CPU:          %.3f s = %.1f%% of one core\n"
	       "  Binds attempted:       %lu (all: the probe, the warm-up, those cut off)\n",
	       r->measured, warmup, mech ? mech : "simple", r->n, (unsigned long long)r->errors,
	       (double)r->n / r->measured, load_ms(r, 0), load_ms(r, 0.5), load_ms(r, 0.9),
	       load_ms(r, 0.99), load_ms(r, 1), cpu, 100 * cpu / (warmup + r->measured),
	       (unsigned long)atomic_load(&attempts));
}

int main(int argc, char **argv)
{
	int threads = 100, opt;
	double warmup = 2, secs = 10;
	/* the string options, each into its global */
	const char *strings = "HYODw", **into[] = {&uri, &mech, &secprops, &binddn, &password};
	while ((opt = getopt(argc, argv, "H:Y:O:D:w:n:W:d:")) != -1) {
		const char *at = strchr(strings, opt);
		if (at)
			*into[at - strings] = optarg;
		else if (opt == 'n')
			threads = atoi(optarg);
		else if (opt == 'W')
			warmup = atof(optarg);
		else if (opt == 'd')
			secs = atof(optarg);
		else
			usage();
	}
	if (!uri || (!mech && (!binddn || !password)) || threads < 1 || threads > 1024 ||
	    secs <= 0 || warmup < 0)
		usage();
	/* One probe first: a missing ticket or a wrong password fails here, not per bind. */
	int rc = bind_once();
	if (rc != LDAP_SUCCESS) {
		fprintf(stderr, "saslbind: the first bind at %s failed: %s\n", uri,
		        ldap_err2string(rc));
		return 1;
	}
	char banner[1024];
	snprintf(banner, sizeof(banner),
	         "saslbind: %s, %d threads, new connection + %s bind per operation, %g s warm-up, "
	         "%g s measured\n",
	         uri, threads, mech ? mech : "simple", warmup, secs);
	return load_main(bind_op, summarize, threads, warmup, secs, banner);
}
