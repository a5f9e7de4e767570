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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loadrun.h"

static const char *uri, *base, *password;
static long nentries;

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

/* one_op on a random user of the ENTRIES (load_run's operation). */
static int random_op(uint64_t *rng)
{
	return one_op((long)(next_rand(rng) % (uint64_t)nentries));
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

/* Prints the summary of the measured seconds in searchrate's format. */
static void report(const struct load_result *r, double warmup)
{
	printf("\nSummary (%.3f s measured, warm-up excluded):\n", r->measured);
	printf("  Total searches:        %zu\n", r->n);
	printf("  Total entries:         %llu\n", (unsigned long long)r->sum);
	printf("  Total errors:          %llu\n", (unsigned long long)r->errors);
	printf("  Searches/sec:          %.3f\n", (double)r->n / r->measured);
	printf("  Latency ms:            min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
	       "max %.3f\n",
	       load_ms(r, 0), load_ms(r, 0.5), load_ms(r, 0.9), load_ms(r, 0.99), load_ms(r, 0.999),
	       load_ms(r, 1));
	double cpu = load_cpu_s();
	printf("  bindsearch CPU:        %.3f s = %.1f%% of one core over %.3f s wall\n", cpu,
	       100 * cpu / (warmup + r->measured), warmup + r->measured);
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
	char banner[1024];
	snprintf(banner, sizeof(banner),
	         "bindsearch: %s, %d threads, new connection + bind + base search per operation, "
	         "%g s warm-up, %g s measured\n",
	         uri, threads, warmup, secs);
	return load_main(random_op, report, threads, warmup, secs, banner);
}
