/*
 * A client connection, owned by one worker. Input is framed into PDUs and
 * answered in order; output goes through the send policy into conn->out and
 * the socket. When the socket is full, the connection waits for EPOLLOUT and
 * any search in progress pauses as a cursor, so memory stays bounded.
 */
#ifndef MINIDIR_SERVER_NET_CONN_H
#define MINIDIR_SERVER_NET_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "protocol/buf.h"
#include "conf/config.h"
#include "conf/ip_net.h"
#include "server/server.h"
#include "server/net/worker.h"

/*
 * A long-running operation on a connection: a search that pauses while the
 * socket is full, or yields so that other connections get their turn. The
 * connection resumes it (EPOLLOUT, the worker's ready list) and ends it at
 * close or Abandon, knowing nothing else of it; the operation embeds this in
 * its own state and frees that state in free.
 */
struct conn_task {
	int32_t msgid; /* the request it answers (Abandon finds it by this) */
	/* Runs it further; once it has answered it sets c->task to NULL and frees itself
	 * (or parks itself in c->parked). */
	void (*resume)(struct conn *c);
	/* Ends it without a response and frees it. */
	void (*free)(struct conn_task *t);
};

enum conn_auth { AUTH_ANONYMOUS, AUTH_ROOT, AUTH_USER };

/* Bytes the connection owns and the operations read (the bound identity). */
struct conn_bytes {
	const unsigned char *data; /* NULL when len is 0 */
	size_t len;
};

/* The bound DN and key together up to this size take a slot of the worker's identity
 * slab (w's ident_slab, conn_ident.c); longer, a malloc. */
#define CONN_IDENT_BYTES 128

/*
 * A send policy: the hooks through which the layer above decides when the
 * connection's output leaves (server/net/policy.h has the list and the rules).
 * Defined here, below the policies, because the connection calls accept; the
 * reply layer calls the others. server/net/policy_<ident>.c defines `const struct send_policy
 * policy_<ident>` for each line of conf/send_policies.h; nothing else lists them.
 */
struct send_policy {
	enum send_policy_id id; /* its config name: config_policy_name(id) */
	/* Socket options for a new connection. Returns 0 or -1 (close it). NULL: none. */
	int (*accept)(struct conn *c);
	/* A response starts (before its first PDU is queued). NULL: nothing to do. */
	void (*response_begin)(struct conn *c);
	/* A PDU was appended to c->out; last marks a response's final PDU, and
	 * more_requests (only with last) says that further complete requests are already
	 * buffered on the connection, whose responses will follow at once. */
	void (*pdu_end)(struct conn *c, bool last, bool more_requests);
	/* A send with MSG_MORE takes only what ends on a TCP segment boundary; the rest
	 * waits in out for the next send (conn_output.c, whole_segments). */
	bool whole_segments;
};

struct conn {
	int fd;
	struct worker *w;
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
	bool blocked;         /* the socket refused bytes: waiting for EPOLLOUT */
	time_t blocked_since; /* when output last made progress while blocked (0: not) */
	int outq_last;        /* bytes in the kernel send queue at the last write_timeout check */
	time_t last_request;  /* when a request was last read or answered (idle_timeout; relaxed
	                         atomic stores: conn_list reads it) */
	uint64_t op_start_ns; /* when the operation being answered was taken (0: none) */
	uint8_t op_kind; /* its enum stat_op + 1, counted done at its final response (0: none) */
	bool closing;    /* close after this event (output flushed as far as it goes) */
	const char *close_why;    /* why, for the log (a static string; NULL: "closed by server") */
	bool in_ready;            /* on the worker's ready list */
	size_t in_counted;        /* bytes of in counted in w's input_bytes (conn_input.c,
	                             conn_account_input) */
	time_t in_since;          /* since when the pending input waits to be whole (pdu_timeout;
	                             0: none pending) */
	uint32_t events;          /* the epoll mask registered now */
	struct conn_task *task;   /* the operation in progress, if any (owned) */
	struct conn_task *parked; /* an operation waiting for a later request of its own, such as
	                             a paged search between pages (owned) */
	enum conn_auth auth;      /* set with the two below by conn_set_identity */
	struct conn_bytes bound_key; /* reversed DN key of the bound entry (AUTH_USER) */
	struct conn_bytes bound_dn;  /* the bound DN as the client sent it (AUTH_ROOT, AUTH_USER) */
	void *ident;                 /* the memory of both (conn_ident.c), NULL when anonymous */
	struct conn_bytes bound_pw;  /* the password of a simple bind, kept only with
	                                chain_passwd (conn_set_password); malloc'd */
	char peer[64];               /* the client, as logs write it (after a PROXY header: its) */
	struct ip_addr peer_ip;      /* the client's address (family 0: ldapi://), peername.ip */
	uint64_t peer_counted;       /* peer's address key, counted in srv->addr_conns (0: not) */
	const struct listen_addr *listen; /* the listener it came in on (srv->cfg's) */
	bool proxy_wait;                  /* pldap(s)://: the PROXY header has not come yet */
	bool proxy_local;        /* the header said LOCAL or UNKNOWN: the peer is the proxy */
	uint16_t proxy_port;     /* the proxy's own port and address, for the ACCEPT line */
	struct ip_addr proxy_ip; /* (family 0: no PROXY header) */
	/* The access log holds a connection's first lines (conn_log.c): its ACCEPT, and an
	 * anonymous bind's answer, until it shows it is not a load balancer's health check. */
	bool log_held;   /* the ACCEPT line is not written yet */
	bool check_bind; /* the operation being answered is op 0, an anonymous bind */
	bool bind_held;  /* its result line is held: held_rc, held_us, op_text */
	int held_rc;
	uint64_t held_us;
	uint64_t id;         /* the connection's number in the access log */
	unsigned nops;       /* operations taken, numbering them in the access log */
	struct buf op_text;  /* the access log's text of the operation being answered */
	unsigned op_entries; /* entries sent for it */
	bool local;          /* came in on an ldapi:// (Unix) socket */
	bool peer_cred;      /* local, and the kernel told its uid and gid (SO_PEERCRED) */
	uid_t peer_uid;
	gid_t peer_gid;
	struct tls_session *tls; /* TLS on this connection (ldaps://, StartTLS), or NULL: tls.h */
	struct buf tls_out;      /* ciphertext of out, waiting for the socket */
	bool ktls;               /* the kernel encrypts: out goes to the socket as it is (tls.h) */
	bool tls_starting;       /* StartTLS was answered: TLS begins once the answer is sent */
	time_t tls_since;        /* when the handshake began (tls_handshake_timeout) */
	/* For cn=Monitor's connection entries (conn_list.h), read by another thread: */
	time_t accepted;    /* when (clock_seconds), set before the connection is listed */
	uint8_t scheme;     /* enum listen_scheme of its listener, set before too */
	uint64_t ops_taken; /* operations taken and answered: relaxed atomic stores */
	uint64_t ops_answered;
	struct conn *prev, *next; /* the worker's list (nw->conns_lock) */
	struct conn *ready_next;
};

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

/*
 * StartTLS (RFC 4511 4.14): the operation answered success; TLS begins once that
 * answer has been sent, and the requests read from then on are TLS records.
 * The caller checked that the server has TLS (c->w->srv->tls) and c does not yet.
 */
void conn_start_tls(struct conn *c);
/* True if c has TLS or is starting it. */
bool conn_tls_active(const struct conn *c);
/* Empties a task slot (&c->task or &c->parked), ending its task without a response. */
void conn_task_drop(struct conn_task **slot);

/*
 * Binds c as auth (AUTH_ANONYMOUS: dn and key are not read) with copies of dn[0..dnlen)
 * and key[0..keylen) (the entry key, empty but for AUTH_USER), dropping its earlier
 * identity first. Returns 0, or -1 when out of memory (c is then anonymous).
 */
int conn_set_identity(struct conn *c, enum conn_auth auth, const void *dn, size_t dnlen,
                      const void *key, size_t keylen);
/* c becomes anonymous; the memory of its identity is given back (its password wiped). */
void conn_clear_identity(struct conn *c);
/*
 * Keeps a copy of pw[0..len) as the password c bound with (chain_passwd forwards a password
 * change with it), until the identity is cleared: a later bind, unbind, close. Call it after
 * conn_set_identity. Returns 0, or -1 when out of memory (none kept).
 */
int conn_set_password(struct conn *c, const void *pw, size_t len);

/* Ends c's task and parked task answering msgid, without a response (Abandon).
 * Returns true if there was one. */
bool conn_task_cancel(struct conn *c, int32_t msgid);

/* What the worker's event loop calls: accept, events, the ready list, the sweep, stop. */
extern const struct worker_hooks conn_worker_hooks;

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
/* True when another complete request is already buffered on c. */
bool conn_more_requests(const struct conn *c);
/* Keeps w's input_bytes, the request bytes buffered on the worker's connections, and
 * c->in_since, from when what c has pending waits (a closing connection counts none). */
void conn_account_input(struct conn *c);
/* What w may buffer of unfinished requests: max_input_bytes_per_worker, at least
 * max_pdu_bytes (one whole request always fits). */
size_t conn_input_limit(const struct worker *w);
/* More than conn_input_limit is buffered on w's connections: the ones whose input waits
 * longest are disconnected until it is under (they close on the ready list). */
void conn_shed_input(struct worker *w);

/* --- conn_wake.c: the ready list, and resuming a task at a set time ------------------- */

/* Marks c to continue its task on the next loop iteration (the worker's ready list). */
void conn_make_ready(struct conn *c);

/*
 * An entry of the worker's waking queue: embedded in the task that waits, which owns it
 * and takes it off the queue (conn_wake_cancel) when it is freed, so that a connection
 * closed or an operation abandoned leaves nothing queued.
 */
struct conn_wake {
	struct conn *c;
	uint64_t ns; /* when it is due */
	bool queued;
	struct conn_wake *prev, *next;
};

/*
 * Resumes c's task (as conn_make_ready does) once clock_ns() has reached ns, the worker
 * waking for it; wk is the task's entry. The queue is in the order of the times: a time
 * no earlier than the last queued costs O(1) (a padded failed bind, op_bind.c), an
 * earlier one walks back past the later ones. Called again while queued, wk moves to its
 * new time.
 */
void conn_wake_at(struct conn_wake *wk, struct conn *c, uint64_t ns);
/* Takes wk off the queue if it is on it. */
void conn_wake_cancel(struct conn_wake *wk);
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
/* Writes what c holds (its ACCEPT line, a held bind's line) before another line of c.
 * Cheap when nothing is held: callers call it before each of c's lines. */
void conn_log_release(struct conn *c);
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
/* Encrypts what waits in c->out into c->tls_out once tls_out is empty; with more (the
 * response goes on), only whole 16 KiB records, the rest left in c->out. Returns 0 or -1
 * (c is closing). */
int conn_tls_encrypt(struct conn *c, bool more);
/* Sends close_notify if it can without waiting, frees the session. */
void conn_tls_end(struct conn *c);

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
	return (!c->task && !c->blocked) || buf_pending(&c->in) < conn_max_pdu(c);
}

#endif
