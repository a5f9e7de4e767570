/*
 * searchrate: an LDAP search load generator on libldap. Its options, output table and value
 * patterns follow the UnboundID/Ping Identity searchrate tool.
 *
 * Threads each own their connections (one LDAP* each) and run a loop that sends searches
 * (one at a time per thread, or pipelined per connection with --asynchronous), reads the
 * responses and records each search's result code, entry count and duration (CLOCK_MONOTONIC)
 * into per-thread counters and a log-linear latency histogram under a per-thread mutex. The
 * main thread wakes at each interval boundary, moves every thread's counters into the overall
 * totals, prints a row, and at the end (or on SIGINT/SIGTERM) prints a summary with latency
 * percentiles, result code counts and the tool's own CPU use.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <lber.h>
#include <ldap.h>

#define NS_PER_SEC 1000000000ull
#define NS_PER_MS 1000000ull

/* ---- value patterns ------------------------------------------------------------------------ */

enum comp_kind { COMP_LITERAL, COMP_RANDOM, COMP_SEQUENTIAL };

struct comp {
	enum comp_kind kind;
	char *text; /* COMP_LITERAL */
	size_t len;
	int64_t lo;            /* COMP_RANDOM: inclusive bounds; COMP_SEQUENTIAL: first value */
	uint64_t span;         /* COMP_RANDOM: hi - lo */
	uint64_t count;        /* COMP_SEQUENTIAL: number of values before wrapping */
	int64_t step;          /* COMP_SEQUENTIAL: signed step */
	_Atomic uint64_t next; /* COMP_SEQUENTIAL: shared by all threads */
	int width;             /* minimum digits, zero padded */
};

struct pattern {
	const char *src;
	struct comp *comps;
	size_t ncomps;
	size_t maxlen;
	char *fixed; /* the expansion when the pattern has no ranges */
};

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniformly distributed integer in [0, n), n > 0. */
static uint64_t rand_below(uint64_t *state, uint64_t n)
{
	uint64_t threshold = (0 - n) % n;
	for (;;) {
		uint64_t r = splitmix64(state);
		if (r >= threshold)
			return r % n;
	}
}

static struct comp *pattern_add(struct pattern *p)
{
	struct comp *c = realloc(p->comps, (p->ncomps + 1) * sizeof(*c));
	if (!c) {
		perror("searchrate");
		exit(1);
	}
	p->comps = c;
	c = &p->comps[p->ncomps++];
	memset(c, 0, sizeof(*c));
	atomic_init(&c->next, 0);
	return c;
}

/* Parses a signed decimal integer at *s (no spaces, no '+'), advancing *s. */
static bool parse_int_at(const char **s, int64_t *out)
{
	const char *p = *s;
	if (!(*p == '-' || (*p >= '0' && *p <= '9')))
		return false;
	if (*p == '-' && !(p[1] >= '0' && p[1] <= '9'))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(p, &end, 10);
	if (errno)
		return false;
	*out = v;
	*s = end;
	return true;
}

/*
 * Parses a value pattern: literal text with ranges in brackets.
 *   [A-B]        uniformly random integer in A..B
 *   [A:B]        sequential A, A+1, ... B, then A again (counts down when A > B)
 *   [A:B:S]      sequential with step S (also [A:BxS] as UnboundID writes it)
 *   ...%000]     zero padded to the number of 0s after '%' (UnboundID's decimal format)
 *   [[ and ]]    literal [ and ]
 */
static bool pattern_parse(struct pattern *p, const char *src, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->src = src;
	size_t n = strlen(src);
	char *lit = malloc(n + 1);
	if (!lit) {
		perror("searchrate");
		exit(1);
	}
	size_t litlen = 0;
	const char *s = src;
	while (*s) {
		if ((s[0] == '[' && s[1] == '[') || (s[0] == ']' && s[1] == ']')) {
			lit[litlen++] = s[0];
			s += 2;
			continue;
		}
		if (*s != '[') {
			lit[litlen++] = *s++;
			continue;
		}
		const char *open = s++;
		const char *close = strchr(open, ']');
		int64_t a, b, step = 1;
		bool ok = close != NULL && parse_int_at(&s, &a);
		char sep = ok ? *s : 0;
		ok = ok && (sep == '-' || sep == ':');
		if (ok) {
			s++;
			ok = parse_int_at(&s, &b);
		}
		if (ok && sep == ':' && (*s == ':' || *s == 'x')) {
			s++;
			ok = parse_int_at(&s, &step) && step > 0;
		}
		int width = 0;
		if (ok && *s == '%') {
			for (s++; *s == '0' || *s == '#'; s++)
				width += *s == '0';
			ok = width <= 20;
		}
		if (!ok || s != close) {
			snprintf(
			    err, errlen,
			    "bad value pattern at offset %zu of \"%s\": expected [A-B], [A:B] or "
			    "[A:B:STEP] with integers (write [[ and ]] for literal brackets)",
			    (size_t)(open - src), src);
			free(lit);
			return false;
		}
		s = close + 1;
		if (litlen) {
			struct comp *c = pattern_add(p);
			c->kind = COMP_LITERAL;
			c->text = malloc(litlen);
			if (!c->text) {
				perror("searchrate");
				exit(1);
			}
			memcpy(c->text, lit, litlen);
			c->len = litlen;
			p->maxlen += litlen;
			litlen = 0;
		}
		struct comp *c = pattern_add(p);
		c->width = width;
		if (sep == '-') {
			c->kind = COMP_RANDOM;
			c->lo = a < b ? a : b;
			c->span = (uint64_t)(a < b ? b : a) - (uint64_t)c->lo;
		} else {
			c->kind = COMP_SEQUENTIAL;
			c->lo = a;
			uint64_t span =
			    a <= b ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
			c->count =
			    span / (uint64_t)step + 1; /* span / 1 + 1 may wrap to 0: full range */
			c->step = a <= b ? step : -step;
		}
		p->maxlen += (width > 20 ? (size_t)width : 20) + 1;
	}
	if (litlen || p->ncomps == 0) {
		struct comp *c = pattern_add(p);
		c->kind = COMP_LITERAL;
		c->text = malloc(litlen + 1);
		if (!c->text) {
			perror("searchrate");
			exit(1);
		}
		memcpy(c->text, lit, litlen);
		c->len = litlen;
		p->maxlen += litlen;
	}
	free(lit);
	if (p->ncomps == 1 && p->comps[0].kind == COMP_LITERAL) {
		p->fixed = malloc(p->comps[0].len + 1);
		if (!p->fixed) {
			perror("searchrate");
			exit(1);
		}
		memcpy(p->fixed, p->comps[0].text, p->comps[0].len);
		p->fixed[p->comps[0].len] = '\0';
	}
	return true;
}

/* Expands the pattern into buf (at least p->maxlen + 1 bytes); returns the string to use. */
static const char *pattern_gen(struct pattern *p, uint64_t *rng, char *buf)
{
	if (p->fixed)
		return p->fixed;
	size_t pos = 0;
	for (size_t i = 0; i < p->ncomps; i++) {
		struct comp *c = &p->comps[i];
		int64_t v;
		switch (c->kind) {
		case COMP_LITERAL:
			memcpy(buf + pos, c->text, c->len);
			pos += c->len;
			continue;
		case COMP_RANDOM: {
			uint64_t off =
			    c->span == UINT64_MAX ? splitmix64(rng) : rand_below(rng, c->span + 1);
			v = (int64_t)((uint64_t)c->lo + off);
			break;
		}
		case COMP_SEQUENTIAL:
		default: {
			uint64_t k = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed);
			if (c->count)
				k %= c->count;
			v = (int64_t)((uint64_t)c->lo + k * (uint64_t)c->step);
			break;
		}
		}
		int w = snprintf(buf + pos, p->maxlen + 1 - pos, "%0*" PRId64, c->width, v);
		pos += (size_t)w;
	}
	buf[pos] = '\0';
	return buf;
}

static void pattern_free(struct pattern *p)
{
	for (size_t i = 0; i < p->ncomps; i++)
		free(p->comps[i].text);
	free(p->comps);
	free(p->fixed);
	p->comps = NULL;
	p->ncomps = 0;
	p->fixed = NULL;
}

/* ---- latency histogram ------------------------------------------------------------------- */

/*
 * Log-linear buckets over nanoseconds: values below 128 ns are exact; above, each power of two
 * is split into 128 equal buckets, so a bucket is at most 1/128 of its values wide and its
 * midpoint is within 0.4% of any value in it. 7424 counters cover the whole uint64_t range.
 */
#define HIST_SUB_BITS 7u
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64u - HIST_SUB_BITS + 1u) * HIST_SUB)

static unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	return (e - HIST_SUB_BITS + 1u) * HIST_SUB +
	       (unsigned)((v >> (e - HIST_SUB_BITS)) - HIST_SUB);
}

static uint64_t hist_value(unsigned idx)
{
	if (idx < HIST_SUB)
		return idx;
	unsigned e = idx / HIST_SUB + HIST_SUB_BITS - 1u;
	uint64_t sub = idx % HIST_SUB;
	uint64_t width = 1ull << (e - HIST_SUB_BITS);
	return ((HIST_SUB + sub) << (e - HIST_SUB_BITS)) + (width - 1) / 2;
}

/* ---- statistics ---------------------------------------------------------------------------- */

/* Result codes -64..447 are counted one by one (libldap's client-side codes are negative). */
#define RC_MIN (-64)
#define RC_MAX 447
#define RC_OTHER (RC_MAX - RC_MIN + 1)
#define RC_SLOTS (RC_OTHER + 1)

struct stats {
	uint64_t searches; /* searches answered with a SearchResultDone, any result code */
	uint64_t entries;
	uint64_t
	    errors; /* non-zero result codes, requests lost with a connection, failed connects */
	uint64_t dur_ns; /* total duration of the searches */
	uint64_t reconnects;
	uint64_t min_ns, max_ns;
	uint64_t rc[RC_SLOTS];
	uint64_t hist[HIST_BUCKETS];
};

static void stats_reset(struct stats *s)
{
	memset(s, 0, sizeof(*s));
	s->min_ns = UINT64_MAX;
}

static void stats_add(struct stats *to, const struct stats *from)
{
	to->searches += from->searches;
	to->entries += from->entries;
	to->errors += from->errors;
	to->dur_ns += from->dur_ns;
	to->reconnects += from->reconnects;
	if (from->min_ns < to->min_ns)
		to->min_ns = from->min_ns;
	if (from->max_ns > to->max_ns)
		to->max_ns = from->max_ns;
	for (unsigned i = 0; i < RC_SLOTS; i++)
		to->rc[i] += from->rc[i];
	if (from->searches)
		for (unsigned i = 0; i < HIST_BUCKETS; i++)
			to->hist[i] += from->hist[i];
}

static unsigned rc_slot(int rc)
{
	return rc >= RC_MIN && rc <= RC_MAX ? (unsigned)(rc - RC_MIN) : RC_OTHER;
}

/* The latency at quantile q in nanoseconds, from the histogram (clamped to the exact min/max). */
static uint64_t stats_percentile(const struct stats *s, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)s->searches);
	if (rank < 1)
		rank = 1;
	uint64_t cum = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		cum += s->hist[i];
		if (cum >= rank) {
			uint64_t v = hist_value(i);
			if (v < s->min_ns)
				v = s->min_ns;
			if (v > s->max_ns)
				v = s->max_ns;
			return v;
		}
	}
	return s->max_ns;
}

/* ---- configuration ------------------------------------------------------------------------- */

static struct {
	const char *host;
	int port;
	const char *binddn;
	char *bindpw;
	struct pattern base, filter;
	int scope;
	const char *scope_name;
	char **attrs; /* NULL: all user attributes */
	int nattrs;
	int threads, conns;
	double interval;
	uint64_t intervals; /* 0: until SIGINT */
	uint64_t warmup;
	double rate;
	bool async;
	int max_outstanding;
	int sizelimit, timelimit;
	bool csv;
	char uri[600];
} cfg;

static atomic_bool g_stop;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- connections and workers --------------------------------------------------------------- */

struct slot {
	int msgid; /* -1: free */
	uint64_t t0;
	uint64_t entries;
};

struct conn {
	LDAP *ld; /* NULL while down */
	int fd;
	Sockbuf *sb; /* ld's socket buffer: the readahead layer may hold whole messages */
	int outstanding;
	struct slot
	    *slots; /* open addressing by msgid, linear probing, at least 2x max in flight */
	unsigned mask;
	uint64_t retry_at, backoff_ns;
};

struct worker {
	pthread_t tid;
	int id;
	struct conn *conns;
	int nconns;
	int inflight;
	int left_outstanding; /* requests still in flight when the run stopped */
	uint64_t rng;
	uint64_t period_ns; /* 0: no rate limit */
	uint64_t next_send;
	char *basebuf, *filterbuf;
	pthread_mutex_t mu;
	struct stats st; /* guarded by mu; moved out by the main thread every interval */
};

static struct slot *slot_find(struct conn *c, int msgid)
{
	for (unsigned i = (unsigned)msgid & c->mask; c->slots[i].msgid != -1; i = (i + 1) & c->mask)
		if (c->slots[i].msgid == msgid)
			return &c->slots[i];
	return NULL;
}

static void slot_insert(struct conn *c, int msgid, uint64_t t0)
{
	unsigned i = (unsigned)msgid & c->mask;
	while (c->slots[i].msgid != -1)
		i = (i + 1) & c->mask;
	c->slots[i] = (struct slot){msgid, t0, 0};
}

/* Deletion with backward shift, so no tombstones accumulate. */
static void slot_delete(struct conn *c, struct slot *s)
{
	unsigned i = (unsigned)(s - c->slots), j = i;
	for (;;) {
		j = (j + 1) & c->mask;
		if (c->slots[j].msgid == -1)
			break;
		unsigned home = (unsigned)c->slots[j].msgid & c->mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			c->slots[i] = c->slots[j];
			i = j;
		}
	}
	c->slots[i].msgid = -1;
}

static void record_search(struct worker *w, int rc, uint64_t entries, uint64_t ns)
{
	pthread_mutex_lock(&w->mu);
	struct stats *s = &w->st;
	s->searches++;
	s->entries += entries;
	s->dur_ns += ns;
	if (ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->hist[hist_index(ns)]++;
	s->rc[rc_slot(rc)]++;
	if (rc != LDAP_SUCCESS)
		s->errors++;
	pthread_mutex_unlock(&w->mu);
}

/* An error that is not a completed search: a request lost with its connection, a failed connect. */
static void record_error(struct worker *w, int rc, uint64_t n)
{
	pthread_mutex_lock(&w->mu);
	w->st.errors += n;
	w->st.rc[rc_slot(rc)] += n;
	pthread_mutex_unlock(&w->mu);
}

/* Opens and (if --bindDN) binds one connection; returns an LDAP result code. */
static int conn_open(struct conn *c, char **diag)
{
	LDAP *ld = NULL;
	*diag = NULL;
	int rc = ldap_initialize(&ld, cfg.uri);
	if (rc != LDAP_SUCCESS)
		return rc;
	int version = LDAP_VERSION3;
	struct timeval net_timeout = {5, 0}, op_timeout = {10, 0};
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version);
	ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &net_timeout);
	ldap_set_option(ld, LDAP_OPT_TIMEOUT, &op_timeout);
	if (cfg.binddn) {
		struct berval cred = {strlen(cfg.bindpw), cfg.bindpw};
		rc = ldap_sasl_bind_s(ld, cfg.binddn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
	} else {
		rc = ldap_connect(ld);
	}
	if (rc == LDAP_SUCCESS && ldap_get_option(ld, LDAP_OPT_DESC, &c->fd) != LDAP_OPT_SUCCESS)
		rc = LDAP_LOCAL_ERROR;
	/* libldap reads each message with two read()s; a readahead layer over TCP (as libldap
	 * itself uses for UDP) reads whatever has arrived at once. ldap_result() checks the
	 * layer for buffered data before it polls, so the loop below stays correct. */
	Sockbuf *sb = NULL;
	if (rc == LDAP_SUCCESS && ldap_get_option(ld, LDAP_OPT_SOCKBUF, &sb) == LDAP_OPT_SUCCESS &&
	    sb)
		ber_sockbuf_add_io(sb, &ber_sockbuf_io_readahead, LBER_SBIOD_LEVEL_PROVIDER, NULL);
	if (rc != LDAP_SUCCESS) {
		ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, diag);
		ldap_unbind_ext(ld, NULL, NULL);
		return rc;
	}
	c->ld = ld;
	c->sb = sb;
	c->outstanding = 0;
	return LDAP_SUCCESS;
}

static void conn_close(struct worker *w, struct conn *c)
{
	for (unsigned i = 0; i <= c->mask; i++)
		c->slots[i].msgid = -1;
	w->inflight -= c->outstanding;
	c->outstanding = 0;
	ldap_unbind_ext(c->ld, NULL, NULL);
	c->ld = NULL;
	c->sb = NULL;
}

/*
 * The connection failed: each request in flight on it counts as an error with the connection's
 * result code (at least one error for the loss itself), and it is re-established next round.
 */
static void conn_lost(struct worker *w, struct conn *c, int rc)
{
	if (rc == LDAP_SUCCESS &&
	    (ldap_get_option(c->ld, LDAP_OPT_RESULT_CODE, &rc) != LDAP_OPT_SUCCESS ||
	     rc == LDAP_SUCCESS))
		rc = LDAP_SERVER_DOWN;
	record_error(w, rc, c->outstanding > 0 ? (uint64_t)c->outstanding : 1);
	conn_close(w, c);
	c->retry_at = now_ns();
	c->backoff_ns = 0;
}

static void conn_retry(struct worker *w, struct conn *c, uint64_t now)
{
	char *diag;
	int rc = conn_open(c, &diag);
	ldap_memfree(diag);
	if (rc == LDAP_SUCCESS) {
		pthread_mutex_lock(&w->mu);
		w->st.reconnects++;
		pthread_mutex_unlock(&w->mu);
		return;
	}
	record_error(w, rc, 1);
	c->backoff_ns = c->backoff_ns ? c->backoff_ns * 2 : 50 * NS_PER_MS;
	if (c->backoff_ns > NS_PER_SEC)
		c->backoff_ns = NS_PER_SEC;
	c->retry_at = now + c->backoff_ns;
}

static bool conn_level_error(int rc)
{
	return rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR || rc == LDAP_TIMEOUT ||
	       rc == LDAP_UNAVAILABLE;
}

static void send_one(struct worker *w, struct conn *c)
{
	const char *base = pattern_gen(&cfg.base, &w->rng, w->basebuf);
	const char *filter = pattern_gen(&cfg.filter, &w->rng, w->filterbuf);
	struct timeval tl = {cfg.timelimit, 0};
	int msgid;
	uint64_t t0 = now_ns();
	int rc = ldap_search_ext(c->ld, base, cfg.scope, filter, cfg.attrs, 0, NULL, NULL,
	                         cfg.timelimit > 0 ? &tl : NULL, cfg.sizelimit, &msgid);
	if (rc == LDAP_SUCCESS) {
		slot_insert(c, msgid, t0);
		c->outstanding++;
		w->inflight++;
	} else if (conn_level_error(rc)) {
		c->outstanding++; /* the request that failed is lost with the connection */
		w->inflight++;
		conn_lost(w, c, rc);
	} else {
		record_error(w, rc, 1);
	}
}

/* Handles one message from ldap_result; frees it. */
static void handle_msg(struct worker *w, struct conn *c, LDAPMessage *msg, int type)
{
	int msgid = ldap_msgid(msg);
	struct slot *s;
	switch (type) {
	case LDAP_RES_SEARCH_ENTRY:
		if ((s = slot_find(c, msgid)))
			s->entries++;
		break;
	case LDAP_RES_SEARCH_RESULT:
		if ((s = slot_find(c, msgid))) {
			uint64_t t1 = now_ns();
			int err = LDAP_SUCCESS;
			int prc = ldap_parse_result(c->ld, msg, &err, NULL, NULL, NULL, NULL, 0);
			if (prc != LDAP_SUCCESS)
				err = prc;
			record_search(w, err, s->entries, t1 - s->t0);
			slot_delete(c, s);
			c->outstanding--;
			w->inflight--;
		}
		break;
	case LDAP_RES_EXTENDED:
		if (msgid == 0) { /* unsolicited: notice of disconnection */
			ldap_msgfree(msg);
			conn_lost(w, c, LDAP_SERVER_DOWN);
			return;
		}
		break;
	default: /* search references and anything unexpected */
		break;
	}
	ldap_msgfree(msg);
}

/* Waits up to tv for one message on c and handles it: 1 handled, 0 timed out, -1 connection lost */
static int pump(struct worker *w, struct conn *c, struct timeval tv)
{
	LDAPMessage *msg = NULL;
	int type = ldap_result(c->ld, LDAP_RES_ANY, LDAP_MSG_ONE, &tv, &msg);
	if (type == 0)
		return 0;
	if (type < 0) {
		ldap_msgfree(msg);
		conn_lost(w, c, LDAP_SUCCESS);
		return -1;
	}
	handle_msg(w, c, msg, type);
	return 1;
}

/*
 * Sends on c while it has room (per connection and per thread) and the rate limiter allows.
 * Returns how many were sent; *rate_blocked is set (and *wake lowered) when the limiter said wait.
 */
static int fill(struct worker *w, struct conn *c, int thread_max, int conn_max, uint64_t *wake,
                bool *rate_blocked)
{
	int sent = 0;
	while (c->ld && c->outstanding < conn_max && w->inflight < thread_max) {
		if (w->period_ns) {
			uint64_t now = now_ns();
			if (now < w->next_send) {
				*rate_blocked = true;
				if (w->next_send < *wake)
					*wake = w->next_send;
				break;
			}
			if (now - w->next_send > NS_PER_SEC) /* far behind: resume, no burst */
				w->next_send = now;
			w->next_send += w->period_ns;
		}
		send_one(w, c);
		sent++;
	}
	return sent;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const int thread_max = cfg.async ? INT_MAX : 1;
	const int conn_max = cfg.async ? cfg.max_outstanding : 1;
	struct pollfd *pfd = calloc((size_t)w->nconns, sizeof(*pfd));
	struct conn **pconn = calloc((size_t)w->nconns, sizeof(*pconn));
	bool *pconn_ready = calloc((size_t)w->nconns, sizeof(*pconn_ready));
	if (!pfd || !pconn || !pconn_ready) {
		perror("searchrate");
		exit(1);
	}
	int rr = 0; /* the connection to send on first, round robin */
	w->next_send = now_ns();
	while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
		uint64_t now = now_ns();
		uint64_t wake = now + 100 * NS_PER_MS; /* at the latest: look at g_stop again */
		bool rate_blocked = false;

		for (int i = 0; i < w->nconns; i++) {
			struct conn *c = &w->conns[i];
			if (c->ld)
				continue;
			if (now >= c->retry_at) {
				conn_retry(w, c, now);
				now = now_ns();
			}
			if (!c->ld && c->retry_at < wake)
				wake = c->retry_at;
		}

		for (int k = 0; k < w->nconns && w->inflight < thread_max && !rate_blocked; k++) {
			int idx = (rr + k) % w->nconns;
			if (fill(w, &w->conns[idx], thread_max, conn_max, &wake, &rate_blocked))
				rr = (idx + 1) % w->nconns;
		}

		int npoll = 0;
		for (int i = 0; i < w->nconns; i++) {
			if (w->conns[i].ld && w->conns[i].outstanding > 0) {
				pfd[npoll] =
				    (struct pollfd){.fd = w->conns[i].fd, .events = POLLIN};
				pconn[npoll++] = &w->conns[i];
			}
		}
		now = now_ns();
		uint64_t wait = wake > now ? wake - now : 0;
		if (npoll == 1) {
			/* One connection waiting (always so when synchronous): block in libldap. */
			struct timeval tv = {(time_t)(wait / NS_PER_SEC),
			                     (suseconds_t)(wait % NS_PER_SEC / 1000)};
			pump(w, pconn[0], tv);
		} else if (npoll > 1) {
			struct timespec ts = {(time_t)(wait / NS_PER_SEC),
			                      (long)(wait % NS_PER_SEC)};
			/* Messages the readahead layer already read never wake ppoll: such a
			 * connection counts as readable, and ppoll only looks at the others. */
			int buffered = 0;
			for (int i = 0; i < npoll; i++) {
				pconn_ready[i] = pconn[i]->sb &&
				                 ber_sockbuf_ctrl(pconn[i]->sb,
				                                  LBER_SB_OPT_DATA_READY, NULL) > 0;
				buffered += pconn_ready[i];
			}
			if (buffered)
				ts = (struct timespec){0, 0};
			int n = ppoll(pfd, (nfds_t)npoll, &ts, NULL);
			for (int i = 0; (n > 0 || buffered) && i < npoll; i++) {
				if (!pfd[i].revents && !pconn_ready[i])
					continue;
				/* Read what has arrived (libldap then holds no whole message back),
				 * replacing each finished request at once to keep the pipeline
				 * full; bounded so the other connections get their turn. */
				struct conn *c = pconn[i];
				for (int m = 0; m < 2 * conn_max && c->ld && c->outstanding > 0;
				     m++) {
					if (pump(w, c, (struct timeval){0, 0}) <= 0)
						break;
					if (!rate_blocked)
						fill(w, c, thread_max, conn_max, &wake,
						     &rate_blocked);
				}
			}
		} else if (wait) {
			struct timespec ts = {(time_t)(wake / NS_PER_SEC),
			                      (long)(wake % NS_PER_SEC)};
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	for (int i = 0; i < w->nconns; i++) {
		if (w->conns[i].ld) {
			w->left_outstanding += w->conns[i].outstanding;
			conn_close(w, &w->conns[i]);
		}
	}
	free(pfd);
	free(pconn);
	free(pconn_ready);
	return NULL;
}

/* ---- options ------------------------------------------------------------------------------- */

static const char usage_text[] =
    "Usage: searchrate -b BASEDN [options]\n"
    "\n"
    "Runs searches against an LDAP server as fast as it can (or at a fixed rate) and\n"
    "prints the search rate, duration and error rate per interval, then a summary with\n"
    "latency percentiles and result codes. Options follow UnboundID's searchrate.\n"
    "\n"
    "Connection:\n"
    "  -h, --hostname HOST             server address (default 127.0.0.1)\n"
    "  -p, --port PORT                 server port (default 389)\n"
    "  -D, --bindDN DN                 simple bind as DN on every connection\n"
    "  -w, --bindPassword PASSWORD     the password for --bindDN\n"
    "  -j, --bindPasswordFile FILE     read the password from the first line of FILE\n"
    "Search:\n"
    "  -b, --baseDN DN                 search base (required; may be a value pattern)\n"
    "  -s, --scope SCOPE               base, one, sub or subordinates (default sub)\n"
    "  -f, --filter FILTER             search filter (value pattern; default (objectClass=*))\n"
    "  -A, --attribute ATTR            attribute to return; repeatable (default: all)\n"
    "  -z, --sizeLimit N               size limit of each search (default 0: none)\n"
    "  -l, --timeLimit SECONDS         time limit of each search (default 0: none)\n"
    "Load:\n"
    "  -t, --numThreads N              threads (default 1)\n"
    "      --numConnections N          connections, spread over the threads (default: one\n"
    "                                  per thread); must be at least --numThreads\n"
    "  -r, --ratePerSecond N           target total searches per second (default 0: as fast\n"
    "                                  as possible)\n"
    "  -a, --asynchronous              pipeline requests on each connection instead of waiting\n"
    "                                  for each result\n"
    "  -O, --maxOutstandingRequests N  with --asynchronous: requests in flight per connection\n"
    "                                  (default 100)\n"
    "Output:\n"
    "  -i, --intervalDuration SECONDS  length of each interval (one row) (default 5)\n"
    "  -I, --numIntervals N            stop after N intervals (default: run until SIGINT)\n"
    "      --warmUpIntervals N         intervals run first and left out of the overall\n"
    "                                  statistics and the summary (default 0)\n"
    "  -c, --csv                       print CSV rows instead of the table\n"
    "  -H, --help                      print this help and exit\n"
    "\n"
    "Value patterns (in --baseDN and --filter), expanded for each search:\n"
    "  [1-1000]     a uniformly random integer from 1 to 1000\n"
    "  [1:1000]     sequential: 1, 2, ..., 1000, then 1 again (shared by all threads)\n"
    "  [1:1000:5]   sequential with step 5 (also written [1:1000x5])\n"
    "  [1-1000%0000]  zero padded to four digits\n"
    "  [[ and ]]    literal [ and ]\n"
    "  e.g. --filter \"(uid=user.[1-10000])\"\n"
    "\n"
    "A search that ends with a non-zero result code, a request lost with its connection and\n"
    "a failed (re)connect count as errors by result code; lost connections are re-established.\n"
    "\n"
    "Exit status: 0 the run completed (even with LDAP errors), 1 no connection could be\n"
    "established, 2 bad options.\n";

static _Noreturn void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("searchrate: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\n\n", stderr);
	va_end(ap);
	fputs(usage_text, stderr);
	exit(2);
}

static long long opt_int(const char *name, const char *s, long long lo, long long hi)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		usage_error("--%s: \"%s\" is not an integer from %lld to %lld", name, s, lo, hi);
	return v;
}

static double opt_num(const char *name, const char *s, double lo, double hi)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		usage_error("--%s: \"%s\" is not a number from %g to %g", name, s, lo, hi);
	return v;
}

static char *read_password_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		usage_error("--bindPasswordFile: cannot open %s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	fclose(f);
	if (n < 0) {
		free(line);
		usage_error("--bindPasswordFile: %s is empty", path);
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

enum {
	OPT_NUM_CONNECTIONS = 1000,
	OPT_WARMUP,
};

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"hostname", required_argument, NULL, 'h'},
	    {"port", required_argument, NULL, 'p'},
	    {"bindDN", required_argument, NULL, 'D'},
	    {"bindPassword", required_argument, NULL, 'w'},
	    {"bindPasswordFile", required_argument, NULL, 'j'},
	    {"baseDN", required_argument, NULL, 'b'},
	    {"scope", required_argument, NULL, 's'},
	    {"filter", required_argument, NULL, 'f'},
	    {"attribute", required_argument, NULL, 'A'},
	    {"sizeLimit", required_argument, NULL, 'z'},
	    {"timeLimit", required_argument, NULL, 'l'},
	    {"numThreads", required_argument, NULL, 't'},
	    {"numConnections", required_argument, NULL, OPT_NUM_CONNECTIONS},
	    {"ratePerSecond", required_argument, NULL, 'r'},
	    {"asynchronous", no_argument, NULL, 'a'},
	    {"maxOutstandingRequests", required_argument, NULL, 'O'},
	    {"intervalDuration", required_argument, NULL, 'i'},
	    {"numIntervals", required_argument, NULL, 'I'},
	    {"warmUpIntervals", required_argument, NULL, OPT_WARMUP},
	    {"csv", no_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'H'},
	    {0},
	};
	const char *base = NULL, *filter = "(objectClass=*)", *pwfile = NULL;
	bool have_pw = false, have_max = false;
	cfg.host = "127.0.0.1";
	cfg.port = 389;
	cfg.scope = LDAP_SCOPE_SUBTREE;
	cfg.scope_name = "sub";
	cfg.threads = 1;
	cfg.interval = 5;
	cfg.max_outstanding = 100;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":h:p:D:w:j:b:s:f:A:z:l:t:r:aO:i:I:cH", longopts,
	                         NULL)) != -1) {
		switch (ch) {
		case 'h':
			cfg.host = optarg;
			break;
		case 'p':
			cfg.port = (int)opt_int("port", optarg, 1, 65535);
			break;
		case 'D':
			cfg.binddn = optarg;
			break;
		case 'w':
			cfg.bindpw = optarg;
			have_pw = true;
			break;
		case 'j':
			pwfile = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case 's':
			if (!strcasecmp(optarg, "base")) {
				cfg.scope = LDAP_SCOPE_BASE;
			} else if (!strcasecmp(optarg, "one")) {
				cfg.scope = LDAP_SCOPE_ONELEVEL;
			} else if (!strcasecmp(optarg, "sub")) {
				cfg.scope = LDAP_SCOPE_SUBTREE;
			} else if (!strcasecmp(optarg, "subordinates") ||
			           !strcasecmp(optarg, "subordinate")) {
				cfg.scope = LDAP_SCOPE_SUBORDINATE;
			} else {
				usage_error("--scope: \"%s\" is not base, one, sub or subordinates",
				            optarg);
			}
			cfg.scope_name = optarg;
			break;
		case 'f':
			filter = optarg;
			break;
		case 'A': {
			char **a = realloc(cfg.attrs, (size_t)(cfg.nattrs + 2) * sizeof(*a));
			if (!a) {
				perror("searchrate");
				exit(1);
			}
			cfg.attrs = a;
			cfg.attrs[cfg.nattrs++] = optarg;
			cfg.attrs[cfg.nattrs] = NULL;
			break;
		}
		case 'z':
			cfg.sizelimit = (int)opt_int("sizeLimit", optarg, 0, INT_MAX);
			break;
		case 'l':
			cfg.timelimit = (int)opt_int("timeLimit", optarg, 0, INT_MAX);
			break;
		case 't':
			cfg.threads = (int)opt_int("numThreads", optarg, 1, 4096);
			break;
		case OPT_NUM_CONNECTIONS:
			cfg.conns = (int)opt_int("numConnections", optarg, 1, 1000000);
			break;
		case 'r':
			cfg.rate = opt_num("ratePerSecond", optarg, 0, 1e9);
			break;
		case 'a':
			cfg.async = true;
			break;
		case 'O':
			cfg.max_outstanding =
			    (int)opt_int("maxOutstandingRequests", optarg, 1, 100000);
			have_max = true;
			break;
		case 'i':
			cfg.interval = opt_num("intervalDuration", optarg, 0.01, 86400.0 * 365);
			break;
		case 'I':
			cfg.intervals = (uint64_t)opt_int("numIntervals", optarg, 1, LLONG_MAX / 2);
			break;
		case OPT_WARMUP:
			cfg.warmup = (uint64_t)opt_int("warmUpIntervals", optarg, 0, LLONG_MAX / 2);
			break;
		case 'c':
			cfg.csv = true;
			break;
		case 'H':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			usage_error("option %s needs a value", argv[optind - 1]);
		default:
			if (optopt && optopt < 256)
				usage_error("unknown option -%c", optopt);
			usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument \"%s\"", argv[optind]);
	if (!base)
		usage_error("--baseDN is required");
	if (pwfile) {
		if (have_pw)
			usage_error("give --bindPassword or --bindPasswordFile, not both");
		cfg.bindpw = read_password_file(pwfile);
		have_pw = true;
	}
	if (cfg.binddn && !have_pw)
		usage_error("--bindDN needs --bindPassword or --bindPasswordFile");
	if (!cfg.binddn && have_pw)
		usage_error("--bindPassword needs --bindDN");
	if (have_max && !cfg.async)
		usage_error("--maxOutstandingRequests needs --asynchronous");
	if (!cfg.conns)
		cfg.conns = cfg.threads;
	if (cfg.conns < cfg.threads)
		usage_error("--numConnections (%d) must be at least --numThreads (%d): each thread "
		            "owns its connections",
		            cfg.conns, cfg.threads);

	char err[512];
	if (!pattern_parse(&cfg.base, base, err, sizeof(err)))
		usage_error("--baseDN: %s", err);
	if (!pattern_parse(&cfg.filter, filter, err, sizeof(err)))
		usage_error("--filter: %s", err);

	if (strchr(cfg.host, ':') && cfg.host[0] != '[')
		snprintf(cfg.uri, sizeof(cfg.uri), "ldap://[%s]:%d", cfg.host, cfg.port);
	else
		snprintf(cfg.uri, sizeof(cfg.uri), "ldap://%s:%d", cfg.host, cfg.port);

	/* Check one expansion of each pattern here rather than as a stream of errors later. */
	uint64_t rng = 1;
	char *buf = malloc(cfg.base.maxlen + cfg.filter.maxlen + 2);
	if (!buf) {
		perror("searchrate");
		exit(1);
	}
	const char *b = pattern_gen(&cfg.base, &rng, buf);
	LDAPDN dn = NULL;
	if (ldap_str2dn(b, &dn, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
		usage_error("--baseDN: \"%s\" is not a valid DN", b);
	ldap_dnfree(dn);
	char *f = (char *)pattern_gen(&cfg.filter, &rng, buf);
	if (f != buf) {
		strcpy(buf, f);
		f = buf;
	}
	LDAP *ld = NULL;
	struct berval bv = {0, NULL};
	if (ldap_initialize(&ld, cfg.uri) != LDAP_SUCCESS)
		usage_error("bad --hostname/--port: cannot use %s", cfg.uri);
	int frc = ldap_create_assertion_control_value(ld, f, &bv);
	ber_memfree(bv.bv_val);
	ldap_unbind_ext(ld, NULL, NULL);
	if (frc != LDAP_SUCCESS)
		usage_error("--filter: \"%s\" is not a valid LDAP filter", f);
	/* Reset sequential counters so the run starts at the first value. */
	for (size_t i = 0; i < cfg.base.ncomps; i++)
		atomic_store(&cfg.base.comps[i].next, 0);
	for (size_t i = 0; i < cfg.filter.ncomps; i++)
		atomic_store(&cfg.filter.comps[i].next, 0);
	free(buf);
}

/* ---- output -------------------------------------------------------------------------------- */

static void print_header(void)
{
	if (cfg.csv) {
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

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_row(const struct stats *iv, double secs, const struct stats *all, double all_secs,
                      bool warming)
{
	double r_rate = ratio((double)iv->searches, secs);
	double r_dur = ratio((double)iv->dur_ns / 1e6, (double)iv->searches);
	double r_ent = ratio((double)iv->entries, (double)iv->searches);
	double r_err = ratio((double)iv->errors, secs);
	const char *fmt = cfg.csv ? "%.3f,%.3f,%.3f,%.3f," : "%12.3f %12.3f %12.3f %12.3f ";
	printf(fmt, r_rate, r_dur, r_ent, r_err);
	if (warming) {
		printf(cfg.csv ? "warming up,warming up\n" : "%12s %12s\n", "warming up",
		       "warming up");
	} else {
		printf(cfg.csv ? "%.3f,%.3f\n" : "%12.3f %12.3f\n",
		       ratio((double)all->searches, all_secs),
		       ratio((double)all->dur_ns / 1e6, (double)all->searches));
	}
	fflush(stdout);
}

/* Summary lines; in CSV mode they are '#' comments after the rows. */
static void summary(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (cfg.csv)
		fputs("# ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
}

static void print_result_codes(const struct stats *s, const char *indent)
{
	bool any = false;
	for (unsigned i = 0; i < RC_SLOTS; i++)
		any = any || s->rc[i];
	if (!any)
		summary("%snone\n", indent);
	for (unsigned i = 0; i < RC_SLOTS; i++) {
		if (!s->rc[i])
			continue;
		if (i == RC_OTHER) {
			summary("%sother result codes: %" PRIu64 "\n", indent, s->rc[i]);
		} else {
			int rc = (int)i + RC_MIN;
			summary("%s%d (%s): %" PRIu64 "\n", indent, rc, ldap_err2string(rc),
			        s->rc[i]);
		}
	}
}

/* ---- main ---------------------------------------------------------------------------------- */

/* The run's state; globals so that every exit path can free it. */
static struct worker *g_ws;
static struct stats *g_overall, *g_warm, *g_iv, *g_scratch;

static void free_all(void)
{
	for (int t = 0; g_ws && t < cfg.threads; t++) {
		for (int i = 0; g_ws[t].conns && i < g_ws[t].nconns; i++) {
			if (g_ws[t].conns[i].ld)
				ldap_unbind_ext(g_ws[t].conns[i].ld, NULL, NULL);
			free(g_ws[t].conns[i].slots);
		}
		free(g_ws[t].conns);
		free(g_ws[t].basebuf);
		free(g_ws[t].filterbuf);
		pthread_mutex_destroy(&g_ws[t].mu);
	}
	free(g_ws);
	free(g_overall);
	free(g_warm);
	free(g_iv);
	free(g_scratch);
	free(cfg.attrs);
	pattern_free(&cfg.base);
	pattern_free(&cfg.filter);
	g_ws = NULL;
	g_overall = g_warm = g_iv = g_scratch = NULL;
	cfg.attrs = NULL;
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

static double tv_secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	uint64_t t_start = now_ns();
	parse_options(argc, argv);

	signal(SIGPIPE, SIG_IGN);
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* threads inherit it; main takes them below */

	struct worker *ws = g_ws = calloc((size_t)cfg.threads, sizeof(*ws));
	struct stats *overall = g_overall = malloc(sizeof(*overall));
	struct stats *warm = g_warm = malloc(sizeof(*warm));
	struct stats *iv = g_iv = malloc(sizeof(*iv)),
	             *scratch = g_scratch = malloc(sizeof(*scratch));
	if (!ws || !overall || !warm || !iv || !scratch) {
		perror("searchrate");
		return 1;
	}
	stats_reset(overall);
	stats_reset(warm);
	unsigned table = 2;
	while (table < 2u * (unsigned)(cfg.async ? cfg.max_outstanding : 1))
		table *= 2;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ t_start;
	for (int t = 0; t < cfg.threads; t++) {
		struct worker *w = &ws[t];
		w->id = t;
		w->nconns = cfg.conns / cfg.threads + (t < cfg.conns % cfg.threads);
		w->conns = calloc((size_t)w->nconns, sizeof(*w->conns));
		w->basebuf = malloc(cfg.base.maxlen + 1);
		w->filterbuf = malloc(cfg.filter.maxlen + 1);
		if (!w->conns || !w->basebuf || !w->filterbuf) {
			perror("searchrate");
			return 1;
		}
		for (int i = 0; i < w->nconns; i++) {
			struct conn *c = &w->conns[i];
			c->mask = table - 1;
			c->slots = malloc(table * sizeof(*c->slots));
			if (!c->slots) {
				perror("searchrate");
				return 1;
			}
			for (unsigned k = 0; k < table; k++)
				c->slots[k].msgid = -1;
		}
		w->rng = seed + (uint64_t)t * 0x632be59bd9b4e019ull;
		if (cfg.rate > 0)
			w->period_ns = (uint64_t)((double)NS_PER_SEC * cfg.threads / cfg.rate);
		if (cfg.rate > 0 && !w->period_ns)
			w->period_ns = 1;
		pthread_mutex_init(&w->mu, NULL);
		stats_reset(&w->st);
	}

	/* Open every connection. The first must work (else exit 1); later failures are counted
	 * and retried by their thread. */
	int connected = 0;
	for (int i = 0; i < cfg.conns; i++) {
		struct worker *w = &ws[i % cfg.threads];
		struct conn *c = &w->conns[i / cfg.threads];
		char *diag;
		int rc = conn_open(c, &diag);
		if (rc == LDAP_SUCCESS) {
			connected++;
		} else if (!connected) {
			fprintf(stderr, "searchrate: cannot %s %s: %s (%d)%s%s\n",
			        cfg.binddn ? "connect and bind to" : "connect to", cfg.uri,
			        ldap_err2string(rc), rc, diag && *diag ? ": " : "",
			        diag ? diag : "");
			ldap_memfree(diag);
			free_all();
			return 1;
		} else {
			ldap_memfree(diag);
			record_error(w, rc, 1);
			c->retry_at = now_ns() + 50 * NS_PER_MS;
		}
	}

	if (!cfg.csv) {
		printf("searchrate: %s, %d thread%s, %d connection%s, %s", cfg.uri, cfg.threads,
		       cfg.threads == 1 ? "" : "s", cfg.conns, cfg.conns == 1 ? "" : "s",
		       cfg.async ? "asynchronous" : "synchronous");
		if (cfg.async)
			printf(" (up to %d outstanding per connection)", cfg.max_outstanding);
		if (cfg.rate > 0)
			printf(", target %g searches/s", cfg.rate);
		printf("\nsearching base \"%s\" scope %s filter \"%s\"", cfg.base.src,
		       cfg.scope_name, cfg.filter.src);
		if (cfg.intervals)
			printf(" for %" PRIu64 " interval%s of %g s", cfg.intervals,
			       cfg.intervals == 1 ? "" : "s", cfg.interval);
		else
			printf(" in intervals of %g s until interrupted", cfg.interval);
		if (cfg.warmup)
			printf(" after %" PRIu64 " warm-up interval%s", cfg.warmup,
			       cfg.warmup == 1 ? "" : "s");
		printf("\n\n");
	}
	print_header();

	uint64_t t0 = now_ns();
	for (int t = 0; t < cfg.threads; t++) {
		int err = pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]);
		if (err) {
			fprintf(stderr, "searchrate: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	const uint64_t interval_ns = (uint64_t)(cfg.interval * (double)NS_PER_SEC);
	const uint64_t total = cfg.intervals ? cfg.warmup + cfg.intervals : UINT64_MAX;
	uint64_t prev = t0, measure_start = t0, measured_intervals = 0;
	bool interrupted = false;
	for (uint64_t i = 1; i <= total && !interrupted; i++) {
		interrupted = wait_until(t0 + i * interval_ns, &sigs);
		uint64_t now = now_ns();
		bool warming = i <= cfg.warmup;
		stats_reset(iv);
		for (int t = 0; t < cfg.threads; t++) {
			pthread_mutex_lock(&ws[t].mu);
			memcpy(scratch, &ws[t].st, sizeof(*scratch));
			stats_reset(&ws[t].st);
			pthread_mutex_unlock(&ws[t].mu);
			stats_add(iv, scratch);
		}
		stats_add(warming ? warm : overall, iv);
		if (!warming)
			measured_intervals++;
		print_row(iv, (double)(now - prev) / 1e9, overall,
		          (double)(now - measure_start) / 1e9, warming);
		prev = now;
		if (warming && i == cfg.warmup) {
			measure_start = now;
			if (!cfg.csv) {
				puts(
				    "Warm-up completed.  Beginning overall statistics collection.");
				fflush(stdout);
			}
		}
	}
	uint64_t t_end = prev;
	atomic_store(&g_stop, true);
	int left = 0;
	for (int t = 0; t < cfg.threads; t++) {
		pthread_join(ws[t].tid, NULL);
		left += ws[t].left_outstanding;
	}

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double wall = (double)(now_ns() - t_start) / 1e9;
	double user = tv_secs(ru.ru_utime), sys = tv_secs(ru.ru_stime);
	double measured = (double)(t_end - measure_start) / 1e9;
	if (!measured_intervals)
		measured = 0;

	printf("\n");
	if (interrupted)
		summary("Interrupted by a signal: the last interval was cut short.\n");
	summary("Summary (%.3f s measured", measured);
	if (cfg.warmup)
		printf(", warm-up intervals excluded");
	printf("):\n");
	summary("  Total searches:        %" PRIu64 "\n", overall->searches);
	summary("  Total entries:         %" PRIu64 " (%.3f per search)\n", overall->entries,
	        ratio((double)overall->entries, (double)overall->searches));
	summary("  Total errors:          %" PRIu64 "\n", overall->errors);
	summary("  Searches/sec:          %.3f\n", ratio((double)overall->searches, measured));
	summary("  Average duration ms:   %.3f\n",
	        ratio((double)overall->dur_ns / 1e6, (double)overall->searches));
	if (overall->searches) {
		summary("  Latency ms:            min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  "
		        "p99.9 %.3f  max %.3f\n",
		        (double)overall->min_ns / 1e6, (double)stats_percentile(overall, 0.5) / 1e6,
		        (double)stats_percentile(overall, 0.9) / 1e6,
		        (double)stats_percentile(overall, 0.99) / 1e6,
		        (double)stats_percentile(overall, 0.999) / 1e6,
		        (double)overall->max_ns / 1e6);
	} else {
		summary("  Latency ms:            no searches completed\n");
	}
	summary("  Result codes:\n");
	print_result_codes(overall, "    ");
	if (overall->reconnects)
		summary("  Reconnects:            %" PRIu64 "\n", overall->reconnects);
	if (cfg.warmup) {
		summary("  Warm-up (excluded):    %" PRIu64 " searches, %" PRIu64 " errors\n",
		        warm->searches, warm->errors);
		if (warm->errors)
			print_result_codes(warm, "    ");
	}
	if (left)
		summary("  In flight at stop:     %d (not counted)\n", left);
	summary("  searchrate CPU:        %.3f s (user %.3f s, sys %.3f s) = %.1f%% of one core "
	        "over %.3f s wall\n",
	        user + sys, user, sys, ratio((user + sys) * 100, wall), wall);
	fflush(stdout);

	free_all();
	return 0;
}
