/*
 * A connection's output (conn.h): CI(c)->out sent through the socket, whole or to a
 * segment boundary (conn_flush), with TLS as records (conn_tls.c's encryption);
 * the events the connection waits for (EPOLLOUT while the socket is full); and the
 * last word to a client that is disconnected. Called by the send policies, the
 * input side and the connection's life cycle (conn_life.c); it calls only conn_tls.c and
 * the engine below it.
 */
#include "server/net/conn.h"
#include "server/net/conn_impl.h"

#include <errno.h>
#include <ldap.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "protocol/response.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/net/engine.h"
#include "server/net/sasl.h"
#include "server/net/policy.h"

static void set_events(struct conn *c, uint32_t events)
{
	if (CI(c)->events == events)
		return;
	engine_watch(c->w, c->fd, c, events);
	CI(c)->events = events;
}

/* Which events c waits for now: output room when blocked, else input while it may read. */
void conn_update_events(struct conn *c)
{
	uint32_t ev = 0;
	if (c->blocked)
		ev |= EPOLLOUT;
	if (!CI(c)->closing && conn_may_read(c))
		ev |= EPOLLIN;
	set_events(c, ev);
}

/*
 * Sends what waits in b but its last `hold` bytes with flags, until they are
 * sent or the socket is full (then c->blocked). Returns 0, or -1 when the
 * connection failed (marked closing).
 */
static int send_pending(struct conn *c, struct buf *b, size_t hold, int flags, bool *sent_any)
{
	struct send_stats *st = CI(c)->stats;
	while (buf_pending(b) > hold && !c->blocked) {
		size_t want = buf_pending(b) - hold;
		ssize_t n =
		    engine_send_buf(c->w, c->fd, b, want, flags); /* consumes what it took */
		STAT_ADD(st->send_calls, 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				STAT_ADD(st->eagain, 1);
				c->blocked = true;
				break;
			}
			log_debug("conn fd=%d: send: %s", c->fd, strerror(errno));
			CI(c)->closing = true;
			buf_consume(b, want);
			return -1;
		}
		STAT_ADD(st->bytes, (uint64_t)n);
		*sent_any = true;
		if ((size_t)n < want) {
			/* The socket buffer is full: another send now would only see EAGAIN. */
			STAT_ADD(st->partial, 1);
			c->blocked = true;
		}
	}
	return 0;
}

/*
 * Of `pending` bytes waiting for the socket (out, or tls_out's ciphertext) to go
 * with MSG_MORE, the bytes that end on a segment boundary; the rest is better
 * held back. A short tail left in the kernel does not wait for the bytes that
 * follow: with TCP_NODELAY the next ACK pushes it as a short segment. Segments count from where the
 * kernel was last told to send everything; when it could not (window or send buffer full), it keeps
 * the tail and appends to it, so the count still holds. The MSS is read once, on the first such
 * send: 1-entry lookups never pay for it.
 */
static size_t whole_segments(struct conn *c, size_t pending)
{
	if (CI(c)->mss == 0) {
		int mss = 0;
		socklen_t len = sizeof(mss);
		if (getsockopt(c->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) < 0 || mss <= 0)
			mss = 1; /* not known: hold nothing back */
		CI(c)->mss = (unsigned)mss;
	}
	uint64_t end = CI(c)->wire_sent + pending;
	uint64_t boundary = end - (end - CI(c)->segs_from) % CI(c)->mss;
	return boundary > CI(c)->wire_sent ? (size_t)(boundary - CI(c)->wire_sent) : 0;
}

int conn_flush(struct conn *c, int flags)
{
	bool was_blocked = CI(c)->blocked_since != 0, sent_any = false;
	bool records = c->tls && !CI(c)->ktls; /* ciphertext of out goes through tls_out */
	bool whole =
	    (flags & MSG_MORE) && CI(c)->policy->whole_segments && !c->local && !CI(c)->ktls;
	CI(c)->out_more = flags & MSG_MORE;
	/* A SASL security layer: the responses become its buffers first (conn_sasl.c). */
	if (CI(c)->sasl && conn_sasl_layer(c) && conn_sasl_wrap(c, flags & MSG_MORE) < 0)
		return -1;
	size_t out_before = buf_pending(&CI(c)->out);
	for (;;) {
		size_t held = CI(c)->sasl ? conn_sasl_held(c) : 0;
		if (records && conn_tls_encrypt(c, flags & MSG_MORE, held) < 0)
			return -1;
		struct buf *wire = records ? &CI(c)->tls_out : &CI(c)->out;
		size_t before = buf_pending(wire);
		if (before == 0 || c->blocked)
			break;
		size_t hold = whole ? before - whole_segments(c, before) : 0;
		if (!records && hold < held)
			hold = held;
		if (hold == before)
			break; /* less than a segment: it waits for what follows */
		if (send_pending(c, wire, hold, flags, &sent_any) < 0)
			return -1;
		size_t took = before - buf_pending(wire);
		CI(c)->wire_sent += took;
		if (!records) {
			CI(c)->out_sent += took;
			break;
		}
		if (buf_pending(&CI(c)->out) == 0)
			break;
	}
	if (CI(c)->sasl)
		conn_sasl_sent(c, out_before - buf_pending(&CI(c)->out));
	size_t waiting = buf_pending(&CI(c)->out) + buf_pending(&CI(c)->tls_out);
	if (c->blocked) {
		if (!was_blocked || sent_any)
			CI(c)->blocked_since = clock_seconds();
		/* A client that reads may be sent an entry of any size import accepts: the
		 * limit counts what waits beyond the largest PDU queued. */
		if (waiting > server_max_pending_bytes(c->w->srv) + CI(c)->out_pdu_max) {
			log_info("conn fd=%d from %s: %zu bytes waiting for a client that does not "
			         "read (max_pending_bytes); closing",
			         c->fd, c->peer, waiting);
			CI(c)->closing = true;
			return -1;
		}
		conn_update_events(c);
		return 1;
	}
	CI(c)->blocked_since = 0;
	CI(c)->outq_last = 0;
	if (waiting == 0)
		CI(c)->out_pdu_max = 0;
	if (!(flags & MSG_MORE))
		CI(c)->segs_from = CI(c)->wire_sent;
	/* idle_timeout counts from the end of the last answer */
	__atomic_store_n(&CI(c)->last_request, clock_seconds(), __ATOMIC_RELAXED);
	if (CI(c)->tls_starting && waiting == 0)
		return conn_switch_to_tls(c);
	return 0;
}

/* StartTLS's answer is out: TLS begins, and the handshake's answer to bytes already
 * read goes at once. Returns 0, or -1 (c is closing). */
int conn_switch_to_tls(struct conn *c)
{
	bool send;
	int rc = conn_tls_switch(c, &send);
	if (send && conn_flush(c, 0) < 0) {
		CI(c)->closing = true;
		return -1;
	}
	return rc;
}

void conn_output_queued(struct conn *c, bool last)
{
	uint64_t queued = CI(c)->out_sent + buf_pending(&CI(c)->out);
	if (queued - CI(c)->out_queued > CI(c)->out_pdu_max)
		CI(c)->out_pdu_max = (size_t)(queued - CI(c)->out_queued);
	CI(c)->out_queued = queued;
	STAT_ADD(CI(c)->stats->pdus, 1);
	if (last) {
		STAT_ADD(CI(c)->stats->responses, 1);
		if (c->op_start_ns) {
			stat_latency(&c->w->stats, clock_ns() - c->op_start_ns);
			c->op_start_ns = 0;
		}
		if (CI(c)->op_kind) {
			STAT_ADD(c->w->stats.ops_done[CI(c)->op_kind - 1], 1);
			STAT_ADD(CI(c)->ops_answered, 1);
			CI(c)->op_kind = 0;
		}
	}
}

/* Tells the client why it is being disconnected (RFC 4511 4.4.1), then closes. */
void conn_disconnect(struct conn *c, int rc, const char *why)
{
	log_info("conn fd=%d from %s: %s; disconnecting", c->fd, c->peer, why);
	response_result(&CI(c)->out, 0, LDAP_RES_EXTENDED, rc, NULL, why,
	                RESPONSE_NOTICE_OF_DISCONNECTION);
	STAT_ADD(CI(c)->stats->pdus, 1);
	c->blocked = false;
	conn_flush(c, 0);
	CI(c)->closing = true;
	CI(c)->close_why = why; /* a static string, as every caller gives */
}
