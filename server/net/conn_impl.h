/*
 * server/net/'s own part of a connection (struct conn_impl) and the functions its files
 * share: input, output, TLS, the PROXY header, the access log's lines, the life cycle.
 * Included only by server/net/'s files (scripts/layers.sh: no other room reaches it, nor
 * does a public header of the room). The rooms above see struct conn (conn.h) and the calls there.
 */
#ifndef MINIDIR_SERVER_NET_CONN_IMPL_H
#define MINIDIR_SERVER_NET_CONN_IMPL_H

#include "server/net/conn.h"
#include "server/server.h"

/* The bound DN and key together up to this size take a slot of the worker's identity
 * slab (w's ident_slab, conn_ident.c); longer, a malloc. */
#define CONN_IDENT_BYTES 128

/* What the worker's event loop calls: accept, events, the ready list, the sweep, stop. */
extern const struct worker_hooks conn_worker_hooks;
/* What a struct conn takes with its private part: the size of the slab's slots. */
extern const size_t conn_size;

struct conn_impl {
	struct conn pub;                  /* first: a struct conn * is a struct conn_impl * */
	const struct send_policy *policy; /* fixed at accept */
	struct send_stats *stats;         /* the worker's counters for that policy */
	struct buf in;
	struct buf out;
	bool out_more;        /* the bytes in out end inside a response (MSG_MORE) */
	uint64_t out_sent;    /* bytes of out sent since accept */
	uint64_t wire_sent;   /* bytes the socket took since accept (over TLS: ciphertext) */
	uint64_t segs_from;   /* wire_sent at the last send without MSG_MORE */
	unsigned mss;         /* TCP_MAXSEG, read when whole_segments first needs it */
	uint64_t out_queued;  /* out_sent + pending when the last PDU was queued */
	size_t out_pdu_max;   /* the largest PDU queued since out was last empty */
	time_t blocked_since; /* when output last made progress while blocked (0: not) */
	int outq_last;        /* bytes in the kernel send queue at the last write_timeout check */
	time_t last_request;  /* when a request was last read or answered (idle_timeout; relaxed
	                         atomic stores: conn_list reads it) */
	uint8_t op_kind; /* its enum stat_op + 1, counted done at its final response (0: none) */
	bool closing;    /* close after this event (output flushed as far as it goes) */
	const char *close_why; /* why, for the log (a static string; NULL: "closed by server") */
	bool in_ready;         /* on the worker's ready list */
	size_t in_counted;     /* bytes of in counted in w's input_bytes (conn_input.c,
	                          conn_account_input) */
	time_t in_since;       /* since when the pending input waits to be whole (pdu_timeout;
	                          0: none pending) */
	uint32_t events;       /* the epoll mask registered now */
	void *ident;           /* the memory of the identity (conn_ident.c), NULL when anonymous */
	uint64_t peer_counted; /* peer's address key, counted in srv->addr_conns (0: not) */
	bool proxy_wait;       /* pldap(s)://: the PROXY header has not come yet */
	bool proxy_local;      /* the header said LOCAL or UNKNOWN: the peer is the proxy */
	uint16_t proxy_port;   /* the proxy's own port and address, for the ACCEPT line */
	struct ip_addr proxy_ip; /* (family 0: no PROXY header) */
	/* The access log holds a connection's first lines (conn_log.c): its ACCEPT, and an
	 * anonymous bind's answer, until it shows it is not a load balancer's health check. */
	bool log_held;  /* the ACCEPT line is not written yet */
	bool bind_held; /* its result line is held: held_rc, held_us, trace.text */
	int held_rc;
	uint64_t held_us;
	struct buf tls_out;        /* ciphertext of out, waiting for the socket */
	struct sasl_session *sasl; /* a SASL bind's session and its security layer, or NULL */
	bool ktls;         /* the kernel encrypts: out goes to the socket as it is (tls.h) */
	bool tls_starting; /* StartTLS was answered: TLS begins once the answer is sent */
	time_t tls_since;  /* when the handshake began (tls_handshake_timeout) */
	/* For cn=Monitor's connection entries (conn_list.h), read by another thread: */
	time_t accepted;    /* when (clock_seconds), set before the connection is listed */
	uint8_t scheme;     /* enum listen_scheme of its listener, set before too */
	uint64_t ops_taken; /* operations taken and answered: relaxed atomic stores */
	uint64_t ops_answered;
	struct conn_impl *prev, *next; /* the worker's list (nw->conns_lock) */
	struct conn_impl *ready_next;
};

/* c's private part: c as its struct conn_impl (const kept). A cast that compiles only for a
 * struct conn pointer. */
#define CI(c)                                                                                      \
	_Generic((c), struct conn *: (struct conn_impl *)(c),                                     \
	         const struct conn *: (const struct conn_impl *)(c))

/*
 * max_conns_per_ip: counts c's connection for the address in c->peer, giving back the count
 * of the address it was counted for before, if any (so that once a PROXY protocol header
 * names the client this is called again). Returns false when that address holds
 * max_conns_per_ip connections already (one log line, rate-limited; counted in
 * cn=limits,cn=monitor): the caller closes c. True when the limit is off, or c is not an IP
 * connection (ldapi://).
 */
bool conn_admit_peer(struct conn *c);

/* Gives back c's count for max_conns_per_ip, if it holds one (at close, or before it is
 * counted again for another address). */
void conn_release_peer(struct conn *c);

/* Takes a freshly accepted non-blocking socket from listener la (ldaps://: the client
 * starts with a handshake; ldapi://: a local peer, batch policy; pldap(s)://: a PROXY
 * header first, from proxy_from only). Returns 0 or -1 (fd closed). */
int conn_accept(struct worker *w, int fd, const struct listen_addr *la);

/* Handles epoll events for c. */
void conn_event(struct conn *c, uint32_t events);
/* Continues c's task (from the ready list). */
void conn_resume(struct conn *c);
/* Closes c and frees it. */
void conn_close(struct conn *c, const char *why);

/* Closes c if it has been blocked, without progress, for write_timeout seconds, or has
 * sent no request for idle_timeout seconds while nothing was running or waiting.
 * Returns true when c was closed (and freed). */
bool conn_check_timeouts(struct conn *c, time_t now);

/*
 * Frees c's input and output buffers if nothing waits in them and nothing runs,
 * so that an idle connection costs only its struct (they are allocated again by
 * the next request). Returns the bytes of capacity freed.
 */
size_t conn_release_buffers(struct conn *c);

/* --- conn_output.c: sending, the events waited for, disconnecting ---------------------- */

/*
 * Sends the pending bytes of c->out with flags (0 or MSG_MORE). Returns 0 when
 * all were sent, 1 when some wait for EPOLLOUT, -1 when the connection failed
 * (it is then marked closing).
 */
int conn_flush(struct conn *c, int flags);

/*
 * A PDU was appended to c->out (by the reply layer): keeps the connection's
 * accounting (largest waiting PDU, PDU and response counts, and with last, the
 * operation's latency). Does not send: the send policy decides that.
 */
void conn_output_queued(struct conn *c, bool last);

/* Registers the events c waits for now with the engine: output room when blocked, else
 * input while it may read (conn_may_read). */
void conn_update_events(struct conn *c);
/* StartTLS's answer is out: TLS begins (conn_tls_switch), and the handshake's answer to
 * bytes already read is sent at once. Returns 0, or -1 (c is closing). */
int conn_switch_to_tls(struct conn *c);
/* Tells the client why it is being disconnected (RFC 4511 4.4.1, a Notice of
 * Disconnection with rc and why, a static string), and marks c closing. */
void conn_disconnect(struct conn *c, int rc, const char *why);

/* --- conn_input.c: reading, framing, handing requests on ------------------------------- */

/* One recv into the input buffer (over TLS, conn_tls_read). Returns bytes read, -2 when
 * none were there yet, 0 at EOF, -1 to close. */
ssize_t conn_read_some(struct conn *c);
/* Answers the complete requests in c->in, in order, until one must wait. */
void conn_process_input(struct conn *c);
/* Keeps w's input_bytes, the request bytes buffered on the worker's connections, and
 * c->in_since, from when what c has pending waits (a closing connection counts none). */
void conn_account_input(struct conn *c);
/* What w may buffer of unfinished requests: max_input_bytes_per_worker, at least
 * max_pdu_bytes (one whole request always fits). */
size_t conn_input_limit(const struct worker *w);
/* More than conn_input_limit is buffered on w's connections: the ones whose input waits
 * longest are disconnected until it is under (they close on the ready list). */
void conn_shed_input(struct worker *w);

/* --- conn_wake.c, for the worker loop ------------------------------------------- */

/* Puts the connections whose time has come on the ready list (the loop runs it next)
 * and sets w's wake_ns to the next one's time. */
void conn_wake_due(struct worker *w);

/* --- conn_proxy.c: the PROXY protocol header on pldap:// and pldaps://, for conn*.c ----- */

/* A connection accepted on a pldap(s):// listener: true if its source may send the
 * header (proxy_from); false after logging (rate-limited) that it is refused. */
bool conn_proxy_allowed(struct conn *c);
/* c->proxy_wait and bytes were read into c->in: the header taken from them (c->peer and
 * c->peer_ip become the client's; on pldaps:// TLS begins with the bytes that follow).
 * Returns 1 when done (what follows in c->in is LDAP), 0 when more is needed, -1 when c
 * is closing (malformed, logged once). */
int conn_proxy_input(struct conn *c);
/* The header's time bound has passed (pdu_timeout after accept, 10 s when that is 0):
 * true after logging it (the caller closes c). */
bool conn_proxy_timed_out(struct conn *c, time_t now);

/* --- conn_log.c: a connection's lines in the access log, for conn*.c and the reply ----- */

/* c was accepted (or its PROXY header read): its ACCEPT line, held (c->log_held). */
void conn_log_accept(struct conn *c);
/* The result line of c's operation: true when it is held (an anonymous bind, op 0, that
 * succeeded: perhaps a health check) and not to be written now. */
bool conn_log_hold_result(struct conn *c, int rc, uint64_t us);
/* c closes for why: its CLOSE line, or for a health check (nothing but an anonymous bind,
 * or nothing at all, then the client went) one line for the whole connection. */
void conn_log_close(struct conn *c, const char *why);
/* Once a second: lines held longer than a second are written (not a health check). */
void conn_log_sweep(struct conn *c, time_t now);

/* --- conn_tls.c: the TLS half of the I/O, for conn*.c ---------------------------------- */

/* Gives c a TLS session (ldaps:// at accept, or StartTLS). Returns 0 or -1. */
int conn_tls_begin(struct conn *c);
/* pldaps://: the PROXY header is read, TLS begins with the bytes already read after it
 * (the ClientHello). Returns 0, or -1 (c is closing); *send as conn_tls_switch's. */
int conn_tls_after_proxy(struct conn *c, bool *send);
/* StartTLS's answer is out: TLS begins (bytes already read are the handshake).
 * Returns 0, or -1 (c is closing). *send is set when the handshake's answer must go
 * now: the caller sends it (conn_flush), as conn_tls.c calls nothing of conn*.c. */
int conn_tls_switch(struct conn *c, bool *send);
/* One recv of ciphertext, decrypted into c->in: as conn_read_some (bytes added, -2 none yet,
 * 0 closed, -1 error), with *send as conn_tls_switch's. */
ssize_t conn_tls_read(struct conn *c, bool *send);
/* Encrypts what waits in c->out but its last `held` bytes into c->tls_out once tls_out
 * is empty; with more (the response goes on), only whole 16 KiB records, the rest left
 * in c->out. Returns 0 or -1
 * (c is closing). */
int conn_tls_encrypt(struct conn *c, bool more, size_t held);
/* Sends close_notify if it can without waiting, frees the session. */
void conn_tls_end(struct conn *c);

/* --- conn_sasl.c: a SASL bind's security layer on the I/O, for conn*.c (sasl.h) -------- */

/* Frees c's SASL session, layer or not (at close). */
void conn_sasl_free(struct conn *c);
/* With a layer on: the `got` bytes a read appended to c->in replaced by what they decode
 * to. Returns the bytes added (as conn_read_some: -2 none yet, got when got <= 0, -1 to
 * close). */
ssize_t conn_sasl_unwrap(struct conn *c, ssize_t got);
/* With a layer on: what was queued in c->out since the last call made SASL buffers (with
 * more, whole buffers only; the rest waits). Returns 0, or -1 (c is closing). */
int conn_sasl_wrap(struct conn *c, bool more);
/* The bytes at the end of c->out not yet wrapped (0 without a layer): not for the wire. */
size_t conn_sasl_held(const struct conn *c);
/* n bytes of c->out's front went to the wire or to TLS. */
void conn_sasl_sent(struct conn *c, size_t n);

/* --- for conn*.c: what the input, output and life-cycle files share ------------------ */

/* The largest request c may send: smaller until it binds (slapd's sockbuf_max_incoming). */
static inline size_t conn_max_pdu(const struct conn *c)
{
	const struct config *cfg = &c->w->srv->cfg;
	if (c->auth == AUTH_ANONYMOUS && cfg->max_pdu_bytes_anonymous < cfg->max_pdu_bytes)
		return cfg->max_pdu_bytes_anonymous;
	return cfg->max_pdu_bytes;
}

/*
 * Whether to read more input now. While a task runs or the socket is full,
 * requests wait in the buffer (only an Abandon is acted on early), so reading
 * stops once a full PDU's worth is waiting: memory stays bounded however much
 * a client sends.
 */
static inline bool conn_may_read(const struct conn *c)
{
	return (!c->task && !c->blocked) || buf_pending(&CI(c)->in) < conn_max_pdu(c);
}

#endif
