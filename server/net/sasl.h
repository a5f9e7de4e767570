/*
 * SASL binds other than EXTERNAL, through Cyrus SASL (libsasl2, the library slapd and
 * 389-ds use): GSSAPI, a Kerberos ticket for the service ldap/sasl_host@sasl_realm whose
 * key is in sasl_keytab. What other rooms use of it: the server's setup, the mechanisms it
 * offers (the root DSE), and a connection's bind steps; conn_sasl.c keeps each
 * connection's SASL session and its security layer, sasl.c the library's setup.
 *
 * A bind runs as steps (RFC 4513 5.2.2): each BindRequest's credentials go to the
 * session, whose answer is a challenge (saslBindInProgress, 14) or the end. A step's GSS
 * calls cost about 0.6 ms of CPU and read files under blocking locks (the keytab three
 * times, MIT's replay cache under KRB5RCACHEDIR written once: bench/results/
 * 2026-12-07-gssapi-binds.md), so they run off the event loop: conn_sasl_begin on the
 * worker takes the session, sasl_session_run on any thread (server/ops's SASL threads)
 * makes the library call, conn_sasl_finish on the worker reads the outcome. A session
 * is counted (the connection's reference and the step's): a connection that closes, or a
 * bind abandoned, while its step runs leaves the session to the step until it ends.
 *
 * A security layer (GSSAPI integrity or confidentiality, RFC 4752 3.3) begins with the
 * bytes after the successful BindResponse: from then on requests arrive as SASL buffers
 * (a 4-byte length, then the wrapped bytes; at most SASL_LAYER_MAX_BUFFER each) and
 * responses leave as such, inside TLS when TLS is there, with the send policy's flags on
 * the wrapped bytes. A connection with a layer refuses another SASL bind (53): the
 * layer's keys cannot change under it.
 *
 * Thread rules: sasl_setup and sasl_teardown in the main thread, before the workers
 * start and after they stop; conn_sasl_* on the connection's worker.
 */
#ifndef MINIDIR_SERVER_NET_SASL_H
#define MINIDIR_SERVER_NET_SASL_H

#include <lber.h>
#include <stdbool.h>

#include "protocol/buf.h"

struct config;
struct conn;
struct sasl_server;

/* The largest SASL buffer a client may send once a layer is on (the session's
 * maxbufsize): a longer one closes the connection. */
#define SASL_LAYER_MAX_BUFFER 65536

/*
 * Makes the library ready for cfg's SASL keys (sessions read them from the server's
 * config, conn_sasl.c) into *out:
 * NULL, logged with why, when no mechanism can be offered (sasl_keytab unreadable, no
 * GSSAPI plugin installed). KRB5_KTNAME is set to sasl_keytab for the process (the GSSAPI
 * plugin's acceptor reads it). Returns 0, or -1 (the library failed, logged).
 */
int sasl_setup(const struct config *cfg, struct sasl_server **out);
/* Frees s (NULL allowed); the library stays loaded until the process ends. */
void sasl_teardown(struct sasl_server *s);
/* The mechanisms s offers, space-separated ("GSSAPI"); "" when s is NULL. */
const char *sasl_mechanisms(const struct sasl_server *s);
/* True when s offers mechanism mech[0..len) (compared without case). */
bool sasl_offers(const struct sasl_server *s, const char *mech, size_t len);

/* What a bind step ended with (conn_sasl_finish). */
enum sasl_step_status {
	SASL_STEP_DONE,     /* authenticated: conn_sasl_who tells who */
	SASL_STEP_CONTINUE, /* answer 14 with out as the challenge */
	SASL_STEP_FAILED,   /* answer rc with why; the session is gone */
};

struct sasl_step {
	int rc;        /* FAILED: the LDAP result code (49, 50, 13, 80, ...) */
	char why[256]; /* FAILED: the diagnostic message */
};

/*
 * On c's worker: the session the next step of c's SASL bind with mechanism mech (offered
 * by the server: the caller checked) runs on, with a reference for the step; *first is
 * set when the step begins the session (a new one is made: none yet, another mechanism's,
 * a finished one, or one whose last step still runs). The session's external strength is
 * c's TLS cipher's bits. NULL with st filled when there is none (a layer is on: 53; the
 * library refused).
 */
struct sasl_session *conn_sasl_begin(struct conn *c, const struct berval *mech, bool *first,
                                     struct sasl_step *st);
/*
 * On any thread, one at a time for a session: the library's step with the client's
 * credentials cred (has_cred false: none were sent); its data for the client copied into
 * out (reset first). Returns Cyrus SASL's result (SASL_OK, SASL_CONTINUE or a failure).
 */
int sasl_session_run(struct sasl_session *s, bool first, const struct berval *cred, bool has_cred,
                     struct buf *out);
/* What conn_sasl_finish is given for a step that never ran (no memory, the pool full). */
#define SASL_STEP_NOT_RUN (-1) /* Cyrus SASL's SASL_FAIL */

/* On c's worker, after sasl_session_run's result rc: the step's outcome into *st (a
 * failure drops c's session, as does a session c no longer holds). Does not put the
 * step's reference. */
enum sasl_step_status conn_sasl_finish(struct conn *c, struct sasl_session *s, int rc,
                                       struct sasl_step *st);
/* Gives back a reference (NULL allowed); the last frees the session. Any thread. */
void sasl_session_put(struct sasl_session *s);

/* After SASL_STEP_DONE: the authenticated user (SASL_USERNAME: "alice", or
 * "carol@OTHER.COM" from another realm), the realm the identity is named in (sasl_realm:
 * NULL when none), the authorization identity the client asked for (NULL: none), and the
 * security layer's strength (0: none). The strings are the session's. */
void conn_sasl_who(const struct conn *c, const char **user, const char **realm,
                   const char **authzid, unsigned *ssf);

/* The bind succeeded and its answer is queued: the security layer, if the session set one
 * up, applies to every byte after it, both ways. */
void conn_sasl_layer_start(struct conn *c);
/* True when c's bytes go through a SASL security layer. */
bool conn_sasl_layer(const struct conn *c);
/* Drops c's session unless a layer is on (a bind that failed or was not SASL). */
void conn_sasl_drop(struct conn *c);

#endif
