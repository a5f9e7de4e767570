/*
 * Integration checks that ldapsearch cannot make: raw bytes on a socket,
 * pipelined requests, a client that never reads, many connections at once.
 * Talks to a running minidir; core_test.sh starts it and calls each subcommand.
 *
 *   ldapclient garbage HOST PORT
 *   ldapclient pipeline HOST PORT BASE
 *   ldapclient stall HOST PORT BASE [HOLD_SECONDS]
 *   ldapclient concurrent HOST PORT BASE N
 *   ldapclient slowread HOST PORT BASE ENTRIES [GOFILE]
 *   ldapclient fuzz HOST PORT BASE COUNT SEED
 *   ldapclient abandon HOST PORT BASE ENTRIES
 *   ldapclient unbindpipe HOST PORT BASE
 *   ldapclient pagedlimit HOST PORT BASE BINDDN PASSWORD LIMIT
 *   ldapclient dnload HOST PORT BASE COUNT RDNS
 *   ldapclient padded HOST PORT BASE
 *
 * Prints "ok - ..." lines; exits 1 on the first failure.
 */
#include <arpa/inet.h>
#include <errno.h>
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

static int connect_raw(int rcvbuf)
{
	return client_connect(host, port, rcvbuf);
}

static void send_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0)
			FAIL("send: %s", strerror(errno));
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

/* Reads everything until EOF (or timeout_ms of silence). Returns bytes read, -1 on timeout. */
static ssize_t read_until_eof(int fd, unsigned char *buf, size_t cap, int timeout_ms)
{
	size_t got = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		ssize_t n = recv(fd, buf + got, cap - got, 0);
		if (n <= 0)
			return (ssize_t)got;
		got += (size_t)n;
		if (got == cap)
			got = 0; /* keep reading; only EOF matters once full */
	}
}

static struct berval *encode(BerElement *ber)
{
	struct berval *bv = NULL;
	if (ber_flatten(ber, &bv) < 0)
		FAIL("ber_flatten");
	ber_free(ber, 1);
	return bv;
}

/* A SearchRequest for (objectClass=*) under base, scope subtree. */
static struct berval *search_pdu(int msgid, const char *base)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (ber_printf(ber, "{it{seeiibts{}}}", msgid, (ber_tag_t)LDAP_REQ_SEARCH, base,
	               LDAP_SCOPE_SUBTREE, LDAP_DEREF_NEVER, 0, 0, 0,
	               (ber_tag_t)LDAP_FILTER_PRESENT, "objectClass") < 0)
		FAIL("ber_printf search");
	return encode(ber);
}

/* Expects a Notice of Disconnection (protocolError) and then EOF. */
static void expect_disconnect(const char *what, const void *bytes, size_t n)
{
	int fd = connect_raw(0);
	send_all(fd, bytes, n);
	unsigned char buf[4096];
	ssize_t got = read_until_eof(fd, buf, sizeof(buf), 5000);
	close(fd);
	if (got < 0)
		FAIL("%s: no disconnect within 5 s", what);
	if (got == 0 || buf[0] != 0x30)
		FAIL("%s: connection closed without a Notice of Disconnection", what);
	if (!memmem(buf, (size_t)got, "1.3.6.1.4.1.1466.20036", 22))
		FAIL("%s: the response is not a Notice of Disconnection", what);
	/* resultCode protocolError (2) as ENUMERATED: 0a 01 02 */
	if (!memmem(buf, (size_t)got, "\x0a\x01\x02", 3))
		FAIL("%s: the notice does not carry protocolError", what);
	printf("ok - %s: protocolError notice, then closed\n", what);
}

static void cmd_garbage(void)
{
	expect_disconnect("text instead of BER", "GET / HTTP/1.0\r\n\r\n", 18);
	expect_disconnect("huge declared length", "\x30\x84\x7f\xff\xff\xff\x02\x01\x01", 9);
	expect_disconnect("indefinite length", "\x30\x80\x02\x01\x01\x00\x00", 7);
	expect_disconnect("framed but not an LDAPMessage", "\x30\x03\x01\x01\xff", 5);
	expect_disconnect("search with a truncated filter",
	                  "\x30\x15\x02\x01\x01\x63\x10\x04\x00\x0a\x01\x02\x0a\x01\x00\x02\x01\x00"
	                  "\x02\x01\x00\x01\x01\x00\xa3",
	                  23);
	/* A client that sends half a PDU and goes away must not disturb anything. */
	int fd = connect_raw(0);
	send_all(fd, "\x30\x20\x02\x01", 4);
	close(fd);
	printf("ok - half a PDU then close\n");
}

/*
 * ber_get_next reads what the socket has; on a partial message it returns
 * LBER_DEFAULT with EWOULDBLOCK and must be called again with the same ber.
 */
static ber_tag_t next_message(Sockbuf *sb, BerElement *ber)
{
	ber_len_t len;
	for (int tries = 0; tries < 100000; tries++) {
		errno = 0;
		ber_tag_t t = ber_get_next(sb, &len, ber);
		if (t != LBER_DEFAULT || (errno != EWOULDBLOCK && errno != EAGAIN))
			return t;
	}
	return LBER_DEFAULT;
}

/*
 * Reads n LDAPMessages from fd; returns their msgids and protocolOp tags, and in codes (when
 * not NULL) the resultCode of each that is an LDAPResult (-1 for an entry).
 */
static void read_messages(int fd, int n, int *ids, int *tags, int *codes)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	Sockbuf *sb = ber_sockbuf_alloc();
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &fd);
	ber_sockbuf_add_io(sb, &ber_sockbuf_io_tcp, LBER_SBIOD_LEVEL_PROVIDER, NULL);
	for (int i = 0; i < n; i++) {
		ber_len_t len;
		ber_tag_t t = next_message(sb, ber);
		if (t != LBER_SEQUENCE)
			FAIL("response %d did not arrive", i);
		ber_int_t id;
		if (ber_get_int(ber, &id) == LBER_DEFAULT)
			FAIL("response %d has no message ID", i);
		ids[i] = id;
		tags[i] = (int)ber_peek_tag(ber, &len);
		ber_int_t code = -1;
		if (codes && tags[i] != (int)LDAP_RES_SEARCH_ENTRY &&
		    ber_scanf(ber, "{e", &code) == LBER_ERROR)
			FAIL("response %d has no resultCode", i);
		if (codes)
			codes[i] = code;
		ber_free(ber, 1);
		ber = ber_alloc_t(LBER_USE_DER);
	}
	ber_free(ber, 1);
	int none = -1;
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &none);
	ber_sockbuf_free(sb);
}

static void cmd_pipeline(const char *base)
{
	/* A bind, two searches and a base search of a missing entry, in one write. */
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{it{istn}}", 1, (ber_tag_t)LDAP_REQ_BIND, 3, "",
	           (ber_tag_t)LDAP_AUTH_SIMPLE);
	struct berval *bind = encode(ber);
	struct berval *s1 = search_pdu(2, base), *s2 = search_pdu(3, base);
	char missing[512];
	snprintf(missing, sizeof(missing), "ou=missing,%s", base);
	struct berval *s3 = search_pdu(4, missing);
	size_t total = bind->bv_len + s1->bv_len + s2->bv_len + s3->bv_len;
	char *all = malloc(total), *p = all;
	struct berval *parts[] = {bind, s1, s2, s3};
	for (int i = 0; i < 4; i++) {
		memcpy(p, parts[i]->bv_val, parts[i]->bv_len);
		p += parts[i]->bv_len;
	}
	int fd = connect_raw(0);
	send_all(fd, all, total);
	/* How many entries a subtree search returns, from the same server via libldap. */
	LDAP *ld;
	char uri[256];
	snprintf(uri, sizeof(uri), "ldap://%s:%s", host, port);
	int v3 = LDAP_VERSION3;
	LDAPMessage *res;
	if (ldap_initialize(&ld, uri) || ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3) ||
	    ldap_search_ext_s(ld, base, LDAP_SCOPE_SUBTREE, "(objectClass=*)", NULL, 0, NULL, NULL,
	                      NULL, 0, &res) != LDAP_SUCCESS)
		FAIL("pipeline: reference search failed");
	int entries = ldap_count_entries(ld, res);
	ldap_msgfree(res);
	ldap_unbind_ext_s(ld, NULL, NULL);
	int n = 1 + 2 * (entries + 1) + 1;
	int *ids = calloc((size_t)n, sizeof(int)), *tags = calloc((size_t)n, sizeof(int));
	read_messages(fd, n, ids, tags, NULL);
	close(fd);
	if (ids[0] != 1 || tags[0] != (int)LDAP_RES_BIND)
		FAIL("pipeline: first response is not the bind's");
	for (int i = 1; i <= entries + 1; i++)
		if (ids[i] != 2 ||
		    tags[i] != (int)(i <= entries ? LDAP_RES_SEARCH_ENTRY : LDAP_RES_SEARCH_RESULT))
			FAIL("pipeline: response %d is not search 2's (id %d tag 0x%x)", i, ids[i],
			     tags[i]);
	for (int i = entries + 2; i <= 2 * entries + 2; i++)
		if (ids[i] != 3)
			FAIL("pipeline: response %d is not search 3's", i);
	if (ids[n - 1] != 4 || tags[n - 1] != (int)LDAP_RES_SEARCH_RESULT)
		FAIL("pipeline: last response is not search 4's result");
	printf("ok - pipeline: %d responses in request order (%d entries per search)\n", n,
	       entries);
	free(ids);
	free(tags);
	free(all);
	for (int i = 0; i < 4; i++)
		ber_bvfree(parts[i]);
}

/*
 * INTEGERs with leading zero octets (X.690 forbids them, liblber and slapd take them): a
 * base search with message ID 02 04 00 00 80 00 (32768), scope 0a 02 00 00 and sizelimit
 * 02 04 00 00 00 05, then one with message ID 02 02 00 01, in one write. Each gets its
 * entry and a success with its own ID, and the connection stays open.
 */
static void cmd_padded(const char *base)
{
	size_t blen = strlen(base);
	if (blen > 100)
		FAIL("padded: base too long");
	static const unsigned char ids[2][6] = {{0x02, 0x04, 0x00, 0x00, 0x80, 0x00},
	                                        {0x02, 0x02, 0x00, 0x01}};
	static const size_t idlen[2] = {6, 4};
	static const unsigned char rest[] = {
	    0x0a, 0x02, 0x00, 0x00,             /* scope base, padded */
	    0x0a, 0x01, 0x00,                   /* derefAliases never */
	    0x02, 0x04, 0x00, 0x00, 0x00, 0x05, /* sizeLimit 5, padded */
	    0x02, 0x01, 0x00,                   /* timeLimit 0 */
	    0x01, 0x01, 0x00,                   /* typesOnly FALSE */
	    0x87, 0x0b, 'o',  'b',  'j',  'e',  'c', 't', 'C', 'l', 'a', 's', 's', 0x30, 0x00};
	unsigned char all[512];
	size_t n = 0;
	for (int i = 0; i < 2; i++) {
		size_t op = 2 + blen + sizeof(rest);
		all[n++] = 0x30;
		all[n++] = (unsigned char)(idlen[i] + 2 + op);
		memcpy(all + n, ids[i], idlen[i]);
		n += idlen[i];
		all[n++] = LDAP_REQ_SEARCH;
		all[n++] = (unsigned char)op;
		all[n++] = 0x04;
		all[n++] = (unsigned char)blen;
		memcpy(all + n, base, blen);
		n += blen;
		memcpy(all + n, rest, sizeof(rest));
		n += sizeof(rest);
	}
	int fd = connect_raw(0);
	send_all(fd, all, n);
	int got_ids[4], tags[4], codes[4];
	read_messages(fd, 4, got_ids, tags, codes);
	const int want_ids[4] = {32768, 32768, 1, 1};
	for (int i = 0; i < 4; i++) {
		bool done = i % 2 == 1;
		if (got_ids[i] != want_ids[i] ||
		    tags[i] != (int)(done ? LDAP_RES_SEARCH_RESULT : LDAP_RES_SEARCH_ENTRY) ||
		    (done && codes[i] != LDAP_SUCCESS))
			FAIL("padded: response %d has ID %d, tag 0x%x, code %d (want ID %d)", i,
			     got_ids[i], tags[i], codes[i], want_ids[i]);
	}
	/* Still connected: an unbind is read, then the server closes. */
	send_all(fd, "\x30\x05\x02\x01\x03\x42\x00", 7);
	unsigned char buf[256];
	if (read_until_eof(fd, buf, sizeof(buf), 5000) != 0)
		FAIL("padded: the connection was not open until the unbind");
	close(fd);
	printf("ok - padded INTEGERs: message IDs 00 00 80 00 and 00 01, scope 00 00, sizelimit "
	       "00 00 00 05 answered with entry and success under their IDs\n");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A client that sends many searches and never reads must not stall others. */
static void cmd_stall(const char *base, int hold)
{
	int fd = connect_raw(4096);
	size_t sent = 0;
	for (int i = 1; i <= 2000; i++) {
		struct berval *s = search_pdu(i, base);
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (poll(&p, 1, 200) <= 0) { /* the server stopped reading us: as intended */
			ber_bvfree(s);
			break;
		}
		ssize_t w = send(fd, s->bv_val, s->bv_len, MSG_NOSIGNAL | MSG_DONTWAIT);
		ber_bvfree(s);
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	/* Meanwhile other clients are served, every time, promptly. */
	char uri[256];
	snprintf(uri, sizeof(uri), "ldap://%s:%s", host, port);
	for (int round = 0; round < 20; round++) {
		LDAP *ld;
		LDAPMessage *res;
		int v3 = LDAP_VERSION3;
		struct timeval tv = {5, 0};
		double t0 = now();
		if (ldap_initialize(&ld, uri) ||
		    ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3))
			FAIL("stall: ldap_initialize");
		ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
		int rc = ldap_search_ext_s(ld, base, LDAP_SCOPE_BASE, "(objectClass=*)", NULL, 0,
		                           NULL, NULL, &tv, 0, &res);
		if (rc != LDAP_SUCCESS || ldap_count_entries(ld, res) != 1)
			FAIL("stall: another client's search failed while one client stalls: %s",
			     ldap_err2string(rc));
		ldap_msgfree(res);
		ldap_unbind_ext_s(ld, NULL, NULL);
		if (now() - t0 > 5)
			FAIL("stall: another client waited %.1f s", now() - t0);
	}
	printf("ok - stall: a client that never reads (%zu bytes of requests sent) does not "
	       "block 20 other clients\n",
	       sent);
	sleep((unsigned)hold); /* still not reading: write_timeout may close us */
	close(fd);
}

/*
 * A slow reader: a small receive buffer and 4 KiB reads with a pause between
 * them, so the server meets full sockets, partial writes and EAGAIN. Every
 * entry of a one-level search under base must still arrive, whole and in
 * order, followed by its SearchResultDone.
 */
/*
 * A reader behind a 4 KiB window that reads one message per 200 us. With GOFILE it reads
 * nothing until that file exists (at most 60 s): the caller creates it once the server's
 * sends have been refused, so that a cut send is seen however slowly the server runs (a
 * sanitizer build under strace can be slower than the reader).
 */
static void cmd_slowread(const char *base, int want, const char *gofile)
{
	int fd = connect_raw(4096);
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (ber_printf(ber, "{it{seeiibts{}}}", 1, (ber_tag_t)LDAP_REQ_SEARCH, base,
	               LDAP_SCOPE_ONELEVEL, LDAP_DEREF_NEVER, 0, 0, 0,
	               (ber_tag_t)LDAP_FILTER_PRESENT, "objectClass") < 0)
		FAIL("ber_printf slowread");
	struct berval *req = encode(ber);
	send_all(fd, req->bv_val, req->bv_len);
	ber_bvfree(req);
	for (double w0 = now(); gofile && access(gofile, F_OK) != 0; usleep(10000))
		if (now() - w0 > 60)
			FAIL("slowread: %s did not appear within 60 s", gofile);
	Sockbuf *sb = ber_sockbuf_alloc();
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &fd);
	ber_sockbuf_add_io(sb, &ber_sockbuf_io_tcp, LBER_SBIOD_LEVEL_PROVIDER, NULL);
	int entries = 0, done = 0;
	double t0 = now();
	while (!done) {
		if (now() - t0 > 60)
			FAIL("slowread: gave up after 60 s with %d entries", entries);
		usleep(200);
		BerElement *m = ber_alloc_t(LBER_USE_DER);
		ber_len_t len;
		if (next_message(sb, m) != LBER_SEQUENCE)
			FAIL("slowread: the stream broke after %d entries", entries);
		ber_int_t id;
		if (ber_get_int(m, &id) == LBER_DEFAULT || id != 1)
			FAIL("slowread: a message with the wrong ID after %d entries", entries);
		ber_tag_t t = ber_peek_tag(m, &len);
		if (t == LDAP_RES_SEARCH_ENTRY)
			entries++;
		else if (t == LDAP_RES_SEARCH_RESULT)
			done = 1;
		else
			FAIL("slowread: unexpected tag 0x%lx", (unsigned long)t);
		ber_free(m, 1);
	}
	int none = -1;
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &none);
	ber_sockbuf_free(sb);
	close(fd);
	if (entries != want)
		FAIL("slowread: %d entries arrived, expected %d", entries, want);
	printf("ok - slowread: all %d entries and the result arrived through a 4 KiB window\n",
	       entries);
}

/*
 * Abandon (RFC 4511 4.11): a large search is started on a slow connection and
 * abandoned; its SearchResultDone must never come, fewer than all entries may
 * arrive, and the same connection must then answer a new request.
 */
static void cmd_abandon(const char *base, int total)
{
	int fd = connect_raw(4096);
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{it{seeiibts{}}}", 1, (ber_tag_t)LDAP_REQ_SEARCH, base,
	           LDAP_SCOPE_ONELEVEL, LDAP_DEREF_NEVER, 0, 0, 0, (ber_tag_t)LDAP_FILTER_PRESENT,
	           "objectClass");
	struct berval *search = encode(ber);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{iti}", 2, (ber_tag_t)LDAP_REQ_ABANDON, 1);
	struct berval *abandon = encode(ber);
	struct berval *next = search_pdu(3, base);
	send_all(fd, search->bv_val, search->bv_len);
	usleep(50000); /* the search starts and fills the socket */
	/* The next request first, the Abandon behind it, in one write: the Abandon
	 * must still reach the running search. */
	size_t both = next->bv_len + abandon->bv_len;
	char *two = malloc(both);
	memcpy(two, next->bv_val, next->bv_len);
	memcpy(two + next->bv_len, abandon->bv_val, abandon->bv_len);
	send_all(fd, two, both);
	free(two);
	Sockbuf *sb = ber_sockbuf_alloc();
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &fd);
	ber_sockbuf_add_io(sb, &ber_sockbuf_io_tcp, LBER_SBIOD_LEVEL_PROVIDER, NULL);
	int entries1 = 0, done3 = 0;
	while (!done3) {
		BerElement *m = ber_alloc_t(LBER_USE_DER);
		ber_len_t len;
		ber_int_t id;
		if (next_message(sb, m) != LBER_SEQUENCE || ber_get_int(m, &id) == LBER_DEFAULT)
			FAIL("abandon: the connection broke");
		ber_tag_t t = ber_peek_tag(m, &len);
		if (id == 1 && t == LDAP_RES_SEARCH_RESULT)
			FAIL("abandon: the abandoned search still sent its SearchResultDone");
		if (id == 1)
			entries1++;
		if (id == 3 && t == LDAP_RES_SEARCH_RESULT)
			done3 = 1;
		ber_free(m, 1);
	}
	int none = -1;
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &none);
	ber_sockbuf_free(sb);
	close(fd);
	ber_bvfree(search);
	ber_bvfree(abandon);
	ber_bvfree(next);
	if (entries1 >= total)
		FAIL("abandon: all %d entries came anyway", entries1);
	printf("ok - abandon: the search stopped after %d of %d entries, no result, and the "
	       "connection answered the next request\n",
	       entries1, total);
}

/*
 * A bind, a search and an unbind in one write: the responses to the first two
 * must arrive before the server closes (the batch policy holds responses while
 * more requests are buffered, and the last one is the unbind).
 */
static void cmd_unbindpipe(const char *base)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{it{istn}}", 1, (ber_tag_t)LDAP_REQ_BIND, 3, "",
	           (ber_tag_t)LDAP_AUTH_SIMPLE);
	struct berval *bind = encode(ber);
	struct berval *search = search_pdu(2, base);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{itn}", 3, (ber_tag_t)LDAP_REQ_UNBIND);
	struct berval *unbind = encode(ber);
	size_t total = bind->bv_len + search->bv_len + unbind->bv_len;
	char *all = malloc(total);
	memcpy(all, bind->bv_val, bind->bv_len);
	memcpy(all + bind->bv_len, search->bv_val, search->bv_len);
	memcpy(all + bind->bv_len + search->bv_len, unbind->bv_val, unbind->bv_len);
	int fd = connect_raw(0);
	send_all(fd, all, total);
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	Sockbuf *sb = ber_sockbuf_alloc();
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &fd);
	ber_sockbuf_add_io(sb, &ber_sockbuf_io_tcp, LBER_SBIOD_LEVEL_PROVIDER, NULL);
	bool bound = false, done = false;
	while (!done) {
		BerElement *m = ber_alloc_t(LBER_USE_DER);
		ber_len_t len;
		ber_int_t id;
		if (next_message(sb, m) != LBER_SEQUENCE || ber_get_int(m, &id) == LBER_DEFAULT)
			FAIL("unbindpipe: the connection closed before the %s response",
			     bound ? "search's" : "bind's");
		ber_tag_t t = ber_peek_tag(m, &len);
		bound |= id == 1 && t == LDAP_RES_BIND;
		done = id == 2 && t == LDAP_RES_SEARCH_RESULT;
		ber_free(m, 1);
	}
	int none = -1;
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &none);
	ber_sockbuf_free(sb);
	close(fd);
	if (!bound)
		FAIL("unbindpipe: the bind response was lost");
	printf("ok - unbindpipe: bind and search answered before the unbind closed the "
	       "connection\n");
	free(all);
	ber_bvfree(bind);
	ber_bvfree(search);
	ber_bvfree(unbind);
}

/*
 * Paged results against the server's size limit: pages of 2, the first asking
 * no client limit, the later ones a client limit of 1. The server's limit
 * counts entries over all pages, so the walk must end with sizeLimitExceeded
 * after at most `limit` entries.
 */
static void cmd_pagedlimit(const char *base, const char *dn, const char *pw, int limit)
{
	LDAP *ld = client_bind(host, port, dn, pw, "pagedlimit");
	struct berval cred;
	struct berval cookie = {0, NULL};
	int total = 0, last_rc = 0;
	for (int page = 0; page < 50; page++) {
		LDAPControl *ctl = NULL, *ctls[2] = {NULL, NULL};
		if (ldap_create_page_control_value(ld, 2, &cookie, &cred) != LDAP_SUCCESS)
			FAIL("pagedlimit: page control");
		ldap_control_create(LDAP_CONTROL_PAGEDRESULTS, 1, &cred, 1, &ctl);
		ber_memfree(cred.bv_val);
		ctls[0] = ctl;
		LDAPMessage *res = NULL;
		int rc = ldap_search_ext_s(ld, base, LDAP_SCOPE_SUBTREE, "(objectClass=*)", NULL, 0,
		                           ctls, NULL, NULL, page == 0 ? 0 : 1, &res);
		ldap_control_free(ctl);
		total += ldap_count_entries(ld, res);
		LDAPControl **rctls = NULL;
		int err = 0;
		ldap_parse_result(ld, res, &err, NULL, NULL, NULL, &rctls, 0);
		last_rc = err ? err : rc;
		ber_memfree(cookie.bv_val);
		cookie.bv_val = NULL;
		cookie.bv_len = 0;
		LDAPControl *pr =
		    rctls ? ldap_control_find(LDAP_CONTROL_PAGEDRESULTS, rctls, NULL) : NULL;
		ber_int_t estimate;
		if (pr)
			ldap_parse_pageresponse_control(ld, pr, &estimate, &cookie);
		ldap_controls_free(rctls);
		ldap_msgfree(res);
		if (last_rc != LDAP_SUCCESS || cookie.bv_len == 0)
			break;
	}
	ber_memfree(cookie.bv_val);
	ldap_unbind_ext_s(ld, NULL, NULL);
	if (last_rc != LDAP_SIZELIMIT_EXCEEDED || total > limit)
		FAIL("pagedlimit: %d entries over the pages, last result %d (limit %d)", total,
		     last_rc, limit);
	printf("ok - pagedlimit: a paged walk stops at the server's size limit (%d entries, then "
	       "sizeLimitExceeded), whatever later pages ask\n",
	       total);
}

/* xorshift: a deterministic stream for the mutations, seeded from the command line. */
static uint32_t rnd_state;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* Valid requests of every kind minidir decodes, as seeds for mutation. */
static struct berval *seed_pdu(int kind, const char *base)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	int rc = 0;
	switch (kind) {
	case 0: /* search with an AND/OR/NOT/substring/extensible filter, attributes, controls */
		rc = ber_printf(ber, "{it{seeiib", 5, (ber_tag_t)LDAP_REQ_SEARCH, base,
		                LDAP_SCOPE_SUBTREE, 0, 10, 5, 0);
		rc |= ber_printf(
		    ber, "t{t{ss}t{t{ss}t{s{tsts}}}t{tststb}}", (ber_tag_t)LDAP_FILTER_AND,
		    (ber_tag_t)LDAP_FILTER_EQUALITY, "objectClass", "person",
		    (ber_tag_t)LDAP_FILTER_OR, (ber_tag_t)LDAP_FILTER_GE, "uidNumber", "10",
		    (ber_tag_t)LDAP_FILTER_SUBSTRINGS, "cn", (ber_tag_t)LDAP_SUBSTRING_INITIAL,
		    "us", (ber_tag_t)LDAP_SUBSTRING_FINAL, "e", (ber_tag_t)LDAP_FILTER_EXT,
		    (ber_tag_t)LDAP_FILTER_EXT_OID, "caseExactMatch",
		    (ber_tag_t)LDAP_FILTER_EXT_VALUE, "x", (ber_tag_t)LDAP_FILTER_EXT_DNATTRS, 1);
		rc |= ber_printf(
		    ber, "{ss}}t{{sbo}{sbo}}}", "cn", "+", (ber_tag_t)LDAP_TAG_CONTROLS,
		    "1.2.840.113556.1.4.319", 1, "\x30\x05\x02\x01\x02\x04\x00", (ber_len_t)7,
		    "1.2.840.113556.1.4.473", 0, "\x30\x06\x30\x04\x04\x02\x63\x6e", (ber_len_t)8);
		break;
	case 1: /* simple bind */
		rc = ber_printf(ber, "{it{ists}}", 6, (ber_tag_t)LDAP_REQ_BIND, 3, base,
		                (ber_tag_t)LDAP_AUTH_SIMPLE, "secret");
		break;
	case 2: /* compare */
		rc =
		    ber_printf(ber, "{it{s{ss}}}", 7, (ber_tag_t)LDAP_REQ_COMPARE, base, "cn", "x");
		break;
	default: /* WhoAmI */
		rc = ber_printf(ber, "{it{ts}}", 8, (ber_tag_t)LDAP_REQ_EXTENDED,
		                (ber_tag_t)LDAP_TAG_EXOP_REQ_OID, "1.3.6.1.4.1.4203.1.11.3");
		break;
	}
	if (rc < 0)
		FAIL("fuzz: ber_printf seed %d", kind);
	return encode(ber);
}

/*
 * Sends n mutated requests (bytes flipped, inserted, deleted, lengths
 * changed), each on its own connection, and reads whatever comes back until
 * the server answers or closes. Then the server must still answer a search.
 */
static void cmd_fuzz(const char *base, int n, unsigned seed)
{
	rnd_state = seed ? seed : 1;
	unsigned char buf[4096], junk[65536];
	for (int i = 0; i < n; i++) {
		struct berval *s = seed_pdu((int)(rnd() % 4), base);
		size_t len = s->bv_len < sizeof(buf) - 64 ? s->bv_len : sizeof(buf) - 64;
		memcpy(buf, s->bv_val, len);
		ber_bvfree(s);
		for (int m = 1 + (int)(rnd() % 4); m > 0; m--) {
			size_t at = rnd() % len;
			switch (rnd() % 4) {
			case 0:
				buf[at] ^= (unsigned char)(1u << (rnd() % 8));
				break;
			case 1:
				buf[at] = (unsigned char)rnd();
				break;
			case 2: /* delete a byte */
				memmove(buf + at, buf + at + 1, len - at - 1);
				len--;
				break;
			default: /* insert a byte */
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = (unsigned char)rnd();
				len++;
				break;
			}
			if (len < 2)
				break;
		}
		int fd = connect_raw(0);
		struct timeval tv = {2, 0};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		send(fd, buf, len, MSG_NOSIGNAL);
		shutdown(fd, SHUT_WR); /* an incomplete PDU then meets end of input */
		while (recv(fd, junk, sizeof(junk), 0) > 0)
			;
		close(fd);
	}
	char uri[256];
	snprintf(uri, sizeof(uri), "ldap://%s:%s", host, port);
	LDAP *ld;
	LDAPMessage *res;
	int v3 = LDAP_VERSION3;
	if (ldap_initialize(&ld, uri) || ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3) ||
	    ldap_search_ext_s(ld, base, LDAP_SCOPE_BASE, "(objectClass=*)", NULL, 0, NULL, NULL,
	                      NULL, 0, &res) != LDAP_SUCCESS)
		FAIL("fuzz: the server does not answer after %d mutated requests", n);
	ldap_msgfree(res);
	ldap_unbind_ext_s(ld, NULL, NULL);
	printf("ok - fuzz: %d mutated requests (seed %u), the server still answers\n", n, seed);
}

static void cmd_concurrent(const char *base, int n)
{
	char uri[256];
	snprintf(uri, sizeof(uri), "ldap://%s:%s", host, port);
	LDAP **lds = calloc((size_t)n, sizeof(*lds));
	int *msgids = calloc((size_t)n, sizeof(int));
	int v3 = LDAP_VERSION3, expected = -1;
	for (int i = 0; i < n; i++)
		if (ldap_initialize(&lds[i], uri) ||
		    ldap_set_option(lds[i], LDAP_OPT_PROTOCOL_VERSION, &v3))
			FAIL("concurrent: ldap_initialize");
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < n; i++)
			if (ldap_search_ext(lds[i], base, LDAP_SCOPE_SUBTREE, "(objectClass=*)",
			                    NULL, 0, NULL, NULL, NULL, 0,
			                    &msgids[i]) != LDAP_SUCCESS)
				FAIL("concurrent: ldap_search_ext on connection %d", i);
		for (int i = 0; i < n; i++) {
			LDAPMessage *res;
			struct timeval tv = {10, 0};
			if (ldap_result(lds[i], msgids[i], LDAP_MSG_ALL, &tv, &res) !=
			    LDAP_RES_SEARCH_RESULT)
				FAIL("concurrent: no result on connection %d", i);
			int count = ldap_count_entries(lds[i], res), err = 0;
			ldap_parse_result(lds[i], res, &err, NULL, NULL, NULL, NULL, 0);
			ldap_msgfree(res);
			if (err != LDAP_SUCCESS)
				FAIL("concurrent: result %d on connection %d", err, i);
			if (expected < 0)
				expected = count;
			if (count != expected || count == 0)
				FAIL("concurrent: connection %d got %d entries, others %d", i,
				     count, expected);
		}
	}
	for (int i = 0; i < n; i++)
		ldap_unbind_ext_s(lds[i], NULL, NULL);
	printf("ok - concurrent: %d connections x 5 subtree searches, %d entries each\n", n,
	       expected);
	free(lds);
	free(msgids);
}

/*
 * COUNT requests pipelined on one connection, 256 at a time, each naming a DN of
 * RDNS "gn=x" RDNs above base (gn is an alias of givenName, shorter than its
 * name): a search with it as the base (noSuchObject), a simple bind as it
 * (invalidCredentials) and a base search of base with a DN-valued filter
 * (member=DN). For leak_test.sh, which watches the server's memory.
 */
static void cmd_dnload(const char *base, int count, int rdns)
{
	size_t cap = (size_t)rdns * 5 + strlen(base) + 1;
	char *dn = malloc(cap), *p = dn;
	for (int i = 0; i < rdns; i++)
		p += sprintf(p, "gn=x,");
	strcpy(p, base);
	struct berval *pdus[3];
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{it{seeiibts{}}}", 1, (ber_tag_t)LDAP_REQ_SEARCH, dn, LDAP_SCOPE_BASE,
	           LDAP_DEREF_NEVER, 0, 0, 0, (ber_tag_t)LDAP_FILTER_PRESENT, "objectClass");
	pdus[0] = encode(ber);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{it{ists}}", 2, (ber_tag_t)LDAP_REQ_BIND, 3, dn,
	           (ber_tag_t)LDAP_AUTH_SIMPLE, "wrong");
	pdus[1] = encode(ber);
	ber = ber_alloc_t(LBER_USE_DER);
	ber_printf(ber, "{it{seeiibt{ss}{}}}", 3, (ber_tag_t)LDAP_REQ_SEARCH, base, LDAP_SCOPE_BASE,
	           LDAP_DEREF_NEVER, 0, 0, 0, (ber_tag_t)LDAP_FILTER_EQUALITY, "member", dn);
	pdus[2] = encode(ber);
	int fd = connect_raw(0);
	BerElement *in = ber_alloc_t(LBER_USE_DER);
	Sockbuf *sb = ber_sockbuf_alloc();
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &fd);
	ber_sockbuf_add_io(sb, &ber_sockbuf_io_tcp, LBER_SBIOD_LEVEL_PROVIDER, NULL);
	/* A stall bound, not a time limit on the whole run: 30,000 requests under ASan beside
	 * other tests take minutes, and that is not a failure. */
	double start = now(), last_answer = start;
	int codes[3] = {-1, -1, -1};
	for (int done = 0; done < count;) {
		int window = count - done < 256 ? count - done : 256;
		for (int i = 0; i < window; i++) {
			struct berval *b = pdus[(done + i) % 3];
			send_all(fd, b->bv_val, b->bv_len);
		}
		for (int got = 0; got < window;) {
			ber_len_t len;
			ber_int_t id, code;
			if (now() - last_answer > 120)
				FAIL("dnload: no answer for 120 s (request %d)", done + got);
			if (next_message(sb, in) != LBER_SEQUENCE ||
			    ber_get_int(in, &id) == LBER_DEFAULT)
				FAIL("dnload: response to request %d did not arrive", done + got);
			ber_tag_t op = ber_peek_tag(in, &len);
			if (op == LDAP_RES_SEARCH_RESULT || op == LDAP_RES_BIND) {
				if (ber_scanf(in, "{e", &code) == LBER_ERROR || id < 1 || id > 3)
					FAIL("dnload: malformed response to request %d",
					     done + got);
				codes[id - 1] = code;
				got++;
				last_answer = now();
			}
			ber_free(in, 1);
			in = ber_alloc_t(LBER_USE_DER);
		}
		done += window;
	}
	if (codes[0] != LDAP_NO_SUCH_OBJECT || codes[1] != LDAP_INVALID_CREDENTIALS ||
	    codes[2] != LDAP_SUCCESS)
		FAIL("dnload: result codes %d %d %d, expected 32 49 0", codes[0], codes[1],
		     codes[2]);
	printf("ok - dnload: %d requests with a %d-RDN DN in %.1f s (results 32, 49, 0)\n", count,
	       rdns, now() - start);
	ber_free(in, 1);
	int none = -1;
	ber_sockbuf_ctrl(sb, LBER_SB_OPT_SET_FD, &none);
	ber_sockbuf_free(sb);
	close(fd);
	for (int i = 0; i < 3; i++)
		ber_bvfree(pdus[i]);
	free(dn);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(
		    stderr,
		    "usage: ldapclient garbage|pipeline|stall|concurrent HOST PORT [BASE [N]]\n");
		return 2;
	}
	host = argv[2];
	port = argv[3];
	const char *cmd = argv[1], *base = argc > 4 ? argv[4] : "";
	if (strcmp(cmd, "garbage") == 0)
		cmd_garbage();
	else if (strcmp(cmd, "pipeline") == 0 && argc > 4)
		cmd_pipeline(base);
	else if (strcmp(cmd, "stall") == 0 && argc > 4)
		cmd_stall(base, argc > 5 ? atoi(argv[5]) : 0);
	else if (strcmp(cmd, "fuzz") == 0 && argc > 6)
		cmd_fuzz(base, atoi(argv[5]), (unsigned)strtoul(argv[6], NULL, 10));
	else if (strcmp(cmd, "pagedlimit") == 0 && argc > 7)
		cmd_pagedlimit(base, argv[5], argv[6], atoi(argv[7]));
	else if (strcmp(cmd, "unbindpipe") == 0 && argc > 4)
		cmd_unbindpipe(base);
	else if (strcmp(cmd, "abandon") == 0 && argc > 5)
		cmd_abandon(base, atoi(argv[5]));
	else if (strcmp(cmd, "slowread") == 0 && argc > 5)
		cmd_slowread(base, atoi(argv[5]), argc > 6 ? argv[6] : NULL);
	else if (strcmp(cmd, "dnload") == 0 && argc > 6)
		cmd_dnload(base, atoi(argv[5]), atoi(argv[6]));
	else if (strcmp(cmd, "padded") == 0 && argc > 4)
		cmd_padded(base);
	else if (strcmp(cmd, "concurrent") == 0 && argc > 5)
		cmd_concurrent(base, atoi(argv[5]));
	else {
		fprintf(stderr, "ldapclient: unknown command or missing arguments\n");
		return 2;
	}
	return 0;
}
