/*
 * The TLS half of a connection's I/O (conn.h): a session begun at accept
 * (ldaps://) or after StartTLS, ciphertext in through tls_input, plaintext out
 * as records through tls_output, close_notify at the end. The socket calls are
 * the connection's own, so the send policy's flags apply to the ciphertext.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "protocol/buf.h"
#include "server/access_log.h"
#include "server/clock.h"
#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/engine.h"
#include "server/log.h"
#include "server/net/tls_session.h"

#define CONN_TLS_READ_CHUNK (16 * 1024)

static ssize_t tls_received(struct conn *c, const void *in, size_t len, bool *send);

/* Gives c a TLS session (ldaps:// at accept, or StartTLS). Returns 0 or -1. */
int conn_tls_begin(struct conn *c)
{
	struct worker *w = c->w;
	if (!w->srv->tls || !(c->tls = tls_session_new(w->srv->tls, c->fd)))
		return -1;
	CI(c)->tls_since = clock_seconds();
	STAT_ADD(w->stats.tls.connections, 1);
	return 0;
}

/* TLS begins, the bytes already in CI(c)->in (read before the session existed) its first
 * ciphertext. Returns 0, or -1 (c is closing). */
static int begin_with_input(struct conn *c, bool *send)
{
	*send = false;
	if (conn_tls_begin(c) < 0) {
		CI(c)->closing = true;
		return -1;
	}
	if (buf_pending(&CI(c)->in) > 0) {
		/* Read before TLS began: a client that did not wait for StartTLS's answer, or
		 * the ClientHello behind a PROXY header. */
		struct buf early = CI(c)->in;
		memset(&CI(c)->in, 0, sizeof(CI(c)->in));
		ssize_t got = tls_received(c, early.data + early.off, buf_pending(&early), send);
		buf_free(&early);
		if (got == 0 || got == -1) {
			CI(c)->closing = true;
			return -1;
		}
	}
	return 0;
}

/* StartTLS: its answer is out, TLS begins. Returns 0, or -1 (c is closing). */
int conn_tls_switch(struct conn *c, bool *send)
{
	CI(c)->tls_starting = false;
	if (begin_with_input(c, send) < 0)
		return -1;
	STAT_ADD(c->w->stats.tls.starttls, 1);
	return 0;
}

/* pldaps://: the PROXY header is consumed, the ClientHello may follow it in CI(c)->in. */
int conn_tls_after_proxy(struct conn *c, bool *send)
{
	return begin_with_input(c, send);
}

/*
 * With TLS: the plaintext waiting in out becomes records in tls_out, once what
 * tls_out held has gone (so ciphertext waiting for a slow client stays one flush
 * deep) but for less than a segment (what batch holds back to end its sends on a
 * segment boundary: conn_output.c, whole_segments), with whatever the session has to
 * send itself (handshake, alerts).
 */
int conn_tls_encrypt(struct conn *c, bool more, size_t held)
{
	size_t waiting = buf_pending(&CI(c)->tls_out);
	if (waiting > 0 && waiting >= CI(c)->mss)
		return 0;
	if (waiting == 0)
		CI(c)->tls_out.off = CI(c)->tls_out.len = 0;
	size_t plain = buf_pending(&CI(c)->out) - held; /* held: a SASL layer's to wrap */
	/* More of the response follows (MSG_MORE): only whole 16 KiB records now, the rest
	 * joins what comes next, so a gathered response is full records and one short one. */
	if (more)
		plain -= plain % TLS_RECORD_PLAIN;
	unsigned records;
	if (tls_output(c->tls, CI(c)->out.data ? CI(c)->out.data + CI(c)->out.off : NULL, plain,
	               &CI(c)->tls_out, &records) < 0) {
		log_info("conn fd=%d from %s: TLS: %s; closing", c->fd, c->peer, tls_why(c->tls));
		CI(c)->closing = true;
		return -1;
	}
	STAT_ADD(CI(c)->stats->tls_records, records);
	buf_consume(&CI(c)->out, plain);
	CI(c)->out_sent += plain; /* accounting counts plaintext (conn_output_queued) */
	return 0;
}

/*
 * Ciphertext the client sent (in[0..len)): the handshake advances and plaintext
 * joins CI(c)->in. *send is set when what the session has to say (the handshake's
 * answer) must go now: the caller sends it (conn_flush), so that this file never
 * calls back into conn_output.c. Returns the plaintext bytes added, -2 when none
 * yet, 0 when the client closed TLS (close_notify), -1 to close (*send false).
 */
static ssize_t tls_received(struct conn *c, const void *in, size_t len, bool *send)
{
	*send = false;
	struct worker_stats *st = &c->w->stats;
	bool was_done = tls_handshake_done(c->tls);
	size_t before = CI(c)->in.len;
	if (CI(c)->in.off > 0 && CI(c)->in.off == CI(c)->in.len)
		CI(c)->in.off = CI(c)->in.len = before =
		    0; /* all consumed: start at the front again */
	enum tls_status s = tls_input(c->tls, in, len, &CI(c)->in);
	if (s == TLS_FAILED) {
		if (!was_done)
			STAT_ADD(st->tls.failures, 1);
		log_info("conn fd=%d from %s: TLS %s; closing", c->fd, c->peer, tls_why(c->tls));
		return -1;
	}
	if (!was_done && tls_handshake_done(c->tls)) {
		char what[128];
		tls_describe(c->tls, what, sizeof(what));
		STAT_ADD(st->tls.handshakes, 1);
		if ((CI(c)->ktls = tls_kernel_send(c->tls)))
			STAT_ADD(st->tls.ktls, 1); /* conn_flush sends plaintext from now on */
		if (tls_resumed(c->tls))
			STAT_ADD(st->tls.resumed, 1);
		conn_log_release(c);
		access_log_add(c->w, "conn=%llu TLS %s%s", (unsigned long long)c->id, what,
		               tls_resumed(c->tls) ? " resumed" : "");
		log_debug("conn fd=%d from %s: TLS established: %s%s%s", c->fd, c->peer, what,
		          tls_resumed(c->tls) ? " (resumed)" : "",
		          CI(c)->ktls ? " (kernel TLS)" : "");
	}
	/* The handshake's answer goes now. TLS 1.3 session tickets, which the server writes when
	 * the handshake ends, can wait: they leave with the first response, one send fewer. */
	bool tickets_only = !was_done && tls_handshake_done(c->tls) && tls_is_13(c->tls);
	*send = !tickets_only;
	if (s == TLS_CLOSED)
		return 0;
	return CI(c)->in.len > before ? (ssize_t)(CI(c)->in.len - before) : -2;
}

/* One recv of ciphertext into the worker's buffer, then tls_received. */
ssize_t conn_tls_read(struct conn *c, bool *send)
{
	*send = false;
	struct buf *raw = &net_worker(c->w)->tls_in;
	if (buf_reserve(raw, CONN_TLS_READ_CHUNK) < 0)
		return -1;
	ssize_t n = engine_recv(c->w, c->fd, raw->data, raw->cap);
	if (n <= 0)
		return n == 0 ? 0 : errno == EAGAIN || errno == EWOULDBLOCK ? (ssize_t)-2 : -1;
	return tls_received(c, raw->data, (size_t)n, send);
}

void conn_tls_end(struct conn *c)
{
	if (c->tls && !c->blocked) {
		/* close_notify, best effort: one send that may not wait. */
		unsigned records;
		CI(c)->tls_out.off = CI(c)->tls_out.len = 0;
		tls_session_shutdown(c->tls);
		if (tls_output(c->tls, NULL, 0, &CI(c)->tls_out, &records) == 0 &&
		    CI(c)->tls_out.len) {
			STAT_ADD(CI(c)->stats->send_calls, 1);
			if (engine_send(c->w, c->fd, CI(c)->tls_out.data, CI(c)->tls_out.len,
			                MSG_DONTWAIT) < 0)
				log_debug("conn fd=%d: close_notify: %s", c->fd, strerror(errno));
		}
	}
	tls_session_free(c->tls);
	c->tls = NULL;
	CI(c)->ktls = false;
	buf_free(&CI(c)->tls_out);
}
