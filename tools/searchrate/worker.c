/*
 * worker.c: the load threads (see worker.h). A thread's loop, each round: reconnect the
 * connections whose retry time has come; send on the connections with room, round robin,
 * as far as the rate limiter allows; then wait for responses. With one connection waiting
 * (always so when synchronous) it blocks in ldap_result; with several, in ppoll over their
 * sockets, then reads each readable connection a bounded number of times, sending a new
 * request for each finished one at once to keep the pipeline full. The wait ends by the
 * next send time, retry time, or 100 ms, so that run->stop is seen soon.
 *
 * Requests in flight are found by message id in a small open-addressing table per
 * connection (struct sr_slot), deleted by backward shift so no tombstones pile up.
 */
#include "tools/searchrate/worker.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tools/searchrate/pace.h"
#include "tools/searchrate/report.h"
#include "tools/searchrate/tally.h"
#include "tools/searchrate/util.h"

static struct sr_slot *slot_find(struct sr_conn *c, int msgid)
{
	for (unsigned i = (unsigned)msgid & c->mask; c->slots[i].msgid != -1; i = (i + 1) & c->mask)
		if (c->slots[i].msgid == msgid)
			return &c->slots[i];
	return NULL;
}

static void slot_insert(struct sr_conn *c, int msgid, uint64_t t0)
{
	unsigned i = (unsigned)msgid & c->mask;
	while (c->slots[i].msgid != -1)
		i = (i + 1) & c->mask;
	c->slots[i] = (struct sr_slot){msgid, t0, 0};
}

/* Deletion with backward shift, so no tombstones accumulate. */
static void slot_delete(struct sr_conn *c, struct sr_slot *s)
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

/* How far opening a connection came before it failed (for the first connection's message). */
enum conn_step {
	STEP_TLS_SETUP,
	STEP_CONNECT,
	STEP_STARTTLS,
	STEP_BIND,
};

/*
 * Sets ld's TLS options and makes its own TLS context from them (LDAP_OPT_X_TLS_NEWCTX).
 * They go on the handle, never on libldap's global defaults, which threads reconnecting at
 * the same time would share. Only the libldap API: it may sit on GnuTLS or OpenSSL.
 */
static int conn_tls_setup(const struct sr_config *cfg, LDAP *ld)
{
	int require = cfg->trust_all ? LDAP_OPT_X_TLS_NEVER : LDAP_OPT_X_TLS_DEMAND;
	int is_server = 0;
	if (ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &require) != LDAP_OPT_SUCCESS)
		return LDAP_LOCAL_ERROR;
	if (cfg->truststore &&
	    ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTFILE, cfg->truststore) != LDAP_OPT_SUCCESS)
		return LDAP_LOCAL_ERROR;
	if (ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &is_server) != LDAP_OPT_SUCCESS)
		return LDAP_LOCAL_ERROR;
	return LDAP_SUCCESS;
}

/*
 * Connects ld (with --useSSL, the TLS handshake is part of it), then as configured runs
 * StartTLS and binds, each step separately so that a failure names its step in *step.
 */
static int conn_establish(const struct sr_config *cfg, LDAP *ld, enum conn_step *step)
{
	int rc = LDAP_SUCCESS;
	if (cfg->use_ssl || cfg->use_starttls) {
		*step = STEP_TLS_SETUP;
		rc = conn_tls_setup(cfg, ld);
	}
	if (rc == LDAP_SUCCESS) {
		*step = STEP_CONNECT;
		rc = ldap_connect(ld);
	}
	if (rc == LDAP_SUCCESS && cfg->use_starttls) {
		*step = STEP_STARTTLS;
		rc = ldap_start_tls_s(ld, NULL, NULL);
	}
	if (rc == LDAP_SUCCESS && cfg->binddn) {
		*step = STEP_BIND;
		struct berval cred = {strlen(cfg->bindpw), (char *)cfg->bindpw};
		rc = ldap_sasl_bind_s(ld, cfg->binddn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
	}
	return rc;
}

/* Opens, secures and binds one connection as configured; returns an LDAP result code. On
 * failure *step says which step failed and *diag may hold the server's or the TLS layer's
 * diagnostic message (ldap_memfree it). */
static int conn_open(const struct sr_config *cfg, struct sr_conn *c, char **diag,
                     enum conn_step *step)
{
	LDAP *ld = NULL;
	*diag = NULL;
	*step = STEP_CONNECT;
	int rc = ldap_initialize(&ld, cfg->uri);
	if (rc != LDAP_SUCCESS)
		return rc;
	int version = LDAP_VERSION3;
	struct timeval net_timeout = {5, 0}, op_timeout = {10, 0};
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version);
	ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &net_timeout);
	ldap_set_option(ld, LDAP_OPT_TIMEOUT, &op_timeout);
	rc = conn_establish(cfg, ld, step);
	if (rc == LDAP_SUCCESS && ldap_get_option(ld, LDAP_OPT_DESC, &c->fd) != LDAP_OPT_SUCCESS)
		rc = LDAP_LOCAL_ERROR;
	/* libldap reads each message with two read()s; a readahead layer over TCP (as libldap
	 * itself uses for UDP) reads whatever has arrived at once. ldap_result() checks the
	 * layer for buffered data before it polls, so the loop below stays correct. Under TLS
	 * the layer goes beneath it (the same provider level as TCP), and the TLS layer's
	 * LBER_SB_OPT_DATA_READY asks its own buffer, then the readahead one. */
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
	c->sent = 0;
	return LDAP_SUCCESS;
}

/* Unbinds and drops c; returns the requests it had in flight. */
static int sr_conn_drop(struct sr_worker *w, struct sr_conn *c)
{
	int dropped = c->outstanding;
	for (unsigned i = 0; i <= c->mask; i++)
		c->slots[i].msgid = -1;
	w->inflight -= c->outstanding;
	c->outstanding = 0;
	ldap_unbind_ext(c->ld, NULL, NULL);
	c->ld = NULL;
	c->sb = NULL;
	return dropped;
}

static int close_at_end(struct sr_thread *th, int i)
{
	struct sr_conn *c = &((struct sr_worker *)th)->conns[i];
	return c->ld ? sr_conn_drop((struct sr_worker *)th, c) : 0;
}

/*
 * The connection failed: each request in flight on it counts as an error with the connection's
 * result code (at least one error for the loss itself), and it is re-established next round.
 */
static void conn_lost(struct sr_worker *w, struct sr_conn *c, int rc)
{
	if (rc == LDAP_SUCCESS &&
	    (ldap_get_option(c->ld, LDAP_OPT_RESULT_CODE, &rc) != LDAP_OPT_SUCCESS ||
	     rc == LDAP_SUCCESS))
		rc = LDAP_SERVER_DOWN;
	tally_error(&w->tally, rc, c->outstanding > 0 ? (uint64_t)c->outstanding : 1);
	sr_conn_drop(w, c);
	c->retry_at = now_ns();
	c->backoff_ns = 0;
}

static void conn_retry(struct sr_worker *w, struct sr_conn *c, uint64_t now)
{
	char *diag;
	enum conn_step step;
	int rc = conn_open(&w->run->cfg, c, &diag, &step);
	ldap_memfree(diag);
	if (rc == LDAP_SUCCESS) {
		tally_reconnect(&w->tally);
		return;
	}
	tally_error(&w->tally, rc, 1);
	c->retry_at = backoff_next(&c->backoff_ns, now);
}

static bool conn_level_error(int rc)
{
	return rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR || rc == LDAP_TIMEOUT ||
	       rc == LDAP_UNAVAILABLE;
}

/* With --iterationsBeforeReconnect N: c has sent its N searches; it sends no more and is
 * replaced once its responses are in. */
static bool conn_used_up(const struct sr_worker *w, const struct sr_conn *c)
{
	uint64_t every = w->run->cfg.reconnect_every;
	return every && c->sent >= every;
}

static void send_one(struct sr_worker *w, struct sr_conn *c)
{
	struct sr_config *cfg = &w->run->cfg;
	const char *base = pattern_expand(&cfg->base, &w->rng, w->basebuf);
	const char *filter = pattern_expand(&cfg->filter, &w->rng, w->filterbuf);
	struct timeval tl = {cfg->timelimit, 0};
	int msgid;
	uint64_t t0 = now_ns();
	c->sent++;
	int rc = ldap_search_ext(c->ld, base, cfg->scope, filter, cfg->attrs, 0, NULL, NULL,
	                         cfg->timelimit > 0 ? &tl : NULL, cfg->sizelimit, &msgid);
	if (rc == LDAP_SUCCESS) {
		slot_insert(c, msgid, t0);
		c->outstanding++;
		w->inflight++;
	} else if (conn_level_error(rc)) {
		c->outstanding++; /* the request that failed is lost with the connection */
		w->inflight++;
		conn_lost(w, c, rc);
	} else {
		tally_error(&w->tally, rc, 1);
	}
}

/* A SearchResultDone for the request in slot s: the search is complete. */
static void finish_search(struct sr_worker *w, struct sr_conn *c, struct sr_slot *s,
                          LDAPMessage *msg)
{
	uint64_t t1 = now_ns();
	int err = LDAP_SUCCESS;
	int prc = ldap_parse_result(c->ld, msg, &err, NULL, NULL, NULL, NULL, 0);
	if (prc != LDAP_SUCCESS)
		err = prc;
	tally_search(&w->tally, err, s->entries, t1 - s->t0);
	slot_delete(c, s);
	c->outstanding--;
	w->inflight--;
}

/* Handles one message from ldap_result; frees it. */
static void handle_msg(struct sr_worker *w, struct sr_conn *c, LDAPMessage *msg, int type)
{
	int msgid = ldap_msgid(msg);
	struct sr_slot *s;
	if (type == LDAP_RES_SEARCH_ENTRY && (s = slot_find(c, msgid))) {
		s->entries++;
	} else if (type == LDAP_RES_SEARCH_RESULT && (s = slot_find(c, msgid))) {
		finish_search(w, c, s, msg);
	} else if (type == LDAP_RES_EXTENDED && msgid == 0) {
		/* unsolicited: notice of disconnection */
		ldap_msgfree(msg);
		conn_lost(w, c, LDAP_SERVER_DOWN);
		return;
	} /* else search references and anything unexpected */
	ldap_msgfree(msg);
}

/* Waits up to tv for one message on c and handles it: 1 handled, 0 timed out, -1 connection lost */
static int pump(struct sr_worker *w, struct sr_conn *c, struct timeval tv)
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
static int fill(struct sr_worker *w, struct sr_conn *c, uint64_t *wake, bool *rate_blocked)
{
	int sent = 0;
	while (c->ld && c->outstanding < w->conn_max && w->inflight < w->thread_max &&
	       !conn_used_up(w, c)) {
		if (!pacer_take(&w->pacer, wake)) {
			*rate_blocked = true;
			break;
		}
		send_one(w, c);
		sent++;
	}
	return sent;
}

/*
 * Reconnects the connections that are down and due, and replaces those that are used up
 * (--iterationsBeforeReconnect) once their last response is in; lowers *wake to the next
 * retry time.
 */
static void reconnect_due(struct sr_worker *w, uint64_t *wake)
{
	uint64_t now = now_ns();
	for (int i = 0; i < w->nconns; i++) {
		struct sr_conn *c = &w->conns[i];
		if (c->ld && c->outstanding == 0 && conn_used_up(w, c)) {
			sr_conn_drop(w, c);
			c->retry_at = now;
			c->backoff_ns = 0;
		}
		if (c->ld)
			continue;
		if (now >= c->retry_at) {
			conn_retry(w, c, now);
			now = now_ns();
		}
		if (!c->ld && c->retry_at < *wake)
			*wake = c->retry_at;
	}
}

/* Sends on every connection with room, starting with the round-robin one. */
static void fill_all(struct sr_worker *w, uint64_t *wake, bool *rate_blocked)
{
	for (int k = 0; k < w->nconns && w->inflight < w->thread_max && !*rate_blocked; k++) {
		int idx = (w->rr + k) % w->nconns;
		if (fill(w, &w->conns[idx], wake, rate_blocked))
			w->rr = (idx + 1) % w->nconns;
	}
}

/* Sets w->pfd and w->pconn to the connections with requests in flight; returns how many. */
static int poll_set(struct sr_worker *w)
{
	int npoll = 0;
	for (int i = 0; i < w->nconns; i++) {
		if (w->conns[i].ld && w->conns[i].outstanding > 0) {
			w->pfd[npoll] = (struct pollfd){.fd = w->conns[i].fd, .events = POLLIN};
			w->pconn[npoll++] = &w->conns[i];
		}
	}
	return npoll;
}

/* Waits up to wait ns for any of npoll connections, then reads the ready ones. */
static void pump_many(struct sr_worker *w, int npoll, uint64_t wait, uint64_t *wake,
                      bool *rate_blocked)
{
	struct timespec ts = {(time_t)(wait / NS_PER_SEC), (long)(wait % NS_PER_SEC)};
	/* Messages the readahead layer already read never wake ppoll: such a
	 * connection counts as readable, and ppoll only looks at the others. */
	int buffered = 0;
	for (int i = 0; i < npoll; i++) {
		w->pconn_ready[i] =
		    w->pconn[i]->sb &&
		    ber_sockbuf_ctrl(w->pconn[i]->sb, LBER_SB_OPT_DATA_READY, NULL) > 0;
		buffered += w->pconn_ready[i];
	}
	if (buffered)
		ts = (struct timespec){0, 0};
	int n = ppoll(w->pfd, (nfds_t)npoll, &ts, NULL);
	for (int i = 0; (n > 0 || buffered) && i < npoll; i++) {
		if (!w->pfd[i].revents && !w->pconn_ready[i])
			continue;
		/* Read what has arrived (libldap then holds no whole message back),
		 * replacing each finished request at once to keep the pipeline
		 * full; bounded so the other connections get their turn. */
		struct sr_conn *c = w->pconn[i];
		for (int m = 0; m < 2 * w->conn_max && c->ld && c->outstanding > 0; m++) {
			if (pump(w, c, (struct timeval){0, 0}) <= 0)
				break;
			if (!*rate_blocked)
				fill(w, c, wake, rate_blocked);
		}
	}
}

/* One round of the loop: reconnect, send, wait for and read responses. */
static void worker_round(struct sr_thread *th)
{
	struct sr_worker *w = (struct sr_worker *)th;
	uint64_t wake = now_ns() + 100 * NS_PER_MS; /* at the latest: look at stop again */
	bool rate_blocked = false;
	reconnect_due(w, &wake);
	fill_all(w, &wake, &rate_blocked);
	int npoll = poll_set(w);
	uint64_t now = now_ns();
	uint64_t wait = wake > now ? wake - now : 0;
	if (npoll == 1) {
		/* One connection waiting (always so when synchronous): block in libldap. */
		struct timeval tv = {(time_t)(wait / NS_PER_SEC),
		                     (suseconds_t)(wait % NS_PER_SEC / 1000)};
		pump(w, w->pconn[0], tv);
	} else if (npoll > 1) {
		pump_many(w, npoll, wait, &wake, &rate_blocked);
	} else if (wait) {
		struct timespec ts = {(time_t)(wake / NS_PER_SEC), (long)(wake % NS_PER_SEC)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static const struct sr_thread_ops worker_ops = {worker_round, close_at_end};

static void worker_init(struct sr_run *run, struct sr_worker *w, int t, uint64_t seed)
{
	const struct sr_config *cfg = &run->cfg;
	unsigned table = sr_slot_table_size(cfg);
	w->run = w->th.run = run;
	w->th.ops = &worker_ops;
	w->th.pacer = &w->pacer;
	w->nconns = w->th.nconns = cfg->conns / cfg->threads + (t < cfg->conns % cfg->threads);
	w->conns = sr_xcalloc((size_t)w->nconns, sizeof(*w->conns));
	w->basebuf = sr_xcalloc(cfg->base.maxlen + 1, 1);
	w->filterbuf = sr_xcalloc(cfg->filter.maxlen + 1, 1);
	w->pfd = sr_xcalloc((size_t)w->nconns, sizeof(*w->pfd));
	w->pconn = sr_xcalloc((size_t)w->nconns, sizeof(*w->pconn));
	w->pconn_ready = sr_xcalloc((size_t)w->nconns, sizeof(*w->pconn_ready));
	for (int i = 0; i < w->nconns; i++) {
		struct sr_conn *c = &w->conns[i];
		c->mask = table - 1;
		c->slots = sr_xcalloc(table, sizeof(*c->slots));
		for (unsigned k = 0; k < table; k++)
			c->slots[k].msgid = -1;
	}
	w->thread_max = cfg->async ? INT_MAX : 1;
	w->conn_max = cfg->async ? cfg->max_outstanding : 1;
	w->rng = seed + (uint64_t)t * 0x632be59bd9b4e019ull;
	tally_init(&w->tally);
}

void workers_create(struct sr_run *run, uint64_t seed)
{
	run->workers = sr_xcalloc((size_t)run->cfg.threads, sizeof(*run->workers));
	for (int t = 0; t < run->cfg.threads; t++)
		worker_init(run, &run->workers[t], t, seed);
}

/*
 * After a failed TLS handshake that verified the server's certificate: does it succeed
 * without verifying? libldap over GnuTLS (Debian's) gives no reason for a rejected
 * certificate, only "(unknown error code)", and only the libldap API is used here; so the
 * first connection's message finds the reason by opening the same connection once more
 * with LDAP_OPT_X_TLS_NEVER (and no bind).
 */
static bool cert_rejected(const struct sr_config *cfg, enum conn_step step)
{
	bool handshake = (step == STEP_CONNECT && cfg->use_ssl) || step == STEP_STARTTLS;
	if (!handshake || cfg->trust_all)
		return false;
	struct sr_config probe = *cfg; /* a shallow copy: nothing in it is freed */
	probe.trust_all = true;
	probe.truststore = NULL;
	probe.binddn = NULL;
	struct sr_conn c = {0};
	char *diag;
	int rc = conn_open(&probe, &c, &diag, &step);
	ldap_memfree(diag);
	if (rc == LDAP_SUCCESS)
		ldap_unbind_ext(c.ld, NULL, NULL);
	return rc == LDAP_SUCCESS;
}

/* "searchrate: WHAT: RESULT (CODE): DIAGNOSTIC" for the first connection, which failed at step. */
static void report_first_failure(const struct sr_config *cfg, enum conn_step step, int rc,
                                 const char *diag)
{
	char what[800];
	if (step == STEP_TLS_SETUP && cfg->truststore)
		snprintf(what, sizeof(what), "cannot set up TLS with the CA certificates of %s",
		         cfg->truststore);
	else if (step == STEP_TLS_SETUP)
		snprintf(what, sizeof(what), "cannot set up TLS for %s", cfg->uri);
	else if (step == STEP_STARTTLS) /* the address without "ldap://" */
		snprintf(what, sizeof(what), "StartTLS on %s", cfg->uri + strlen("ldap://"));
	else if (step == STEP_BIND)
		snprintf(what, sizeof(what), "cannot bind to %s as %s", cfg->uri, cfg->binddn);
	else
		snprintf(what, sizeof(what), "cannot connect to %s", cfg->uri);
	report_open_failure(cfg, what, rc, diag, cert_rejected(cfg, step));
}

bool workers_connect(struct sr_run *run)
{
	const struct sr_config *cfg = &run->cfg;
	int connected = 0;
	for (int i = 0; i < cfg->conns; i++) {
		struct sr_worker *w = &run->workers[i % cfg->threads];
		struct sr_conn *c = &w->conns[i / cfg->threads];
		char *diag;
		enum conn_step step;
		int rc = conn_open(cfg, c, &diag, &step);
		if (rc == LDAP_SUCCESS) {
			connected++;
		} else if (!connected) {
			report_first_failure(cfg, step, rc, diag);
			ldap_memfree(diag);
			return false;
		} else {
			ldap_memfree(diag);
			tally_error(&w->tally, rc, 1);
			c->retry_at = now_ns() + 50 * NS_PER_MS;
		}
	}
	return true;
}

bool workers_start(struct sr_run *run)
{
	return sr_threads_start(run->workers, sizeof(*run->workers), run->cfg.threads);
}

int workers_join(struct sr_run *run)
{
	return sr_threads_join(run->workers, sizeof(*run->workers), run->cfg.threads);
}

void workers_collect(struct sr_run *run, struct stats *into, struct stats *scratch)
{
	for (int t = 0; t < run->cfg.threads; t++) {
		tally_take(&run->workers[t].tally, into, scratch);
	}
}

void workers_free(struct sr_run *run)
{
	for (int t = 0; run->workers && t < run->cfg.threads; t++) {
		struct sr_worker *w = &run->workers[t];
		for (int i = 0; w->conns && i < w->nconns; i++) {
			if (w->conns[i].ld)
				ldap_unbind_ext(w->conns[i].ld, NULL, NULL);
			free(w->conns[i].slots);
		}
		free(w->conns);
		free(w->basebuf);
		free(w->filterbuf);
		free(w->pfd);
		free(w->pconn);
		free(w->pconn_ready);
		tally_destroy(&w->tally);
	}
	free(run->workers);
	run->workers = NULL;
}

const struct sr_engine sr_engine_libldap = {
    "libldap",    workers_create,  workers_connect, workers_start,
    workers_join, workers_collect, workers_free,
};
