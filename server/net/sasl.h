/*
 * SASL binds other than EXTERNAL, through Cyrus SASL (libsasl2, the library slapd and
 * 389-ds use): GSSAPI, a Kerberos ticket for the service ldap/sasl_host@sasl_realm whose
 * key is in sasl_keytab. What other rooms use of it: the server's setup, the mechanisms it
 * offers (the root DSE), and a connection's bind steps; conn_sasl.c keeps each
 * connection's SASL session and its security layer, sasl.c the library's setup.
 *
 * A bind runs as steps (RFC 4513 5.2.2): each BindRequest's credentials go to the
 * session, whose answer is a challenge (saslBindInProgress, 14) or the end. The GSS calls
 * of a step are CPU and local file reads (the keytab; MIT's replay cache, under
 * KRB5RCACHEDIR): they run on the worker, as a simple bind's password check does; a
 * step is bounded by the size of the credentials (max_pdu_bytes_anonymous).
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

/* What a bind step ended with (conn_sasl_step). */
enum sasl_step_status {
	SASL_STEP_DONE,     /* authenticated: conn_sasl_who tells who */
	SASL_STEP_CONTINUE, /* answer 14 with out as the challenge */
	SASL_STEP_FAILED,   /* answer rc with why; the session is gone */
};

struct sasl_step {
	const char *out; /* serverSaslCreds (DONE, CONTINUE), the session's: valid until the
	                    next call on c; NULL: none */
	unsigned outlen;
	int rc;        /* FAILED: the LDAP result code (49, 50, 13, 80, ...) */
	char why[256]; /* FAILED: the diagnostic message */
};

/*
 * One step of c's SASL bind with mechanism mech (offered by the server: the caller
 * checked) and the client's credentials cred (has_cred false: none were sent): the first
 * step makes c's session (a session of another mechanism, or a finished one, is dropped
 * first). The session's external strength is c's TLS cipher's bits. Fills *st and returns
 * its status.
 */
enum sasl_step_status conn_sasl_step(struct conn *c, const struct berval *mech,
                                     const struct berval *cred, bool has_cred,
                                     struct sasl_step *st);

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
