/* A TLS server session on its socket, for the HTTP endpoint (tls_socket.h). */
#include "server/net/tls_socket.h"

#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"
#include "server/net/tls_session.h"

struct tls_socket {
	SSL *ssl;
	bool done;   /* handshake complete */
	bool broken; /* a call failed: no close_notify (a stalled peer would hold it) */
	char why[200];
};

struct tls_socket *tls_socket_new(struct tls_server *ts, int fd)
{
	struct tls_socket *t = calloc(1, sizeof(*t));
	SSL *ssl = t ? tls_server_ssl(ts) : NULL;
	if (!ssl || SSL_set_fd(ssl, fd) != 1) {
		log_error("TLS: no memory for a session");
		SSL_free(ssl);
		free(t);
		ERR_clear_error();
		return NULL;
	}
	/* The endpoint lets clients in by address (snapshot_allow, the loopback), not by
	 * certificate: a scraper or a seeding replica sends none, whatever tls_verify_client
	 * asks of LDAP clients. */
	SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL);
	SSL_set_accept_state(ssl);
	t->ssl = ssl;
	return t;
}

/* Records why the call that returned rc failed. */
static void failed(struct tls_socket *t, int rc, const char *during)
{
	int e = SSL_get_error(t->ssl, rc);
	unsigned long err = ERR_peek_last_error();
	char reason[160] = "the peer closed the connection";
	if (err)
		ERR_error_string_n(err, reason, sizeof(reason));
	else if (e == SSL_ERROR_SYSCALL && errno)
		snprintf(reason, sizeof(reason), "%s", strerror(errno));
	snprintf(t->why, sizeof(t->why), "%s: %s", during, reason);
	t->broken = true;
	ERR_clear_error();
}

enum tls_socket_step tls_socket_handshake(struct tls_socket *t)
{
	if (t->done)
		return TLS_SOCKET_DONE;
	int rc = SSL_do_handshake(t->ssl);
	if (rc == 1) {
		t->done = true;
		return TLS_SOCKET_DONE;
	}
	switch (SSL_get_error(t->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return TLS_SOCKET_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return TLS_SOCKET_WANT_WRITE;
	default:
		failed(t, rc, "handshake");
		return TLS_SOCKET_FAILED;
	}
}

ssize_t tls_socket_read(struct tls_socket *t, void *p, size_t n)
{
	int k = SSL_read(t->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
	if (k > 0)
		return k;
	switch (SSL_get_error(t->ssl, k)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE: /* a ticket or key update the socket would not take yet */
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN: /* close_notify */
		ERR_clear_error();
		return 0;
	default:
		failed(t, k, "read");
		errno = EPROTO;
		return -1;
	}
}

int tls_socket_write(struct tls_socket *t, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		int chunk = n > INT_MAX ? INT_MAX : (int)n;
		int k = SSL_write(t->ssl, c, chunk);
		if (k <= 0) {
			failed(t, k, "write");
			return -1;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

const char *tls_socket_why(const struct tls_socket *t)
{
	return t->why[0] ? t->why : "unknown";
}

void tls_socket_free(struct tls_socket *t)
{
	if (!t)
		return;
	if (t->done && !t->broken)
		SSL_shutdown(t->ssl); /* close_notify, as far as the socket takes it at once */
	ERR_clear_error();
	SSL_free(t->ssl);
	free(t);
}
