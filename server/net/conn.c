/*
 * Connections: reading and framing requests, answering them in order, and
 * sending through the send policy.
 *
 * The socket is read, written and watched through the worker's engine
 * (engine.h: epoll or io_uring), level-triggered. A read that fills less than
 * the free buffer space means the socket was drained, so a request costs one
 * recv and (with most policies) one send: no extra recv to see EAGAIN, and no
 * change of the watched events unless the socket fills up.
 */
#include "server/net/conn.h"

#include <errno.h>
#include <malloc.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol/frame.h"
#include "protocol/request.h"
#include "protocol/response.h"
#include "protocol/tlv.h"
#include "server/access_log.h"
#include "server/clock.h"
#include "server/dlist.h"
#include "server/net/engine.h"
#include "server/log.h"
#include "server/net/tls.h"
#include "server/net/worker.h"

#define CONN_READ_CHUNK (16 * 1024)
/* What a TLS session is taken to give back to malloc when its connection closes. */
#define CONN_TLS_SESSION_BYTES (16 * 1024)

static void set_events(struct conn *c, uint32_t events)
{
	if (c->events == events)
		return;
	engine_watch(c->w, c->fd, c, events);
	c->events = events;
}

static void disconnect(struct conn *c, int rc, const char *why);

/* The largest request c may send: smaller until it binds (slapd's sockbuf_max_incoming). */
static size_t max_pdu(const struct conn *c)
{
	const struct config *cfg = &c->w->srv->cfg;
	if (c->auth == AUTH_ANONYMOUS && cfg->max_pdu_bytes_anonymous < cfg->max_pdu_bytes)
		return cfg->max_pdu_bytes_anonymous;
	return cfg->max_pdu_bytes;
}

/*
 * Keeps w->input_bytes, the request bytes buffered on the worker's connections, and
 * c->in_since, from when what c has pending waits (a closing connection counts none).
 */
static void account_input(struct conn *c)
{
	size_t now = c->closing ? 0 : buf_pending(&c->in);
	c->w->input_bytes += now - c->in_counted;
	c->in_counted = now;
	if (now == 0)
		c->in_since = 0;
	else if (c->in_since == 0)
		c->in_since = clock_seconds();
}

/* What w may buffer of unfinished requests: max_input_bytes_per_worker, at least
 * max_pdu_bytes (one whole request always fits). */
static size_t input_limit(const struct worker *w)
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
static void shed_input(struct worker *w)
{
	size_t limit = input_limit(w);
	while (w->input_bytes > limit) {
		struct conn *v = NULL;
		for (struct conn *c = w->conns; c; c = c->next)
			if (c->in_counted && !c->closing &&
			    (!v || c->in_since < v->in_since ||
			     (c->in_since == v->in_since && c->in_counted > v->in_counted)))
				v = c;
		if (!v)
			return;
		log_info("conn fd=%d from %s: %zu request bytes waiting for %lld s, and the worker "
		         "holds %zu (max_input_bytes_per_worker)",
		         v->fd, v->peer, v->in_counted, (long long)(clock_seconds() - v->in_since),
		         w->input_bytes);
		STAT_ADD(w->stats.input_shed, 1);
		disconnect(v, LDAP_UNAVAILABLE,
		           "too much unfinished input buffered on this worker");
		account_input(v);
		conn_make_ready(v);
	}
}

/*
 * Whether to read more input now. While a task runs or the socket is full,
 * requests wait in the buffer (only an Abandon is acted on early), so reading
 * stops once a full PDU's worth is waiting: memory stays bounded however much
 * a client sends.
 */
static bool may_read(const struct conn *c)
{
	return (!c->task && !c->blocked) || buf_pending(&c->in) < max_pdu(c);
}

/* Which events c waits for now: output room when blocked, else input while it may read. */
static void update_events(struct conn *c)
{
	uint32_t ev = 0;
	if (c->blocked)
		ev |= EPOLLOUT;
	if (!c->closing && may_read(c))
		ev |= EPOLLIN;
	set_events(c, ev);
}

/* Who is at the other end: "HOST:PORT", or for ldapi:// the peer's uid and gid (c->local). */
static void identify_peer(struct conn *c)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (c->local) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
			c->peer_uid = cred.uid;
			c->peer_gid = cred.gid;
			c->peer_cred = true;
			snprintf(c->peer, sizeof(c->peer), "ldapi uid=%u gid=%u",
			         (unsigned)cred.uid, (unsigned)cred.gid);
		} else {
			snprintf(c->peer, sizeof(c->peer), "ldapi");
		}
		return;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
		char host[48] = "?", port[8] = "?";
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
		            NI_NUMERICHOST | NI_NUMERICSERV);
		snprintf(c->peer, sizeof(c->peer), "%s:%s", host, port);
	}
}

int conn_accept(struct worker *w, int fd, enum listen_scheme scheme)
{
	struct conn *c = slab_get(&w->conn_slab);
	if (!c) {
		close(fd);
		return -1;
	}
	c->fd = fd;
	c->w = w;
	c->last_request = clock_seconds();
	c->local = scheme == LISTEN_LDAPI;
	/* TCP options mean nothing on a Unix socket: ldapi:// gathers responses (batch). */
	c->policy = c->local ? w->srv->local_policy : server_policy(w->srv);
	c->stats = &w->stats.send[c->policy->id];
	identify_peer(c);
	if ((!c->local && c->policy->accept && c->policy->accept(c) < 0) ||
	    (scheme == LISTEN_LDAPS && conn_tls_begin(c) < 0)) {
		tls_session_free(c->tls);
		close(fd);
		slab_put(&w->conn_slab, c);
		return -1;
	}
	if (engine_add(w, fd, c, EPOLLIN) < 0) {
		log_error("%s: adding a connection: %s", w->engine->name, strerror(errno));
		close(fd);
		slab_put(&w->conn_slab, c);
		return -1;
	}
	c->events = EPOLLIN;
	DLIST_PUSH(w->conns, c);
	STAT_ADD(w->stats.connections_total, 1);
	STAT_ADD(w->stats.connections_by_policy[c->policy->id], 1);
	STAT_ADD(w->stats.connections_current, 1);
	log_debug("conn fd=%d from %s accepted by worker %d%s", fd, c->peer, w->id,
	          scheme == LISTEN_LDAPS ? " (ldaps)" : "");
	c->id = __atomic_add_fetch(&w->srv->next_conn_id, 1, __ATOMIC_RELAXED);
	static const char *const via[] = {
	    [LISTEN_LDAP] = "ldap", [LISTEN_LDAPS] = "ldaps", [LISTEN_LDAPI] = "ldapi"};
	access_log_add(w, "conn=%llu fd=%d ACCEPT from=%s via=%s", (unsigned long long)c->id, fd,
	               c->peer, via[scheme]);
	return 0;
}

void conn_start_tls(struct conn *c)
{
	c->tls_starting = true;
	if (!c->blocked && buf_pending(&c->out) == 0 && buf_pending(&c->tls_out) == 0)
		conn_tls_switch(c); /* the answer went out already (its policy flushed it) */
}

bool conn_tls_active(const struct conn *c)
{
	return c->tls || c->tls_starting;
}

void conn_task_drop(struct conn_task **slot)
{
	struct conn_task *t = *slot;
	*slot = NULL;
	if (t)
		t->free(t);
}

bool conn_task_cancel(struct conn *c, int32_t msgid)
{
	struct conn_task **slots[] = {&c->task, &c->parked};
	for (size_t i = 0; i < 2; i++)
		if (*slots[i] && (*slots[i])->msgid == msgid) {
			conn_task_drop(slots[i]);
			return true;
		}
	return false;
}

void conn_close(struct conn *c, const char *why)
{
	struct worker *w = c->w;
	log_debug("conn fd=%d from %s closed: %s", c->fd, c->peer, why);
	access_log_add(w, "conn=%llu CLOSE reason=\"%s\" ops=%u", (unsigned long long)c->id, why,
	               c->nops);
	conn_task_drop(&c->task);
	conn_task_drop(&c->parked);
	if (c->in_ready) {
		for (struct conn **p = &w->ready; *p; p = &(*p)->ready_next)
			if (*p == c) {
				*p = c->ready_next;
				break;
			}
	}
	DLIST_UNLINK(w->conns, c);
	w->input_bytes -= c->in_counted;
	/* What goes back to malloc, for the sweep's malloc_trim: the buffers, and an estimate of
	 * a TLS session (OpenSSL's state: 8-15 KB idle, about 50 KB in a handshake; bench/idle.sh).
	 */
	w->trim_bytes += c->in.cap + c->out.cap + c->tls_out.cap + c->op_text.cap +
	                 (c->tls ? CONN_TLS_SESSION_BYTES : 0);
	conn_tls_end(c);
	engine_close(w, c->fd);
	worker_fd_freed(w);
	buf_free(&c->in);
	buf_free(&c->out);
	conn_clear_identity(c);
	buf_free(&c->op_text);
	STAT_ADD(w->stats.connections_current, (uint64_t)-1);
	slab_put(&w->conn_slab, c);
}

/*
 * Sends what waits in b but its last `hold` bytes with flags, until they are
 * sent or the socket is full (then c->blocked). Returns 0, or -1 when the
 * connection failed (marked closing).
 */
static int send_pending(struct conn *c, struct buf *b, size_t hold, int flags, bool *sent_any)
{
	struct send_stats *st = c->stats;
	while (buf_pending(b) > hold && !c->blocked) {
		size_t want = buf_pending(b) - hold;
		ssize_t n = engine_send(c->w, c->fd, b->data + b->off, want, flags);
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
			c->closing = true;
			buf_consume(b, want);
			return -1;
		}
		STAT_ADD(st->bytes, (uint64_t)n);
		*sent_any = true;
		buf_consume(b, (size_t)n);
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
	if (c->mss == 0) {
		int mss = 0;
		socklen_t len = sizeof(mss);
		if (getsockopt(c->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) < 0 || mss <= 0)
			mss = 1; /* not known: hold nothing back */
		c->mss = (unsigned)mss;
	}
	uint64_t end = c->wire_sent + pending;
	uint64_t boundary = end - (end - c->segs_from) % c->mss;
	return boundary > c->wire_sent ? (size_t)(boundary - c->wire_sent) : 0;
}

int conn_flush(struct conn *c, int flags)
{
	bool was_blocked = c->blocked_since != 0, sent_any = false;
	bool records = c->tls && !c->ktls; /* ciphertext of out goes through tls_out */
	bool whole = (flags & MSG_MORE) && c->policy->whole_segments && !c->local && !c->ktls;
	c->out_more = flags & MSG_MORE;
	for (;;) {
		if (records && conn_tls_encrypt(c, flags & MSG_MORE) < 0)
			return -1;
		struct buf *wire = records ? &c->tls_out : &c->out;
		size_t before = buf_pending(wire);
		if (before == 0 || c->blocked)
			break;
		size_t hold = whole ? before - whole_segments(c, before) : 0;
		if (hold == before)
			break; /* less than a segment: it waits for what follows */
		if (send_pending(c, wire, hold, flags, &sent_any) < 0)
			return -1;
		size_t took = before - buf_pending(wire);
		c->wire_sent += took;
		if (!records) {
			c->out_sent += took;
			break;
		}
		if (buf_pending(&c->out) == 0)
			break;
	}
	size_t waiting = buf_pending(&c->out) + buf_pending(&c->tls_out);
	if (c->blocked) {
		if (!was_blocked || sent_any)
			c->blocked_since = clock_seconds();
		/* A client that reads may be sent an entry of any size import accepts: the
		 * limit counts what waits beyond the largest PDU queued. */
		if (waiting > server_max_pending_bytes(c->w->srv) + c->out_pdu_max) {
			log_info("conn fd=%d from %s: %zu bytes waiting for a client that does not "
			         "read (max_pending_bytes); closing",
			         c->fd, c->peer, waiting);
			c->closing = true;
			return -1;
		}
		update_events(c);
		return 1;
	}
	c->blocked_since = 0;
	c->outq_last = 0;
	if (waiting == 0)
		c->out_pdu_max = 0;
	if (!(flags & MSG_MORE))
		c->segs_from = c->wire_sent;
	c->last_request = clock_seconds(); /* idle_timeout counts from the end of the last answer */
	if (c->tls_starting && waiting == 0)
		return conn_tls_switch(c);
	return 0;
}

size_t conn_release_buffers(struct conn *c)
{
	if (c->task || c->blocked || buf_pending(&c->in) || buf_pending(&c->out))
		return 0;
	if (buf_pending(&c->tls_out))
		return 0;
	size_t freed = c->in.cap + c->out.cap + c->tls_out.cap;
	if (c->tls)
		tls_session_idle(c->tls);
	buf_free(&c->in);
	buf_free(&c->out);
	buf_free(&c->tls_out);
	return freed;
}

bool conn_check_timeouts(struct conn *c, time_t now)
{
	int hs = server_tls_handshake_timeout(c->w->srv);
	/* The clock counts whole seconds: "more than N" is at least N seconds of real time,
	 * where ">= N" is already true a moment after a second begins (idle_timeout = 1
	 * closed a client between its bind's answer and its search). */
	if (c->tls && !tls_handshake_done(c->tls) && now - c->tls_since > hs) {
		STAT_ADD(c->w->stats.tls.failures, 1);
		log_info("conn fd=%d from %s: TLS handshake not done in %d s "
		         "(tls_handshake_timeout); closing",
		         c->fd, c->peer, hs);
		conn_close(c, "TLS handshake timeout");
		return true;
	}
	/* A request must arrive whole within pdu_timeout of its first byte; while a task runs or
	 * the socket is full the server is the one waiting, and the clock stops. */
	int pt = server_pdu_timeout(c->w->srv);
	if (c->in_since && (c->task || c->blocked))
		c->in_since = now;
	else if (pt && c->in_since && now - c->in_since > pt) {
		STAT_ADD(c->w->stats.pdu_timeouts, 1);
		log_info("conn fd=%d from %s: %zu bytes of a request not completed in %d s "
		         "(pdu_timeout)",
		         c->fd, c->peer, buf_pending(&c->in), pt);
		disconnect(c, LDAP_PROTOCOL_ERROR, "request not completed within pdu_timeout");
		conn_close(c, "request timeout");
		return true;
	}
	int idle = server_idle_timeout(c->w->srv);
	if (idle && !c->task && !c->blocked && buf_pending(&c->out) == 0 &&
	    now - c->last_request > idle) {
		log_debug("conn fd=%d from %s: no request for %d s (idle_timeout)", c->fd, c->peer,
		          idle);
		conn_close(c, "idle timeout");
		return true;
	}
	int timeout = server_write_timeout(c->w->srv);
	if (!c->blocked || timeout == 0)
		return false;
	/* EPOLLOUT comes only once a good part of the kernel's send queue drained; a
	 * client that reads slowly still shrinks the queue, and that is progress. */
	int queued;
	if (ioctl(c->fd, SIOCOUTQ, &queued) == 0) {
		if (queued < c->outq_last)
			c->blocked_since = now;
		c->outq_last = queued;
	}
	if (now - c->blocked_since < timeout)
		return false;
	log_info("conn fd=%d from %s: client has not read for %d s (write_timeout); closing", c->fd,
	         c->peer, timeout);
	conn_close(c, "write timeout");
	return true;
}

bool conn_more_requests(const struct conn *c)
{
	size_t len;
	const unsigned char *p = c->in.data + c->in.off;
	return frame_next(p, buf_pending(&c->in), max_pdu(c), &len) == FRAME_OK;
}

void conn_output_queued(struct conn *c, bool last)
{
	uint64_t queued = c->out_sent + buf_pending(&c->out);
	if (queued - c->out_queued > c->out_pdu_max)
		c->out_pdu_max = (size_t)(queued - c->out_queued);
	c->out_queued = queued;
	STAT_ADD(c->stats->pdus, 1);
	if (last) {
		STAT_ADD(c->stats->responses, 1);
		if (c->op_start_ns) {
			stat_latency(&c->w->stats, clock_ns() - c->op_start_ns);
			c->op_start_ns = 0;
		}
	}
}

void conn_make_ready(struct conn *c)
{
	if (c->in_ready)
		return;
	c->in_ready = true;
	c->ready_next = c->w->ready;
	c->w->ready = c;
}

/* Tells the client why it is being disconnected (RFC 4511 4.4.1), then closes. */
static void disconnect(struct conn *c, int rc, const char *why)
{
	log_info("conn fd=%d from %s: %s; disconnecting", c->fd, c->peer, why);
	response_result(&c->out, 0, LDAP_RES_EXTENDED, rc, NULL, why,
	                RESPONSE_NOTICE_OF_DISCONNECTION);
	STAT_ADD(c->stats->pdus, 1);
	c->blocked = false;
	conn_flush(c, 0);
	c->closing = true;
	c->close_why = why; /* a static string, as every caller gives */
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
	unsigned char *end = c->in.data + c->in.len;
	size_t max = max_pdu(c), len;
	while (from < end && frame_next(from, (size_t)(end - from), max, &len) == FRAME_OK) {
		if (!is_abandon(from, len)) {
			from += len;
			continue;
		}
		struct ldap_request req;
		const char *why;
		/* An abandon takes nothing from the arena (a running search may hold it, lent). */
		if (request_decode(from, len, &req, &c->w->req_mem, &c->w->scratch, &why) == 0)
			c->w->srv->dispatch(c, &req);
		memmove(from, from + len, (size_t)(end - from - len));
		c->in.len -= len;
		end -= len;
	}
}

/* Answers the complete requests in c->in, in order, until one must wait. */
static void process_input(struct conn *c)
{
	struct worker *w = c->w;
	while (!c->closing) {
		size_t len = 0;
		const unsigned char *p = c->in.data + c->in.off;
		enum frame_status fs = frame_next(p, buf_pending(&c->in), max_pdu(c), &len);
		if (fs == FRAME_NEED_MORE)
			break;
		if (fs == FRAME_TOO_BIG) {
			disconnect(c, LDAP_PROTOCOL_ERROR,
			           c->auth == AUTH_ANONYMOUS
			               ? "request larger than max_pdu_bytes_anonymous (bind first)"
			               : "request larger than max_pdu_bytes");
			return;
		}
		if (fs == FRAME_MALFORMED) {
			disconnect(c, LDAP_PROTOCOL_ERROR, "malformed LDAPMessage");
			return;
		}
		/* A task is running or the socket is full: the requests wait their turn,
		 * but Abandons anywhere among them act now (they have no response). */
		if ((c->task || c->blocked) && !is_abandon(p, len)) {
			take_abandons(c, c->in.data + c->in.off + len);
			break;
		}
		struct ldap_request req;
		const char *why;
		arena_reset(&w->req_mem); /* the last request's filter is done with */
		if (request_decode(p, len, &req, &w->req_mem, &w->scratch, &why) < 0) {
			disconnect(c, LDAP_PROTOCOL_ERROR, why);
			return;
		}
		/* Consumed first so the policy sees only the requests after this one; the
		 * bytes stay in place until the next read. */
		buf_consume(&c->in, len);
		c->in_since = 0; /* what follows waits from now on (account_input) */
		c->last_request = clock_seconds();
		c->op_start_ns = w->round_ns; /* it waited since the worker woke to it */
		bool had_tls = c->tls != NULL;
		w->srv->dispatch(c, &req);
		if (c->tls_starting || (c->tls != NULL) != had_tls)
			break; /* what follows the StartTLS request is a TLS handshake */
	}
	/* batch: responses held back for the requests that followed go out now. */
	/* Also before a close (Unbind): what is answered goes out first. */
	if (!c->task && buf_pending(&c->out) > 0 && !c->blocked)
		conn_flush(c, 0);
}

/* One recv into the input buffer. Returns bytes read, 0 at EOF, -1 to close. */
static ssize_t read_some(struct conn *c)
{
	if (c->tls)
		return conn_tls_read(c);
	size_t max = max_pdu(c);
	size_t want = CONN_READ_CHUNK;
	size_t pending = buf_pending(&c->in);
	/* A PDU larger than the chunk needs room for the rest of it (bounded by max_pdu), but
	 * the buffer grows with what arrives, at most doubling a read: a client that declares
	 * a large PDU and sends little of it holds little. */
	size_t need;
	if (pending >= 6 && /* before: in.data is NULL until the first read */
	    frame_next(c->in.data + c->in.off, pending, max, &need) == FRAME_NEED_MORE &&
	    c->in.data[c->in.off + 1] & 0x80) {
		size_t nlen = c->in.data[c->in.off + 1] & 0x7f, body = 0;
		for (size_t i = 0; i < nlen && i < 4; i++)
			body = (body << 8) | c->in.data[c->in.off + 2 + i];
		if (2 + nlen + body > pending + want)
			want = 2 + nlen + body - pending;
		if (want > pending && want > CONN_READ_CHUNK)
			want = pending > CONN_READ_CHUNK ? pending : CONN_READ_CHUNK;
	}
	if (c->in.off > 0 && c->in.cap - c->in.len < want)
		buf_compact(&c->in);
	if (buf_reserve(&c->in, want) < 0)
		return -1;
	size_t room = c->in.cap - c->in.len;
	ssize_t n = engine_recv(c->w, c->fd, c->in.data + c->in.len, room);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? (ssize_t)-2 : -1;
	c->in.len += (size_t)n;
	return n;
}

void conn_event(struct conn *c, uint32_t events)
{
	if (events & EPOLLOUT) {
		c->blocked = false;
		conn_flush(c, c->out_more ? MSG_MORE : 0);
		if (!c->blocked && !c->closing) {
			if (c->task)
				c->task->resume(c);
			if (!c->task && !c->blocked)
				process_input(c);
		}
		update_events(c);
	}
	if ((events & (EPOLLHUP | EPOLLERR)) && !may_read(c)) {
		conn_close(c, "client hung up"); /* nothing more can be read or answered */
		return;
	}
	if (!c->closing && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && may_read(c)) {
		ssize_t n = read_some(c);
		if (n == 0 || n == -1) {
			conn_close(c, n == 0 ? "client closed" : "read error");
			return;
		}
		if (n > 0)
			process_input(c);
		update_events(c);
	}
	account_input(c);
	if (c->w->input_bytes > input_limit(c->w))
		shed_input(c->w);
	if (c->closing)
		conn_close(c, c->close_why ? c->close_why : "closed by server");
}

void conn_resume(struct conn *c)
{
	c->in_ready = false;
	if (c->task && !c->blocked && !c->closing)
		c->task->resume(c);
	if (!c->task && !c->blocked && !c->closing)
		process_input(c);
	update_events(c);
	account_input(c);
	if (c->closing)
		conn_close(c, c->close_why ? c->close_why : "closed by server");
}

/* --- the hooks the event loop calls (worker.h) ---------------------------------------- */

static void hook_event(void *handler, uint32_t events)
{
	conn_event(handler, events);
}

static void hook_run_ready(struct worker *w)
{
	conn_wake_due(w); /* those whose time has come join the ready list */
	struct conn *list = w->ready;
	w->ready = NULL;
	while (list) {
		struct conn *c = list;
		list = c->ready_next;
		conn_resume(c);
	}
}

/* Heap bytes given back to malloc (buffers of idle connections, closed connections) that
 * make it worth returning memory to the system. */
#define CONN_TRIM_BYTES (1024 * 1024)
#define CONN_TRIM_SETTLED_BYTES (64 * 1024)

static void hook_sweep(struct worker *w, time_t now)
{
	size_t freed = 0;
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->next;
		if (conn_check_timeouts(c, now))
			continue;
		/* TLS 1.3 tickets held for a first response that did not come: send them now. */
		if (c->tls && !c->blocked && !c->closing && tls_has_output(c->tls) &&
		    conn_flush(c, 0) < 0) {
			conn_close(c, "send error");
			continue;
		}
		freed += conn_release_buffers(c);
	}
	/* Hand what idle and closed connections gave back to the system, not just to malloc
	 * (free returns only the top of a heap; malloc_trim also the free pages inside it). */
	w->trim_bytes += freed;
	/* Also once a burst of closes has ended (nothing more given back in a second), so that
	 * the tail of the burst, which came after a trim, is returned too. */
	bool settled = w->trim_bytes >= CONN_TRIM_SETTLED_BYTES && w->trim_bytes == w->trim_last;
	if (w->trim_bytes >= CONN_TRIM_BYTES || settled) {
		malloc_trim(0);
		w->trim_bytes = 0;
	}
	w->trim_last = w->trim_bytes;
}

static void hook_stop(struct worker *w)
{
	while (w->conns)
		conn_close(w->conns, "server stopping");
}

const struct worker_hooks conn_worker_hooks = {
    .accepted = conn_accept,
    .event = hook_event,
    .run_ready = hook_run_ready,
    .sweep = hook_sweep,
    .stop = hook_stop,
};
