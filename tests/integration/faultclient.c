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
 * Prints "ok - ..." lines; exits 1 on the first failure.
 */
#include <arpa/inet.h>
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

static const char *host, *port;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		printf("not ok - ");                                                               \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		exit(1);                                                                           \
	} while (0)

static int connect_to_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		FAIL("socket: %s", strerror(errno));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	inet_pton(AF_INET, host, &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		FAIL("connect %s:%s: %s", host, port, strerror(errno));
	return fd;
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

static void cmd_churn(int n, int rounds)
{
	struct berval *req = rootdse_search(1);
	int *fds = calloc((size_t)n, sizeof(int));
	enum churn_state *st = calloc((size_t)n, sizeof(*st));
	long answered_total = 0, closed_total = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++) {
			fds[i] = connect_to_server();
			st[i] = WAITING;
			/* A connection the server already shed may refuse the bytes: that is a
			 * close. */
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
				p[i] = (struct pollfd){.fd = st[i] == WAITING ? fds[i] : -1,
				                       .events = POLLIN};
			if (poll(p, (nfds_t)n, 200) < 0)
				FAIL("poll: %s", strerror(errno));
			for (int i = 0; i < n; i++) {
				if (st[i] != WAITING || !p[i].revents)
					continue;
				unsigned char buf[4096];
				ssize_t got = recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT);
				if (got < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				/* Any answer starts with an LDAPMessage; EOF or a reset is a close.
				 */
				st[i] = got > 0 && buf[0] == 0x30 ? ANSWERED : CLOSED;
				waiting--;
			}
		}
		long answered = 0, closed = 0;
		for (int i = 0; i < n; i++) {
			answered += st[i] == ANSWERED;
			closed += st[i] == CLOSED;
			close(fds[i]);
		}
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

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: faultclient churn HOST PORT N ROUNDS\n");
		return 2;
	}
	host = argv[2];
	port = argv[3];
	const char *cmd = argv[1];
	if (strcmp(cmd, "churn") == 0 && argc > 5)
		cmd_churn(atoi(argv[4]), atoi(argv[5]));
	else {
		fprintf(stderr, "faultclient: unknown command or missing arguments\n");
		return 2;
	}
	return 0;
}
