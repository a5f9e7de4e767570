/*
 * A client connection, owned by one worker. Input is framed into PDUs and
 * answered in order; output goes through the send policy into its output buffer and
 * the socket. When the socket is full, the connection waits for EPOLLOUT and
 * any search in progress pauses as a cursor, so memory stays bounded.
 *
 * This header is the part the rooms above server/net/ use (a public header of the room):
 * struct conn's public fields, the task slots and the calls on a connection, and a
 * worker's connections set up and freed for start-up. Buffers, the send state, the close
 * flag, the PROXY header's and the access log's holding state are server/net/'s
 * own (struct conn_impl, conn_impl.h, with the functions its files share): another room
 * that touched them would not compile, and scripts/layers.sh keeps conn_impl.h from it.
 */
#ifndef MINIDIR_SERVER_NET_CONN_H
#define MINIDIR_SERVER_NET_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "protocol/buf.h"
#include "conf/ip_net.h"

struct conn;
struct listen_addr;
struct tls_session;
struct worker;

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

/*
 * A connection as the rooms above server/net/ see it: what they may read (the client, the
 * identity, the output's state), the task slots they fill, and the access log's trace of
 * the operation being answered. The rest is server/net/'s own (struct conn_impl,
 * conn_impl.h, which embeds this first: a struct conn * from net is a struct conn_impl *).
 * Only net writes the fields marked (net); the identity changes only through
 * conn_set_identity and conn_clear_identity.
 */
struct conn {
	int fd;                      /* (net) */
	struct worker *w;            /* (net) the owning worker */
	struct conn_task *task;      /* the operation in progress, if any (owned) */
	struct conn_task *parked;    /* an operation waiting for a later request of its own, such as
	                                a paged search between pages (owned) */
	enum conn_auth auth;         /* set with the two below by conn_set_identity */
	struct conn_bytes bound_key; /* reversed DN key of the bound entry (AUTH_USER) */
	struct conn_bytes bound_dn;  /* the bound DN as the client sent it (AUTH_ROOT, AUTH_USER) */
	int must_change;            /* after a bind whose password must be changed first (a password
	                               policy's change after reset), the result code the operations
	                               that policy restricts get (server/ops/ops.c); 0 otherwise.
	                               Cleared with the identity */
	struct conn_bytes bound_pw; /* the password of a simple bind, kept only with
	                               chain_passwd or chain_bind_failures (conn_set_password) */
	char peer[64];          /* (net) the client, as logs write it (after a PROXY header: its) */
	struct ip_addr peer_ip; /* (net) the client's address (family 0: ldapi://) */
	const struct listen_addr *listen; /* (net) the listener it came in on (srv->cfg's) */
	bool local;                       /* (net) came in on an ldapi:// (Unix) socket */
	bool peer_cred; /* (net) local, and the kernel told its uid and gid (SO_PEERCRED) */
	uid_t peer_uid;
	gid_t peer_gid;
	struct tls_session *tls; /* (net) TLS on this connection (ldaps://, StartTLS), or NULL */
	uint64_t id;             /* (net) the connection's number in the access log */
	uint64_t op_start_ns;    /* (net) when the operation being answered was taken (0: none) */
	bool blocked;            /* (net) the socket refused bytes: waiting for EPOLLOUT */
	/* The access log's trace of the operation being answered: op_trace.c (ops) writes it
	 * when a request is taken, the reply (net) counts its entries and writes its line. */
	struct conn_trace {
		struct buf text;  /* the request's part of the line */
		unsigned nops;    /* operations taken, numbering them */
		unsigned entries; /* entries sent for it */
		bool check_bind;  /* it is op 0, an anonymous bind (perhaps a health check) */
	} trace;
};

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
/* conn_input.c: true when another complete request is already buffered on c. */
bool conn_more_requests(const struct conn *c);

/* conn_log.c: writes what c holds (its ACCEPT line, a held bind's line) before another
 * line of c. Cheap when nothing is held: callers call it before each of c's lines. */
void conn_log_release(struct conn *c);

/* --- the operation being answered, for the dispatcher above (conn_life.c) -------------- */

/* c's request of kind (its enum stat_op) was taken: counted for cn=Monitor, and done at its
 * final response (conn_output_queued), or at once with conn_op_done for one that has none
 * (Unbind, Abandon). */
void conn_op_begin(struct conn *c, unsigned kind);
void conn_op_done(struct conn *c);
/* c closes once this event is handled, its output flushed as far as it goes; why (a
 * static string) is logged (NULL: "closed by server"). */
void conn_close_after(struct conn *c, const char *why);
/* True when c will close (conn_close_after, a failed send). */
bool conn_closing(const struct conn *c);
/* --- a worker's connections, for start-up (conn_life.c) ------------------------------- */

/*
 * Readies the network part of w (zeroed, w->id set) for connections: its slabs, the lock
 * on its list, the hooks its loop calls, its spare and wake-up descriptors. Returns 0, or
 * -1 after logging why (conn_worker_free then frees what was made).
 */
int conn_worker_init(struct worker *w);
/* Frees the network part of w, whose thread has stopped (or never ran): its listening
 * sockets, slabs and lock, its engine, its descriptors. */
void conn_worker_free(struct worker *w);

#endif
