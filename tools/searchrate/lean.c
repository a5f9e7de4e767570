/*
 * lean.c: the lean engine (see lean.h). A thread's loop, each round: reconnect the
 * connections whose retry time has come (and replace those used up by
 * --iterationsBeforeReconnect); queue requests on every connection with room, round robin,
 * as far as the rate limiter allows, and send each connection's queue at once; then wait in
 * epoll_wait (until the next send or retry time, at most 100 ms so that run->stop is seen
 * soon) and read every ready connection.
 */
#include "tools/searchrate/lean.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/searchrate/lean_io.h"
#include "tools/searchrate/lean_tls.h"
#include "tools/searchrate/leanber.h"
#include "tools/searchrate/pace.h"
#include "tools/searchrate/report.h"
#include "tools/searchrate/tally.h"
#include "tools/searchrate/threads.h"
#include "tools/searchrate/util.h"

#define LEAN_IN_START (64u * 1024)
#define LEAN_MAX_PDU (64u * 1024 * 1024) /* a response larger than this loses the connection */
#define LEAN_EVENTS 64
#define CONNECT_MS 5000

/* A request in flight; msgid 0: a free slot. */
struct lean_slot {
	int msgid;
	uint64_t t0;
	uint64_t entries;
};

struct lean_conn {
	struct lean_link link; /* link.fd -1 while down; link.ssl with TLS */
	unsigned char *in;
	size_t inlen, incap;
	unsigned char *out; /* bytes out[outoff..outlen) not yet sent */
	size_t outoff, outlen, outcap;
	bool pollout; /* registered for EPOLLOUT */
	struct lean_slot *slots;
	unsigned mask;
	int next_id;
	int outstanding;
	uint64_t sent; /* searches sent since it was opened (--iterationsBeforeReconnect) */
	uint64_t retry_at, backoff_ns;
};

struct sr_lean {
	struct sr_thread th; /* first: threads.h */
	struct sr_run *run;
	int ep;
	struct lean_conn *conns;
	int nconns;
	int inflight, thread_max, conn_max;
	int rr;
	uint64_t rng;
	struct sr_pacer pacer;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char *basebuf, *filterbuf;
	struct pattern_span *fspans;
	struct lb_search search;
	struct lb_filter filter;
	struct sr_tally tally;
	struct lean_tls tls; /* the thread's TLS context (--useSSL, --useStartTLS) */
};

/* ---- connections ------------------------------------------------------------------------ */

/* Connects the non-blocking socket fd to the thread's address within CONNECT_MS. */
static bool connect_fd(const struct sr_lean *t, int fd)
{
	if (connect(fd, (const struct sockaddr *)&t->addr, t->addrlen) == 0)
		return true;
	if (errno != EINPROGRESS || !lean_wait_fd(fd, POLLOUT, CONNECT_MS))
		return false;
	int err = 0;
	socklen_t len = sizeof(err);
	return getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
}

/* How far opening a connection came before it failed. */
enum lean_step { LEAN_CONNECT, LEAN_STARTTLS, LEAN_BIND };

/* What went wrong opening a connection, for the first one's message. */
struct lean_failure {
	enum lean_step step;
	bool cert_rejected; /* the TLS handshake failed on the server's certificate */
	char diag[256];     /* the server's diagnostic message, or the TLS layer's reason */
};

/* With --useSSL or --useStartTLS: StartTLS (if asked for), then the TLS handshake on l. */
static int conn_secure(struct sr_lean *t, struct lean_link *l, struct lean_failure *f)
{
	const struct sr_config *cfg = &t->run->cfg;
	bool resumed;
	if (cfg->use_starttls) {
		f->step = LEAN_STARTTLS;
		int rc = lean_starttls(l, f->diag, sizeof(f->diag));
		if (rc != LDAP_SUCCESS)
			return rc;
	}
	if (!lean_tls_handshake(&t->tls, cfg, l, BIND_MS, &resumed, &f->cert_rejected, f->diag,
	                        sizeof(f->diag)))
		return cfg->use_starttls ? LDAP_CONNECT_ERROR : LDAP_SERVER_DOWN;
	if (resumed)
		tally_resumed(&t->tally);
	return LDAP_SUCCESS;
}

/* Opens (with TLS as configured, and with --bindDN binds) c; an LDAP result code, and on
 * failure what failed in *f. */
static int conn_open(struct sr_lean *t, struct lean_conn *c, struct lean_failure *f)
{
	const struct sr_config *cfg = &t->run->cfg;
	*f = (struct lean_failure){LEAN_CONNECT, false, ""};
	struct lean_link l = {
	    .fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)};
	if (l.fd < 0)
		return LDAP_LOCAL_ERROR;
	int one = 1;
	int rc = LDAP_SUCCESS;
	if (!connect_fd(t, l.fd))
		rc = LDAP_SERVER_DOWN;
	else
		setsockopt(l.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (rc == LDAP_SUCCESS && t->tls.ctx)
		rc = conn_secure(t, &l, f);
	if (rc == LDAP_SUCCESS && cfg->binddn) {
		f->step = LEAN_BIND;
		rc = lean_bind(cfg, &l, f->diag, sizeof(f->diag));
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
	if (rc == LDAP_SUCCESS && epoll_ctl(t->ep, EPOLL_CTL_ADD, l.fd, &ev) != 0)
		rc = LDAP_LOCAL_ERROR;
	if (rc != LDAP_SUCCESS) {
		lean_link_end(&l, false);
		close(l.fd);
		return rc;
	}
	c->link = l;
	c->inlen = c->outoff = c->outlen = 0;
	c->pollout = false;
	c->next_id = 2;
	c->outstanding = 0;
	c->sent = 0;
	return LDAP_SUCCESS;
}

/* Closes c; with polite, says goodbye first (an UnbindRequest, as ldap_unbind_ext does).
 * Returns the requests it had in flight. */
static int lean_conn_drop(struct sr_lean *t, struct lean_conn *c, bool polite)
{
	int dropped = c->outstanding;
	if (polite) {
		unsigned char bye[LB_UNBIND_MAX];
		size_t n = lb_put_unbind(bye, c->next_id);
		if (lean_link_send(&c->link, bye, n) < 0)
			(void)0; /* nothing to do: the connection is going anyway */
	}
	lean_link_end(&c->link, polite);
	epoll_ctl(t->ep, EPOLL_CTL_DEL, c->link.fd, NULL);
	close(c->link.fd);
	c->link.fd = -1;
	for (unsigned i = 0; i <= c->mask; i++)
		c->slots[i].msgid = 0;
	t->inflight -= c->outstanding;
	c->outstanding = 0;
	return dropped;
}

static int close_at_end(struct sr_thread *th, int i)
{
	struct lean_conn *c = &((struct sr_lean *)th)->conns[i];
	return c->link.fd < 0 ? 0 : lean_conn_drop((struct sr_lean *)th, c, true);
}

/* The connection failed: its requests in flight count as errors with result code rc (at
 * least one error for the loss itself), and it is re-established next round. */
static void conn_lost(struct sr_lean *t, struct lean_conn *c, int rc)
{
	tally_error(&t->tally, rc, c->outstanding > 0 ? (uint64_t)c->outstanding : 1);
	lean_conn_drop(t, c, false);
	c->retry_at = now_ns();
	c->backoff_ns = 0;
}

static void conn_retry(struct sr_lean *t, struct lean_conn *c, uint64_t now)
{
	struct lean_failure f;
	int rc = conn_open(t, c, &f);
	if (rc == LDAP_SUCCESS) {
		tally_reconnect(&t->tally);
		return;
	}
	tally_error(&t->tally, rc, 1);
	c->retry_at = backoff_next(&c->backoff_ns, now);
}

static bool conn_used_up(const struct sr_lean *t, const struct lean_conn *c)
{
	uint64_t every = t->run->cfg.reconnect_every;
	return every && c->sent >= every;
}

/* ---- requests --------------------------------------------------------------------------- */

/* A message ID whose slot is free (there always is one: the table is twice the window). */
static int next_msgid(struct lean_conn *c)
{
	for (;;) {
		int id = c->next_id;
		c->next_id = id == INT_MAX ? 1 : id + 1;
		if (c->slots[(unsigned)id & c->mask].msgid == 0)
			return id;
	}
}

static void out_reserve(struct lean_conn *c, size_t more)
{
	if (c->outlen + more <= c->outcap)
		return;
	size_t cap = c->outcap ? c->outcap : 4096;
	while (cap < c->outlen + more)
		cap *= 2;
	c->out = sr_xrealloc(c->out, cap);
	c->outcap = cap;
}

/* Queues one search on c; false when its filter could not be encoded (counted as an error). */
static bool queue_search(struct sr_lean *t, struct lean_conn *c)
{
	struct sr_config *cfg = &t->run->cfg;
	const char *base = pattern_expand(&cfg->base, &t->rng, t->basebuf);
	const char *filter = pattern_expand_spans(&cfg->filter, &t->rng, t->filterbuf, t->fspans);
	size_t flen, blen = strlen(base);
	int rc;
	c->sent++;
	const unsigned char *fber = lb_filter_get(&t->filter, filter, strlen(filter), t->fspans,
	                                          cfg->filter.nranges, &flen, &rc);
	if (!fber) {
		tally_error(&t->tally, rc, 1);
		return false;
	}
	int id = next_msgid(c);
	out_reserve(c, lb_search_max(&t->search, blen, flen));
	c->outlen += lb_put_search(c->out + c->outlen, &t->search, id, base, blen, fber, flen);
	c->slots[(unsigned)id & c->mask] = (struct lean_slot){id, now_ns(), 0};
	c->outstanding++;
	t->inflight++;
	return true;
}

static void set_pollout(struct sr_lean *t, struct lean_conn *c, bool on)
{
	if (c->pollout == on)
		return;
	struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0u), .data.ptr = c};
	epoll_ctl(t->ep, EPOLL_CTL_MOD, c->link.fd, &ev);
	c->pollout = on;
}

/* Sends what c has queued; what the socket does not take waits for EPOLLOUT. */
static void flush(struct sr_lean *t, struct lean_conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = lean_link_send(&c->link, c->out + c->outoff, c->outlen - c->outoff);
		if (n > 0) {
			c->outoff += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			break;
		} else {
			conn_lost(t, c, LDAP_SERVER_DOWN);
			return;
		}
	}
	if (c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	set_pollout(t, c, c->outlen > 0);
}

/* Queues searches on c while it has room (per connection and per thread) and the rate
 * limiter allows, then sends them. */
static void fill(struct sr_lean *t, struct lean_conn *c, uint64_t *wake, bool *rate_blocked)
{
	bool queued = false;
	while (c->link.fd >= 0 && c->outstanding < t->conn_max && t->inflight < t->thread_max &&
	       !conn_used_up(t, c)) {
		if (!pacer_take(&t->pacer, wake)) {
			*rate_blocked = true;
			break;
		}
		if (!queue_search(t, c))
			break; /* a filter libldap refuses: counted; try again next round */
		queued = true;
	}
	if (queued)
		flush(t, c);
}

/* ---- responses -------------------------------------------------------------------------- */

/* One response on c; *t1 is the time the read that brought it returned (taken once). */
static void handle(struct sr_lean *t, struct lean_conn *c, const struct lb_msg *m, uint64_t *t1)
{
	struct lean_slot *s = &c->slots[(unsigned)m->msgid & c->mask];
	bool ours = m->msgid != 0 && s->msgid == m->msgid;
	if (m->op == LB_OP_SEARCH_ENTRY && ours) {
		s->entries++;
	} else if (m->op == LB_OP_SEARCH_DONE && ours) {
		if (!*t1)
			*t1 = now_ns();
		tally_search(&t->tally, m->rc, s->entries, *t1 - s->t0);
		s->msgid = 0;
		c->outstanding--;
		t->inflight--;
	} else if (m->op == LB_OP_EXTENDED_RESPONSE && m->msgid == 0) {
		conn_lost(t, c, LDAP_SERVER_DOWN); /* a notice of disconnection */
	} /* else search references and anything unexpected, as the libldap engine */
}

/* Frames and handles every whole message in c's input; keeps the rest for the next read. */
static void parse_input(struct sr_lean *t, struct lean_conn *c)
{
	size_t off = 0, need = 0;
	uint64_t t1 = 0;
	while (c->link.fd >= 0 && off < c->inlen) {
		struct lb_msg m;
		long k = lb_frame(c->in + off, c->inlen - off, LEAN_MAX_PDU, &m, &need);
		if (k < 0) {
			conn_lost(t, c, LDAP_DECODING_ERROR);
			return;
		}
		if (k == 0)
			break;
		off += (size_t)k;
		handle(t, c, &m, &t1);
	}
	if (c->link.fd < 0)
		return;
	memmove(c->in, c->in + off, c->inlen - off);
	c->inlen -= off;
	if (need > c->incap) { /* a message larger than the buffer: make room for all of it */
		c->in = sr_xrealloc(c->in, need);
		c->incap = need;
	}
}

/* Reads what has arrived on c (until the socket is empty, bounded) and handles it. With TLS,
 * until OpenSSL holds nothing more: bytes it holds would not wake epoll (parse_input always
 * leaves room), while what is still in the socket does (level-triggered), so no read is
 * spent on learning that the socket is empty. */
static void read_conn(struct sr_lean *t, struct lean_conn *c)
{
	for (int round = 0; (round < 4 || c->link.ssl) && c->link.fd >= 0; round++) {
		size_t room = c->incap - c->inlen;
		ssize_t n = lean_link_recv(&c->link, c->in + c->inlen, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn_lost(t, c, LDAP_SERVER_DOWN);
			return;
		}
		c->inlen += (size_t)n;
		parse_input(t, c);
		if (c->link.ssl ? !lean_link_pending(&c->link) : (size_t)n < room)
			return; /* nothing more in hand (TLS), the socket is empty (plain) */
	}
}

/* ---- the thread ------------------------------------------------------------------------- */

static void reconnect_due(struct sr_lean *t, uint64_t *wake)
{
	uint64_t now = now_ns();
	for (int i = 0; i < t->nconns; i++) {
		struct lean_conn *c = &t->conns[i];
		if (c->link.fd >= 0 && c->outstanding == 0 && conn_used_up(t, c)) {
			lean_conn_drop(t, c, true);
			c->retry_at = now;
			c->backoff_ns = 0;
		}
		if (c->link.fd >= 0)
			continue;
		if (now >= c->retry_at) {
			conn_retry(t, c, now);
			now = now_ns();
		}
		if (c->link.fd < 0 && c->retry_at < *wake)
			*wake = c->retry_at;
	}
}

static void lean_round(struct sr_thread *th)
{
	struct sr_lean *t = (struct sr_lean *)th;
	uint64_t wake = now_ns() + 100 * NS_PER_MS; /* at the latest: look at stop again */
	bool rate_blocked = false;
	reconnect_due(t, &wake);
	for (int k = 0; k < t->nconns && t->inflight < t->thread_max && !rate_blocked; k++) {
		int idx = (t->rr + k) % t->nconns;
		int before = t->inflight;
		fill(t, &t->conns[idx], &wake, &rate_blocked);
		if (t->inflight != before)
			t->rr = (idx + 1) % t->nconns;
	}
	uint64_t now = now_ns();
	int ms = wake > now ? (int)((wake - now + NS_PER_MS - 1) / NS_PER_MS) : 0;
	struct epoll_event ev[LEAN_EVENTS];
	int n = epoll_wait(t->ep, ev, LEAN_EVENTS, ms);
	for (int i = 0; i < n; i++) {
		struct lean_conn *c = ev[i].data.ptr;
		if (c->link.fd >= 0 && (ev[i].events & EPOLLOUT))
			flush(t, c);
		if (c->link.fd >= 0 && (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
			read_conn(t, c);
	}
}

static const struct sr_thread_ops lean_ops = {lean_round, close_at_end};

/* ---- the engine ------------------------------------------------------------------------- */

static void lean_init(struct sr_run *run, struct sr_lean *t, int idx, uint64_t seed)
{
	struct sr_config *cfg = &run->cfg;
	unsigned table = sr_slot_table_size(cfg);
	t->run = t->th.run = run;
	t->th.ops = &lean_ops;
	t->th.pacer = &t->pacer;
	t->ep = -1;
	t->nconns = t->th.nconns = cfg->conns / cfg->threads + (idx < cfg->conns % cfg->threads);
	t->conns = sr_xcalloc((size_t)t->nconns, sizeof(*t->conns));
	for (int i = 0; i < t->nconns; i++) {
		struct lean_conn *c = &t->conns[i];
		c->link.fd = -1;
		c->mask = table - 1;
		c->slots = sr_xcalloc(table, sizeof(*c->slots));
		c->in = sr_xcalloc(LEAN_IN_START, 1);
		c->incap = LEAN_IN_START;
	}
	t->thread_max = cfg->async ? INT_MAX : 1;
	t->conn_max = cfg->async ? cfg->max_outstanding : 1;
	t->rng = seed + (uint64_t)idx * 0x632be59bd9b4e019ull;
	t->basebuf = sr_xcalloc(cfg->base.maxlen + 1, 1);
	t->filterbuf = sr_xcalloc(cfg->filter.maxlen + 1, 1);
	t->fspans = sr_xcalloc(cfg->filter.nranges, sizeof(*t->fspans));
	if (!lb_search_init(&t->search, cfg->scope, cfg->sizelimit, cfg->timelimit, cfg->attrs) ||
	    !lb_filter_init(&t->filter, cfg->filter.maxlen)) {
		fputs("searchrate: cannot set up the lean engine (out of memory)\n", stderr);
		exit(1);
	}
	char err[256];
	if (!lean_tls_init(&t->tls, cfg, err, sizeof(err))) {
		fprintf(stderr, "searchrate: cannot set up TLS%s%s: %s\n",
		        cfg->truststore ? " with the CA certificates of " : "",
		        cfg->truststore ? cfg->truststore : "", err);
		exit(1);
	}
	tally_init(&t->tally);
}

static void lean_create(struct sr_run *run, uint64_t seed)
{
	run->lean = sr_xcalloc((size_t)run->cfg.threads, sizeof(*run->lean));
	for (int i = 0; i < run->cfg.threads; i++)
		lean_init(run, &run->lean[i], i, seed);
}

static void report_failure(const struct sr_config *cfg, const struct lean_failure *f, int rc)
{
	char what[800];
	if (f->step == LEAN_BIND)
		snprintf(what, sizeof(what), "cannot bind to %s as %s", cfg->uri, cfg->binddn);
	else if (f->step == LEAN_STARTTLS) /* the address without "ldap://" */
		snprintf(what, sizeof(what), "StartTLS on %s", cfg->uri + strlen("ldap://"));
	else
		snprintf(what, sizeof(what), "cannot connect to %s", cfg->uri);
	report_open_failure(cfg, what, rc, f->diag, f->cert_rejected);
}

/* The server's address into every thread; false (and a message) when it cannot be resolved. */
static bool resolve(struct sr_run *run)
{
	const struct sr_config *cfg = &run->cfg;
	char port[16];
	snprintf(port, sizeof(port), "%d", cfg->port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	int err = getaddrinfo(cfg->host, port, &hints, &ai);
	if (err || !ai) {
		struct lean_failure f = {LEAN_CONNECT, false, ""};
		snprintf(f.diag, sizeof(f.diag), "%s", gai_strerror(err));
		report_failure(cfg, &f, LDAP_SERVER_DOWN);
		return false;
	}
	for (int i = 0; i < cfg->threads; i++) {
		memcpy(&run->lean[i].addr, ai->ai_addr, ai->ai_addrlen);
		run->lean[i].addrlen = ai->ai_addrlen;
	}
	freeaddrinfo(ai);
	return true;
}

static bool lean_connect(struct sr_run *run)
{
	const struct sr_config *cfg = &run->cfg;
	if (!resolve(run))
		return false;
	for (int i = 0; i < cfg->threads; i++) {
		if ((run->lean[i].ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
			perror("searchrate: epoll_create1");
			return false;
		}
	}
	int connected = 0;
	for (int i = 0; i < cfg->conns; i++) {
		struct sr_lean *t = &run->lean[i % cfg->threads];
		struct lean_conn *c = &t->conns[i / cfg->threads];
		struct lean_failure f;
		int rc = conn_open(t, c, &f);
		if (rc == LDAP_SUCCESS) {
			connected++;
		} else if (!connected) {
			report_failure(cfg, &f, rc);
			return false;
		} else {
			tally_error(&t->tally, rc, 1);
			c->retry_at = now_ns() + 50 * NS_PER_MS;
		}
	}
	return true;
}

static bool lean_start(struct sr_run *run)
{
	return sr_threads_start(run->lean, sizeof(*run->lean), run->cfg.threads);
}

static int lean_join(struct sr_run *run)
{
	return sr_threads_join(run->lean, sizeof(*run->lean), run->cfg.threads);
}

static void lean_collect(struct sr_run *run, struct stats *into, struct stats *scratch)
{
	for (int i = 0; i < run->cfg.threads; i++)
		tally_take(&run->lean[i].tally, into, scratch);
}

static void lean_free(struct sr_run *run)
{
	for (int i = 0; run->lean && i < run->cfg.threads; i++) {
		struct sr_lean *t = &run->lean[i];
		for (int k = 0; t->conns && k < t->nconns; k++) {
			struct lean_conn *c = &t->conns[k];
			lean_link_end(&c->link, false);
			if (c->link.fd >= 0)
				close(c->link.fd);
			free(c->slots);
			free(c->in);
			free(c->out);
		}
		free(t->conns);
		if (t->ep >= 0)
			close(t->ep);
		free(t->basebuf);
		free(t->filterbuf);
		free(t->fspans);
		lb_search_free(&t->search);
		lb_filter_free(&t->filter);
		lean_tls_free(&t->tls);
		tally_destroy(&t->tally);
	}
	free(run->lean);
	run->lean = NULL;
}

const struct sr_engine sr_engine_lean = {
    "lean", lean_create, lean_connect, lean_start, lean_join, lean_collect, lean_free,
};
