/*
 * bench/costlyload.c: lookups beside costly filters. LOOKUPS connections each send
 * 1-entry lookups, (uid=user.I) for I random below ENTRIES, one at a time, while
 * ATTACKERS other connections each repeat one search of an OR of ITEMS extensible :dn:
 * items that match nothing ("(:dn:caseIgnoreMatch:=nomatch.J)"), so that a server
 * evaluates every item on every entry. All anonymous, for SECONDS; bench/costly_filter.sh
 * runs it against minidir and slapd. With ITEM (a filter item with one %d, the item's
 * number, and no other %) the OR is of those; with ATTACK_BASE too the attackers search
 * that one entry (scope base), e.g. a large group and member items.
 *
 *   costlyload URI BASE SECONDS LOOKUPS ATTACKERS ITEMS ENTRIES [ITEM [ATTACK_BASE]]
 *
 * Prints one line: "lookups N p50 MS p99 MS max MS failed N attacks N codes C:N ...
 * worst_conn_p99 MS fewest_lookups N" (the lookups' latency in milliseconds, the
 * attackers' searches finished and their result codes, the highest p99 of one lookup
 * connection and the fewest lookups one got done). Every connection binds first; then the attackers
 * start, and the lookups 0.2 s later. Every loop ends by SECONDS (a lookup still waiting gets 10 s
 * more and counts as failed if it gets no answer by then, with the time it waited; an attacker's
 * search is abandoned). Exits 1 when a connection fails.
 */
#include <ldap.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 4000000 /* per run, over all lookup threads */
#define MAX_LOOKUPS 64
#define MAX_CODES 128

static const char *uri, *base;
static int seconds, entries, items;
static atomic_bool stop;
static double *samples;
static atomic_long nsamples, nfailed, nattacks;
/* Each lookup connection's own latencies too: a connection on a worker a costly search
 * holds gets fewer answers, so the pooled percentiles lean on the others. */
static double *own[MAX_LOOKUPS];
static long nown[MAX_LOOKUPS], own_cap;
static atomic_long codes[MAX_CODES];
static char *attack_filter;
static const char *attack_base; /* the attackers' base (scope base), or NULL: base, subtree */
/* Every connection binds before any search starts (a stalled server would hold the binds). */
static pthread_barrier_t bound;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static LDAP *connect_anon(void)
{
	LDAP *ld = NULL;
	int v3 = LDAP_VERSION3;
	struct berval none = {0, NULL};
	if (ldap_initialize(&ld, uri) != LDAP_SUCCESS ||
	    ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3) != LDAP_OPT_SUCCESS ||
	    ldap_sasl_bind_s(ld, "", LDAP_SASL_SIMPLE, &none, NULL, NULL, NULL) != LDAP_SUCCESS) {
		fprintf(stderr, "costlyload: cannot bind to %s\n", uri);
		exit(1);
	}
	return ld;
}

static void *lookups(void *arg)
{
	size_t me = (size_t)arg;
	unsigned seed = (unsigned)me * 7919u + 17u;
	LDAP *ld = connect_anon();
	char *attrs[] = {"cn", NULL};
	pthread_barrier_wait(&bound);
	usleep(200000); /* the attackers' first searches are under way */
	while (!atomic_load(&stop)) {
		char filter[64];
		snprintf(filter, sizeof(filter), "(uid=user.%d)", (int)(rand_r(&seed) % entries));
		struct timeval limit = {10, 0};
		LDAPMessage *res = NULL;
		double t0 = now_ms();
		int rc = ldap_search_ext_s(ld, base, LDAP_SCOPE_SUBTREE, filter, attrs, 0, NULL,
		                           NULL, &limit, 0, &res);
		double t = now_ms() - t0;
		if (rc != LDAP_SUCCESS || ldap_count_entries(ld, res) != 1)
			atomic_fetch_add(&nfailed, 1);
		ldap_msgfree(res);
		long i = atomic_fetch_add(&nsamples, 1);
		if (i < MAX_SAMPLES)
			samples[i] = t;
		if (nown[me] < own_cap)
			own[me][nown[me]++] = t;
		if (rc == LDAP_SERVER_DOWN)
			break;
	}
	ldap_unbind_ext_s(ld, NULL, NULL);
	return NULL;
}

static void *attacker(void *arg)
{
	(void)arg;
	LDAP *ld = connect_anon();
	char *attrs[] = {"1.1", NULL};
	pthread_barrier_wait(&bound);
	while (!atomic_load(&stop)) {
		int msgid;
		if (ldap_search_ext(ld, attack_base ? attack_base : base,
		                    attack_base ? LDAP_SCOPE_BASE : LDAP_SCOPE_SUBTREE,
		                    attack_filter, attrs, 0, NULL, NULL, NULL, 0,
		                    &msgid) != LDAP_SUCCESS)
			break;
		int code = -1;
		while (!atomic_load(&stop) && code < 0) {
			struct timeval wait = {0, 100000};
			LDAPMessage *res = NULL;
			int t = ldap_result(ld, msgid, LDAP_MSG_ALL, &wait, &res);
			if (t < 0) {
				code = MAX_CODES - 1;
			} else if (t == LDAP_RES_SEARCH_RESULT) {
				int err = LDAP_OTHER;
				ldap_parse_result(ld, res, &err, NULL, NULL, NULL, NULL, 0);
				code = err >= 0 && err < MAX_CODES ? err : MAX_CODES - 1;
			}
			ldap_msgfree(res);
		}
		if (code < 0) { /* the time is up: not counted */
			ldap_abandon_ext(ld, msgid, NULL, NULL);
			break;
		}
		atomic_fetch_add(&codes[code], 1);
		atomic_fetch_add(&nattacks, 1);
		if (code == MAX_CODES - 1)
			break;
	}
	ldap_unbind_ext_s(ld, NULL, NULL);
	return NULL;
}

/* The p99 of sorted v[0..n) by nearest rank (of 2 samples, the larger); 0 when empty. */
static double p99_of(const double *v, long n)
{
	return n ? v[(n * 99 + 99) / 100 - 1] : 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 8 || argc > 10) {
		fprintf(stderr,
		        "usage: costlyload URI BASE SECONDS LOOKUPS ATTACKERS ITEMS ENTRIES "
		        "[ITEM [ATTACK_BASE]]\n");
		return 2;
	}
	const char *item = argc > 8 ? argv[8] : "(:dn:caseIgnoreMatch:=nomatch.%d)";
	attack_base = argc > 9 ? argv[9] : NULL;
	const char *pct = strchr(item, '%');
	if (!pct || pct[1] != 'd' || strchr(pct + 1, '%')) {
		fprintf(stderr, "costlyload: ITEM needs one %%d and no other %%\n");
		return 2;
	}
	uri = argv[1];
	base = argv[2];
	seconds = atoi(argv[3]);
	int nlook = atoi(argv[4]), natt = atoi(argv[5]);
	items = atoi(argv[6]);
	entries = atoi(argv[7]);
	if (seconds < 1 || nlook < 1 || nlook > MAX_LOOKUPS || natt < 0 || natt > 64 || items < 1 ||
	    items > 1000000 || entries < 1) {
		fprintf(stderr, "costlyload: bad arguments\n");
		return 2;
	}
	size_t cap = (size_t)items * (strlen(item) + 12) + 8;
	attack_filter = malloc(cap);
	samples = malloc(MAX_SAMPLES * sizeof(*samples));
	if (!attack_filter || !samples)
		return 1;
	own_cap = MAX_SAMPLES / nlook;
	for (int i = 0; i < nlook; i++)
		if (!(own[i] = malloc((size_t)own_cap * sizeof(double))))
			return 1;
	size_t len = (size_t)snprintf(attack_filter, cap, "(|");
	int head = (int)(pct - item); /* ITEM is checked above: one %d, at pct */
	for (int j = 0; j < items; j++)
		len += (size_t)snprintf(attack_filter + len, cap - len, "%.*s%d%s", head, item, j,
		                        pct + 2);
	snprintf(attack_filter + len, cap - len, ")");
	pthread_t t[128];
	int n = 0;
	pthread_barrier_init(&bound, NULL, (unsigned)(natt + nlook + 1));
	for (int i = 0; i < natt; i++)
		pthread_create(&t[n++], NULL, attacker, NULL);
	for (int i = 0; i < nlook; i++)
		pthread_create(&t[n++], NULL, lookups, (void *)(size_t)i);
	pthread_barrier_wait(&bound);
	usleep(200000);
	sleep((unsigned)seconds);
	atomic_store(&stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	long ns = atomic_load(&nsamples);
	if (ns > MAX_SAMPLES)
		ns = MAX_SAMPLES;
	qsort(samples, (size_t)ns, sizeof(*samples), by_value);
	double p50 = ns ? samples[(ns - 1) / 2] : 0, p99 = p99_of(samples, ns),
	       max = ns ? samples[ns - 1] : 0;
	printf("lookups %ld p50 %.2f p99 %.2f max %.2f failed %ld attacks %ld codes", ns, p50, p99,
	       max, atomic_load(&nfailed), atomic_load(&nattacks));
	for (int c = 0; c < MAX_CODES; c++)
		if (atomic_load(&codes[c]))
			printf(" %d:%ld", c, atomic_load(&codes[c]));
	/* The slowest connection: its p99 and how many lookups it got done. */
	double worst = 0;
	long fewest = -1;
	for (int i = 0; i < nlook; i++) {
		qsort(own[i], (size_t)nown[i], sizeof(double), by_value);
		double p = p99_of(own[i], nown[i]);
		worst = p > worst ? p : worst;
		fewest = fewest < 0 || nown[i] < fewest ? nown[i] : fewest;
		free(own[i]);
	}
	printf(" worst_conn_p99 %.2f fewest_lookups %ld\n", worst, fewest);
	free(samples);
	free(attack_filter);
	return 0;
}
