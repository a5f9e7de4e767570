/*
 * A TLS server session that reads and writes its socket itself (OpenSSL's socket BIO), for
 * a loop of another room that is not a worker's: the operators' HTTP endpoint
 * (server/monitor/http.h, metrics_tls). It takes the server's context (tls.h: the
 * certificate, key and versions of the config, the one SIGHUP replaces) as the
 * connections' sessions do, but none of their send policies, kernel TLS or memory buffers.
 *
 * The handshake never blocks: on a non-blocking socket tls_socket_handshake says what to
 * poll for, and the caller bounds the time it allows. Reading never blocks on such a
 * socket; writing is for a blocking socket whose SO_SNDTIMEO bounds each send (the
 * endpoint's answers and /snapshot's streams).
 *
 * Thread rules: tls_socket_new in any thread (it takes the context under its lock); a
 * session is used by one thread at a time (it may be handed to another).
 */
#ifndef MINIDIR_SERVER_NET_TLS_SOCKET_H
#define MINIDIR_SERVER_NET_TLS_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

struct tls_server;
struct tls_socket;

/* A server session on the socket fd (borrowed: never closed), or NULL (logged). */
struct tls_socket *tls_socket_new(struct tls_server *ts, int fd);

/* What tls_socket_handshake returns. */
enum tls_socket_step {
	TLS_SOCKET_DONE,       /* the handshake is complete */
	TLS_SOCKET_WANT_READ,  /* call again once the socket is readable */
	TLS_SOCKET_WANT_WRITE, /* call again once the socket is writable */
	TLS_SOCKET_FAILED,     /* tls_socket_why says why */
};
/* Advances the handshake as far as the socket allows. */
enum tls_socket_step tls_socket_handshake(struct tls_socket *t);

/*
 * Up to n bytes of plaintext into p: their count, 0 when the peer closed, -1 with errno
 * EAGAIN (nothing yet: poll for reading) or EPROTO (the session failed: tls_socket_why).
 */
ssize_t tls_socket_read(struct tls_socket *t, void *p, size_t n);
/* Sends p[0..n) whole as records. 0, or -1 (the peer went, a send timed out, the session
 * failed). */
int tls_socket_write(struct tls_socket *t, const void *p, size_t n);

/* Why the session failed (an OpenSSL reason), for the log. */
const char *tls_socket_why(const struct tls_socket *t);
/* Sends close_notify after a completed handshake (not waiting for the peer's), frees t
 * (NULL allowed). The socket stays the caller's. */
void tls_socket_free(struct tls_socket *t);

#endif
