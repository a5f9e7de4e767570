/*
 * Fault checks run against a live minidir by fault_test.sh: connection churn
 * past the server's descriptor limit, and bind timing. Like ldapclient.c it
 * talks raw BER over real sockets.
 *
 *   faultclient churn HOST PORT N ROUNDS
 *       N connections at once, ROUNDS times: each sends a root DSE search; every
 *       one must be answered or closed by the server (none left hanging), some
 *       must be answered, and (to show the limit was reached) some closed.
 *
 *   faultclient hold HOST PORT N
 *       N connections at once, each sending a root DSE search; waits up to 10 s for
 *       each to be answered or closed, prints "held A answered, C closed, H hanging",
 *       keeps them all open until a line arrives on standard input, then closes them
 *       and prints "released". The server stays at its descriptor limit meanwhile.
 *
 *   faultclient bindtime HOST PORT N DN...
 *       N rounds of simple binds with a wrong password to each DN in turn, on one
 *       connection; the median time of each DN must be within 10% of the first's
 *       (five tries, against a noisy machine: the answers of failed binds wait for a
 *       timer, and a busy machine wakes the server late by a few milliseconds).
 *
 *   faultclient damaged HOST PORT BASE BINDDN PASSWORD FILTER
 *       on one connection bound as BINDDN: a subtree search of BASE for every entry, then a
 *       search of BASE for FILTER; prints "subtree R (N entries), then FILTER R (N entries)"
 *       with each one's result code (-1 and the client's error: the connection was lost).
 *
 *   faultclient crypt PASSWORD SETTING
 *       prints crypt(3) of PASSWORD with SETTING ("$6$salt$"), for test data.
 *
 * Prints "ok - ..." lines; exits 1 on the first failure.
 */
#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <lber.h>
#include <ldap.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/client.h"

static const char *host, *port;

static int connect_to_server(void)
{
	return client_connect(host, port, 0);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A base-scope search of the root DSE, as raw BER. */
static struct berval *rootdse_search(int msgid)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	struct berval *bv = NULL;
	if (ber_printf(ber, "{it{seeiibts{}}}", msgid, (ber_tag_t)LDAP_REQ_SEARCH, "",
	               LDAP_SCOPE_BASE, LDAP_DEREF_NEVER, 0, 0, 0, (ber_tag_t)LDAP_FILTER_PRESENT,
	               "objectClass") < 0 ||
	    ber_flatten(ber, &bv) < 0)
		FAIL("encoding a search");
	ber_free(ber, 1);
	return bv;
}

enum churn_state { WAITING, ANSWERED, CLOSED };

/*
 * Opens n connections, each sending req, then waits up to 10 s for each to be answered
 * or closed by the server (st[i]). Returns how many did neither.
 */
static int connect_and_wait(struct berval *req, int n, int *fds, enum churn_state *st)
{
	for (int i = 0; i < n; i++) {
		fds[i] = connect_to_server();
		st[i] = WAITING;
		/* A connection the server already shed may refuse the bytes: that is a close. */
		if (send(fds[i], req->bv_val, req->bv_len, MSG_NOSIGNAL) < 0)
			st[i] = CLOSED;
	}
	int waiting = n;
	for (int i = 0; i < n; i++)
		waiting -= st[i] != WAITING;
	double deadline = now_ms() + 10000;
	while (waiting > 0 && now_ms() < deadline) {
		struct pollfd p[n];
		for (int i = 0; i < n; i++)
			p[i] =
			    (struct pollfd){.fd = st[i] == WAITING ? fds[i] : -1, .events = POLLIN};
		if (poll(p, (nfds_t)n, 200) < 0)
			FAIL("poll: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			if (st[i] != WAITING || !p[i].revents)
				continue;
			unsigned char buf[4096];
			ssize_t got = recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT);
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			/* Any answer starts with an LDAPMessage; EOF or a reset is a close. */
			st[i] = got > 0 && buf[0] == 0x30 ? ANSWERED : CLOSED;
			waiting--;
		}
	}
	return waiting;
}

static void count_states(int n, const enum churn_state *st, long *answered, long *closed)
{
	*answered = *closed = 0;
	for (int i = 0; i < n; i++) {
		*answered += st[i] == ANSWERED;
		*closed += st[i] == CLOSED;
	}
}

static void cmd_churn(int n, int rounds)
{
	struct berval *req = rootdse_search(1);
	int *fds = calloc((size_t)n, sizeof(int));
	enum churn_state *st = calloc((size_t)n, sizeof(*st));
	long answered_total = 0, closed_total = 0;
	for (int r = 0; r < rounds; r++) {
		int waiting = connect_and_wait(req, n, fds, st);
		long answered, closed;
		count_states(n, st, &answered, &closed);
		for (int i = 0; i < n; i++)
			close(fds[i]);
		if (waiting > 0)
			FAIL("churn round %d: %d of %d connections neither answered nor closed in "
			     "10 s "
			     "(%ld answered, %ld closed)",
			     r + 1, waiting, n, answered, closed);
		if (answered == 0)
			FAIL("churn round %d: no connection answered (%ld closed)", r + 1, closed);
		answered_total += answered;
		closed_total += closed;
		usleep(200 * 1000);
	}
	if (closed_total == 0)
		FAIL("churn: the server never ran out of descriptors (%ld answered): the test "
		     "did not reach the limit",
		     answered_total);
	printf("ok - churn: %d rounds of %d connections: %ld answered, %ld closed by the server, "
	       "none left hanging\n",
	       rounds, n, answered_total, closed_total);
	ber_bvfree(req);
	free(fds);
	free(st);
}

/*
 * N connections at once, kept open after their answer so that the server stays at its
 * descriptor limit; released (closed) when a line arrives on standard input.
 */
static void cmd_hold(int n)
{
	struct berval *req = rootdse_search(1);
	int *fds = calloc((size_t)n, sizeof(int));
	enum churn_state *st = calloc((size_t)n, sizeof(*st));
	int waiting = connect_and_wait(req, n, fds, st);
	long answered, closed;
	count_states(n, st, &answered, &closed);
	printf("held %ld answered, %ld closed, %d hanging\n", answered, closed, waiting);
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	printf("released\n");
	ber_bvfree(req);
	free(fds);
	free(st);
}

/* Sends a simple bind and waits for its response; returns the resultCode. */
static int bind_once(int fd, int msgid, const char *dn, const char *pw)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	struct berval *bv = NULL;
	if (ber_printf(ber, "{it{ists}}", msgid, (ber_tag_t)LDAP_REQ_BIND, 3, dn,
	               (ber_tag_t)LDAP_AUTH_SIMPLE, pw) < 0 ||
	    ber_flatten(ber, &bv) < 0)
		FAIL("encoding a bind");
	ber_free(ber, 1);
	if (send(fd, bv->bv_val, bv->bv_len, MSG_NOSIGNAL) != (ssize_t)bv->bv_len)
		FAIL("send: %s", strerror(errno));
	ber_bvfree(bv);
	/* BindResponse: 30 LL 02 01 ID 61 LL 0a 01 RC ...; small enough for one read */
	unsigned char buf[512];
	ssize_t got = 0;
	while (got < 10) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - (size_t)got, 0);
		if (n <= 0)
			FAIL("bind %s: connection closed", dn);
		got += n;
	}
	unsigned char *rc = memmem(buf, (size_t)got, "\x0a\x01", 2);
	if (!rc || rc + 2 >= buf + got)
		FAIL("bind %s: no resultCode in the response", dn);
	return rc[2];
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One try: the medians of each DN; returns true if all are within 10% of the first. */
static bool bindtime_try(int fd, int rounds, int ndn, char **dns, double *median)
{
	double *t = calloc((size_t)(rounds * ndn), sizeof(double));
	int msgid = 1;
	for (int r = 0; r < rounds; r++)
		for (int d = 0; d < ndn; d++) {
			double a = now_ms();
			int rc = bind_once(fd, msgid++, dns[d], "wrong-password");
			t[d * rounds + r] = now_ms() - a;
			if (rc != LDAP_INVALID_CREDENTIALS)
				FAIL("bind %s with a wrong password: result %d, not 49", dns[d],
				     rc);
		}
	bool close_enough = true;
	for (int d = 0; d < ndn; d++) {
		qsort(t + d * rounds, (size_t)rounds, sizeof(double), compare_double);
		median[d] = t[d * rounds + rounds / 2];
		if (d > 0 && (median[d] < median[0] * 0.9 || median[d] > median[0] * 1.1))
			close_enough = false;
	}
	free(t);
	return close_enough;
}

#define BINDTIME_TRIES 5

static void cmd_bindtime(int rounds, int ndn, char **dns)
{
	int fd = connect_to_server();
	double median[ndn];
	for (int attempt = 1; attempt <= BINDTIME_TRIES; attempt++) {
		bool ok = bindtime_try(fd, rounds, ndn, dns, median);
		char line[4096];
		int n = 0;
		for (int d = 0; d < ndn; d++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s %.3f ms",
			              d ? ", " : "", dns[d], median[d]);
		if (ok) {
			printf(
			    "ok - bind timing: medians within 10%% (try %d, %d binds each): %s\n",
			    attempt, rounds, line);
			close(fd);
			return;
		}
		fprintf(stderr, "# bind timing, try %d: %s\n", attempt, line);
		if (attempt == BINDTIME_TRIES)
			FAIL("bind timing tells DNs apart (medians, %d binds each): %s", rounds,
			     line);
	}
}

/* A subtree search of base for filter on ld: its result code (-1: the connection was
 * lost), its entries in *entries. */
static int search_count(LDAP *ld, const char *base, const char *filter, int *entries)
{
	char *attrs[] = {LDAP_NO_ATTRS, NULL};
	struct timeval tv = {10, 0};
	LDAPMessage *res = NULL;
	int rc = ldap_search_ext_s(ld, base, LDAP_SCOPE_SUBTREE, filter, attrs, 0, NULL, NULL, &tv,
	                           0, &res);
	*entries = res ? ldap_count_entries(ld, res) : 0;
	if (rc == LDAP_SERVER_DOWN || rc == LDAP_TIMEOUT)
		fprintf(stderr, "# %s: %s\n", filter, ldap_err2string(rc));
	ldap_msgfree(res);
	return rc == LDAP_SERVER_DOWN || rc == LDAP_TIMEOUT ? -1 : rc;
}

static void cmd_damaged(const char *base, const char *dn, const char *pw, const char *filter)
{
	LDAP *ld = client_bind(host, port, dn, pw, "damaged");
	int all, found;
	int rc_all = search_count(ld, base, "(objectClass=*)", &all);
	int rc_one = search_count(ld, base, filter, &found);
	printf("subtree %d (%d entries), then %s %d (%d entries)\n", rc_all, all, filter, rc_one,
	       found);
	ldap_unbind_ext_s(ld, NULL, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr,
		        "usage: faultclient churn HOST PORT N ROUNDS | hold HOST PORT N | "
		        "bindtime HOST PORT N DN... | damaged HOST PORT BASE BINDDN PASSWORD "
		        "FILTER "
		        "| crypt PASSWORD SETTING\n");
		return 2;
	}
	if (strcmp(argv[1], "crypt") == 0) {
		struct crypt_data data;
		memset(&data, 0, sizeof(data));
		const char *h = crypt_r(argv[2], argv[3], &data);
		if (!h || h[0] == '*')
			return 1;
		puts(h);
		return 0;
	}
	host = argv[2];
	port = argv[3];
	const char *cmd = argv[1];
	if (strcmp(cmd, "churn") == 0 && argc > 5)
		cmd_churn(atoi(argv[4]), atoi(argv[5]));
	else if (strcmp(cmd, "hold") == 0 && argc > 4)
		cmd_hold(atoi(argv[4]));
	else if (strcmp(cmd, "damaged") == 0 && argc > 7)
		cmd_damaged(argv[4], argv[5], argv[6], argv[7]);
	else if (strcmp(cmd, "bindtime") == 0 && argc > 6)
		cmd_bindtime(atoi(argv[4]), argc - 5, argv + 5);
	else {
		fprintf(stderr, "faultclient: unknown command or missing arguments\n");
		return 2;
	}
	return 0;
}
