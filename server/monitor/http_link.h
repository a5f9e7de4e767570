/*
 * One client connection of the operators' HTTP endpoint (http.h): its socket, and its TLS
 * session when metrics_tls is on (server/net/tls_socket.h), read and written the same way
 * by the endpoint's thread (http.c) and by a /snapshot stream's (snapshot.c).
 *
 * Reading is non-blocking (the endpoint's poll loop); sending is on a socket made blocking
 * with a bound on each send (http_link_blocking), so a client that takes nothing loses its
 * answer within that time.
 *
 * Thread rules: a link is used by one thread at a time; the endpoint hands a /snapshot
 * request's link to the stream's thread whole.
 */
#ifndef MINIDIR_SERVER_MONITOR_HTTP_LINK_H
#define MINIDIR_SERVER_MONITOR_HTTP_LINK_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

struct tls_socket;

struct http_link {
	int fd;                 /* -1: closed */
	struct tls_socket *tls; /* NULL: plain HTTP */
};

/*
 * Advances a TLS link's handshake: 0 once it is complete (at once for plain HTTP), POLLIN
 * or POLLOUT to wait for, -1 when it failed (logged at debug level, with the peer's name
 * peer).
 */
int http_link_handshake(struct http_link *l, const char *peer);
/* Up to n bytes the client sent, as recv(2) on a non-blocking socket: -1 with errno
 * EAGAIN when nothing waits, 0 at its end. */
ssize_t http_link_recv(struct http_link *l, void *p, size_t n);
/* Makes the socket blocking, each send bounded by timeout_ms (SO_SNDTIMEO). */
void http_link_blocking(struct http_link *l, int timeout_ms);
/* Sends iov[0..n) whole (iov is consumed). 0, or -1 when the client went or a send
 * timed out. */
int http_link_sendv(struct http_link *l, struct iovec *iov, int n);
/* http_link_sendv of p[0..n). */
int http_link_send(struct http_link *l, const void *p, size_t n);
/* The end of the answer, for the client: the TLS session's close_notify, then the
 * socket shut down for writing (left open). */
void http_link_end(struct http_link *l);
/* Ends the TLS session (close_notify), closes the socket; fd becomes -1. */
void http_link_close(struct http_link *l);

#endif
