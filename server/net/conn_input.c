/*
 * A connection's input (conn.h): one recv into CI(c)->in (or TLS records through
 * conn_tls.c), framing it into requests, and handing each to the operations in
 * order (conn_dispatch_request, the one call up from net/ to ops/); Abandons act
 * at once, and what waits unfinished on the worker's connections is bounded
 * (max_input_bytes_per_worker). Called by the connection's life cycle (conn_life.c); it
 * calls conn_output.c, conn_tls.c and conn_wake.c below it.
 */
#include "server/net/conn.h"
#include "server/net/conn_impl.h"

#include <errno.h>
#include <ldap.h>
#include <string.h>

#include "protocol/frame.h"
#include "protocol/request.h"
#include "protocol/tlv.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/net/engine.h"
#include "server/net/sasl.h"

#define CONN_READ_CHUNK (16 * 1024)

/*
 * Hands a decoded request to the operations (server/ops/, through struct server's
 * dispatch: ops_dispatch). The one upward call of net/: net/ names nothing of ops/,
 * so a reader looking for where a request leaves the connection layer finds it here.
 */
static inline void conn_dispatch_request(struct conn *c, struct ldap_request *req)
{
	c->w->srv->dispatch(c, req);
}

/*
 * Keeps w's input_bytes, the request bytes buffered on the worker's connections, and
 * CI(c)->in_since, from when what c has pending waits (a closing connection counts none).
 */
void conn_account_input(struct conn *c)
{
	size_t now = CI(c)->closing ? 0 : buf_pending(&CI(c)->in);
	net_worker(c->w)->input_bytes += now - CI(c)->in_counted;
	CI(c)->in_counted = now;
	if (now == 0)
		CI(c)->in_since = 0;
	else if (CI(c)->in_since == 0)
		CI(c)->in_since = clock_seconds();
}

/* What w may buffer of unfinished requests: max_input_bytes_per_worker, at least
 * max_pdu_bytes (one whole request always fits). */
size_t conn_input_limit(const struct worker *w)
{
	const struct config *cfg = &w->srv->cfg;
	return cfg->max_input_bytes_per_worker > cfg->max_pdu_bytes
	           ? cfg->max_input_bytes_per_worker
	           : cfg->max_pdu_bytes;
}

/*
 * More than max_input_bytes_per_worker (at least max_pdu_bytes) is buffered on w's
 * connections: the ones whose input waits longest (of one second, the one holding most)
 * are disconnected until it is under, so that many clients sending requests they never
 * finish cannot grow the server. Those other than the connection at hand close on the
 * ready list, this round.
 */
void conn_shed_input(struct worker *w)
{
	struct net_worker *nw = net_worker(w);
	size_t limit = conn_input_limit(w);
	while (nw->input_bytes > limit) {
		struct conn_impl *vi = NULL;
		for (struct conn_impl *ci = nw->conns; ci; ci = ci->next)
			if (ci->in_counted && !ci->closing &&
			    (!vi || ci->in_since < vi->in_since ||
			     (ci->in_since == vi->in_since && ci->in_counted > vi->in_counted)))
				vi = ci;
		if (!vi)
			return;
		struct conn *v = &vi->pub;
		log_info("conn fd=%d from %s: %zu request bytes waiting for %lld s, and the worker "
		         "holds %zu (max_input_bytes_per_worker)",
		         v->fd, v->peer, vi->in_counted,
		         (long long)(clock_seconds() - vi->in_since), nw->input_bytes);
		STAT_ADD(w->stats.input_shed, 1);
		conn_disconnect(v, LDAP_UNAVAILABLE,
		                "too much unfinished input buffered on this worker");
		conn_account_input(v);
		conn_make_ready(v);
	}
}

/* True if the framed PDU p[0..len) is an AbandonRequest (tag after the message ID). */
static bool is_abandon(const unsigned char *p, size_t len)
{
	const unsigned char *q = p, *end = p + len, *v;
	size_t vlen;
	unsigned char tag;
	if (!tlv_read(&q, end, &tag, &v, &vlen)) /* the LDAPMessage */
		return false;
	q = v;
	end = v + vlen;
	return tlv_read(&q, end, &tag, &v, &vlen) && q < end && *q == LDAP_REQ_ABANDON;
}

/*
 * Acts on every complete AbandonRequest buffered from `from` on, removing it
 * from the input; the other requests keep their place and order.
 */
static void take_abandons(struct conn *c, unsigned char *from)
{
	unsigned char *end = CI(c)->in.data + CI(c)->in.len;
	size_t max = conn_max_pdu(c), len;
	while (from < end && frame_next(from, (size_t)(end - from), max, &len) == FRAME_OK) {
		if (!is_abandon(from, len)) {
			from += len;
			continue;
		}
		struct ldap_request req;
		const char *why;
		/* An abandon takes nothing from the arena (a running search may hold it, lent). */
		if (request_decode(from, len, &req, &c->w->req_mem, &c->w->scratch, &why) == 0)
			conn_dispatch_request(c, &req);
		memmove(from, from + len, (size_t)(end - from - len));
		CI(c)->in.len -= len;
		end -= len;
	}
}

/* Answers the complete requests in CI(c)->in, in order, until one must wait. */
void conn_process_input(struct conn *c)
{
	struct worker *w = c->w;
	while (!CI(c)->closing) {
		size_t len = 0;
		const unsigned char *p = CI(c)->in.data + CI(c)->in.off;
		enum frame_status fs =
		    frame_next(p, buf_pending(&CI(c)->in), conn_max_pdu(c), &len);
		if (fs == FRAME_NEED_MORE)
			break;
		if (fs == FRAME_TOO_BIG) {
			conn_disconnect(
			    c, LDAP_PROTOCOL_ERROR,
			    c->auth == AUTH_ANONYMOUS
			        ? "request larger than max_pdu_bytes_anonymous (bind first)"
			        : "request larger than max_pdu_bytes");
			return;
		}
		if (fs == FRAME_MALFORMED) {
			conn_disconnect(c, LDAP_PROTOCOL_ERROR, "malformed LDAPMessage");
			return;
		}
		/* A task is running or the socket is full: the requests wait their turn,
		 * but Abandons anywhere among them act now (they have no response). */
		if ((c->task || c->blocked) && !is_abandon(p, len)) {
			take_abandons(c, CI(c)->in.data + CI(c)->in.off + len);
			break;
		}
		struct ldap_request req;
		const char *why;
		arena_reset(&w->req_mem); /* the last request's filter is done with */
		if (request_decode(p, len, &req, &w->req_mem, &w->scratch, &why) < 0) {
			conn_disconnect(c, LDAP_PROTOCOL_ERROR, why);
			return;
		}
		/* Consumed first so the policy sees only the requests after this one; the
		 * bytes stay in place until the next read. */
		buf_consume(&CI(c)->in, len);
		CI(c)->in_since = 0; /* what follows waits from now on (conn_account_input) */
		__atomic_store_n(&CI(c)->last_request, clock_seconds(), __ATOMIC_RELAXED);
		c->op_start_ns =
		    net_worker(w)->round_ns; /* it waited since the worker woke to it */
		bool had_tls = c->tls != NULL;
		conn_dispatch_request(c, &req);
		if (CI(c)->tls_starting || (c->tls != NULL) != had_tls)
			break; /* what follows the StartTLS request is a TLS handshake */
	}
	/* batch: responses held back for the requests that followed go out now. */
	/* Also before a close (Unbind): what is answered goes out first. */
	if (!c->task && buf_pending(&CI(c)->out) > 0 && !c->blocked)
		conn_flush(c, 0);
}

/* One recv into the input buffer. Returns bytes read, -2 when none were there yet, 0 at
 * EOF, -1 to close. */
ssize_t conn_read_some(struct conn *c)
{
	bool layer = CI(c)->sasl && conn_sasl_layer(c);
	if (c->tls) {
		bool send;
		ssize_t n = conn_tls_read(c, &send);
		if (send && conn_flush(c, 0) < 0)
			return -1;
		return layer ? conn_sasl_unwrap(c, n) : n;
	}
	size_t max = conn_max_pdu(c);
	size_t want = CONN_READ_CHUNK;
	size_t pending = buf_pending(&CI(c)->in);
	/* A PDU larger than the chunk needs room for the rest of it (bounded by max_pdu), but
	 * the buffer grows with what arrives, at most doubling a read: a client that declares
	 * a large PDU and sends little of it holds little. */
	size_t need;
	if (pending >= 6 && /* before: in.data is NULL until the first read */
	    frame_next(CI(c)->in.data + CI(c)->in.off, pending, max, &need) == FRAME_NEED_MORE &&
	    CI(c)->in.data[CI(c)->in.off + 1] & 0x80) {
		size_t nlen = CI(c)->in.data[CI(c)->in.off + 1] & 0x7f, body = 0;
		for (size_t i = 0; i < nlen && i < 4; i++)
			body = (body << 8) | CI(c)->in.data[CI(c)->in.off + 2 + i];
		if (2 + nlen + body > pending + want)
			want = 2 + nlen + body - pending;
		if (want > pending && want > CONN_READ_CHUNK)
			want = pending > CONN_READ_CHUNK ? pending : CONN_READ_CHUNK;
	}
	if (CI(c)->in.off > 0 && CI(c)->in.cap - CI(c)->in.len < want)
		buf_compact(&CI(c)->in);
	if (buf_reserve(&CI(c)->in, want) < 0)
		return -1;
	size_t room = CI(c)->in.cap - CI(c)->in.len;
	ssize_t n = engine_recv(c->w, c->fd, CI(c)->in.data + CI(c)->in.len, room);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? (ssize_t)-2 : -1;
	CI(c)->in.len += (size_t)n;
	return layer ? conn_sasl_unwrap(c, n) : n;
}

bool conn_more_requests(const struct conn *c)
{
	size_t len;
	const unsigned char *p = CI(c)->in.data + CI(c)->in.off;
	return frame_next(p, buf_pending(&CI(c)->in), conn_max_pdu(c), &len) == FRAME_OK;
}
