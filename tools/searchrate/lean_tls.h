/*
 * lean_tls.h: TLS for the lean engine, through OpenSSL directly (--useSSL, --useStartTLS,
 * --trustAll, --trustStorePath, --resumeTLSSessions). A connection is a socket and, with TLS,
 * an SSL object on it (a BIO of recv and send on the socket, with read-ahead: the engine's
 * recv and send become SSL_read and SSL_write on the same non-blocking socket, and epoll still
 * watches the socket).
 *
 * Each load thread has its own client context (struct lean_tls), so threads share no TLS
 * state: its certificate checks (the CAs of --trustStorePath or the system's, and the
 * server's name or address, as --hostname gives it; none with --trustAll) and, with
 * --resumeTLSSessions, the newest session the server gave (a TLS 1.3 ticket or a TLS 1.2
 * session), offered by the next handshake of the thread. Without it every handshake is full,
 * as with the libldap engine.
 */
#ifndef SEARCHRATE_LEAN_TLS_H
#define SEARCHRATE_LEAN_TLS_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tools/searchrate/options.h"

/* One thread's client context. */
struct lean_tls {
	SSL_CTX *ctx;        /* owned; NULL without TLS */
	BIO_METHOD *fd_bio;  /* owned: the sessions' BIO over their socket */
	SSL_SESSION *resume; /* owned: the session offered next (--resumeTLSSessions), or NULL */
};

/* A connection's transport: the socket, and its TLS session (NULL: plain LDAP). */
struct lean_link {
	int fd;
	SSL *ssl;   /* owned by the connection */
	short want; /* after an EAGAIN from lean_link_recv/send: POLLIN or POLLOUT to wait for */
};

/* Makes t's context from cfg (borrowed; nothing without --useSSL or --useStartTLS). Returns
 * true, or false with the OpenSSL reason in err (the trust store could not be loaded). */
bool lean_tls_init(struct lean_tls *t, const struct sr_config *cfg, char *err, size_t errlen);
/* Frees what t owns (t itself is the caller's). */
void lean_tls_free(struct lean_tls *t);

/*
 * The TLS handshake on l->fd (connected, non-blocking), waiting at most ms for each step.
 * On success l->ssl holds the session, and *resumed says whether an earlier session was
 * taken up (false without --resumeTLSSessions). On failure returns false with l->ssl NULL,
 * the reason in diag, and *cert_rejected true when the server's certificate failed the
 * checks.
 */
bool lean_tls_handshake(struct lean_tls *t, const struct sr_config *cfg, struct lean_link *l,
                        int ms, bool *resumed, bool *cert_rejected, char *diag, size_t diaglen);

/* As recv(2) and send(2) (MSG_NOSIGNAL) on l, through TLS when l->ssl: bytes moved, 0 at the
 * end of the stream (recv), or -1 with errno (EAGAIN: wait for l->want, then try again). */
ssize_t lean_link_recv(struct lean_link *l, void *buf, size_t len);
ssize_t lean_link_send(struct lean_link *l, const void *buf, size_t len);
/* True if l's TLS session holds received bytes that lean_link_recv has not returned yet
 * (read-ahead takes all that has arrived): epoll on the socket would not say so. */
bool lean_link_pending(const struct lean_link *l);

/* Ends l's TLS session: with polite, a close_notify first (sent only if it can go at once);
 * frees l->ssl. Does not close the socket. */
void lean_link_end(struct lean_link *l, bool polite);

#endif
