/* TLS for the lean engine, through OpenSSL: see lean_tls.h. */
#include "tools/searchrate/lean_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/*
 * The socket under a session: recv and send on the descriptor and little else. OpenSSL's
 * socket BIO does the same, but its ctrl, which OpenSSL asks a dozen times a lookup (mostly
 * whether the kernel does TLS), and its read and write wrappers cost about 500 instructions
 * a lookup more.
 */
static int fd_read(BIO *b, char *data, size_t len, size_t *got)
{
	ssize_t n = recv((int)(intptr_t)BIO_get_data(b), data, len, 0);
	BIO_clear_retry_flags(b);
	*got = n > 0 ? (size_t)n : 0;
	if (n == 0)
		BIO_set_flags(b, BIO_FLAGS_IN_EOF); /* BIO_eof: the peer closed */
	else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(b);
	return n > 0;
}

static int fd_write(BIO *b, const char *data, size_t len, size_t *put)
{
	ssize_t n = send((int)(intptr_t)BIO_get_data(b), data, len, MSG_NOSIGNAL);
	BIO_clear_retry_flags(b);
	*put = n > 0 ? (size_t)n : 0;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return n > 0;
}

static long fd_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	(void)ptr;
	if (cmd == BIO_CTRL_FLUSH)
		return 1;
	if (cmd == BIO_CTRL_EOF)
		return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
	return 0; /* nothing buffered, no kernel TLS */
}

static int fd_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO_METHOD *fd_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "searchrate fd");
	if (m && (!BIO_meth_set_read_ex(m, fd_read) || !BIO_meth_set_write_ex(m, fd_write) ||
	          !BIO_meth_set_ctrl(m, fd_ctrl) || !BIO_meth_set_create(m, fd_create))) {
		BIO_meth_free(m);
		return NULL;
	}
	return m;
}

/* A new session from the server (TLS 1.3: a ticket, after the handshake): offered next. */
static int keep_session(SSL *ssl, SSL_SESSION *sess)
{
	struct lean_tls *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	SSL_SESSION_free(t->resume);
	t->resume = sess;
	return 1; /* the reference is ours now */
}

bool lean_tls_init(struct lean_tls *t, const struct sr_config *cfg, char *err, size_t errlen)
{
	*t = (struct lean_tls){0};
	if (!cfg->use_ssl && !cfg->use_starttls)
		return true;
	t->ctx = SSL_CTX_new(TLS_client_method());
	t->fd_bio = fd_method();
	bool ok = t->ctx && t->fd_bio;
	if (ok && !cfg->trust_all)
		ok = cfg->truststore
		         ? SSL_CTX_load_verify_locations(t->ctx, cfg->truststore, NULL) == 1
		         : SSL_CTX_set_default_verify_paths(t->ctx) == 1;
	if (!ok) {
		unsigned long e = ERR_peek_last_error();
		snprintf(err, errlen, "%s", e ? ERR_reason_error_string(e) : "out of memory");
		ERR_clear_error();
		return false;
	}
	SSL_CTX_set_app_data(t->ctx, t);
	SSL_CTX_set_verify(t->ctx, cfg->trust_all ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(t->ctx,
	                 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(t->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	/* One recv takes all that has arrived, not a record's header and then its body. */
	SSL_CTX_set_read_ahead(t->ctx, 1);
	if (cfg->resume_tls) {
		SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_CLIENT |
		                                           SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(t->ctx, keep_session);
	} else {
		SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_options(t->ctx, SSL_OP_NO_TICKET);
	}
	return true;
}

void lean_tls_free(struct lean_tls *t)
{
	SSL_SESSION_free(t->resume);
	SSL_CTX_free(t->ctx);
	BIO_meth_free(t->fd_bio);
	*t = (struct lean_tls){0};
}

/* The server's name or address to check its certificate against (and SNI for a name). */
static bool expect_host(SSL *ssl, const char *host)
{
	unsigned char addr[16];
	if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1)
		return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1;
	return SSL_set1_host(ssl, host) == 1 && SSL_set_tlsext_host_name(ssl, host) == 1;
}

/* Why the handshake of ssl failed (rc its SSL_connect result), into diag. */
static void handshake_failure(SSL *ssl, int rc, bool timed_out, bool *cert_rejected, char *diag,
                              size_t diaglen)
{
	long v = SSL_get_verify_result(ssl);
	unsigned long e = ERR_peek_last_error();
	*cert_rejected = v != X509_V_OK;
	if (*cert_rejected)
		snprintf(diag, diaglen, "TLS: certificate verify failed: %s",
		         X509_verify_cert_error_string(v));
	else if (timed_out)
		snprintf(diag, diaglen, "TLS: handshake timed out");
	else if (e)
		snprintf(diag, diaglen, "TLS: %s", ERR_reason_error_string(e));
	else
		snprintf(diag, diaglen, "TLS: handshake failed (%s)",
		         SSL_get_error(ssl, rc) == SSL_ERROR_SYSCALL ? "connection closed" : "?");
	ERR_clear_error();
}

bool lean_tls_handshake(struct lean_tls *t, const struct sr_config *cfg, struct lean_link *l,
                        int ms, bool *resumed, bool *cert_rejected, char *diag, size_t diaglen)
{
	*resumed = *cert_rejected = false;
	SSL *ssl = SSL_new(t->ctx);
	BIO *bio = BIO_new(t->fd_bio);
	if (!ssl || !bio || (!cfg->trust_all && !expect_host(ssl, cfg->host))) {
		snprintf(diag, diaglen, "TLS: cannot set up a session");
		BIO_free(bio);
		SSL_free(ssl);
		ERR_clear_error();
		return false;
	}
	BIO_set_data(bio, (void *)(intptr_t)l->fd);
	SSL_set_bio(ssl, bio, bio); /* the session owns it (one reference for both ways) */
	if (t->resume)
		SSL_set_session(ssl, t->resume);
	for (;;) {
		int rc = SSL_connect(ssl);
		if (rc == 1)
			break;
		int e = SSL_get_error(ssl, rc);
		struct pollfd p = {.fd = l->fd,
		                   .events = e == SSL_ERROR_WANT_READ    ? POLLIN
		                             : e == SSL_ERROR_WANT_WRITE ? POLLOUT
		                                                         : 0};
		int n = 0;
		if (p.events)
			while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
				;
		if (n <= 0) {
			handshake_failure(ssl, rc, p.events != 0, cert_rejected, diag, diaglen);
			SSL_free(ssl);
			return false;
		}
	}
	*resumed = SSL_session_reused(ssl) == 1;
	l->ssl = ssl;
	return true;
}

/* A failed SSL_read_ex or SSL_write_ex (rc) on l, as recv or send would say it. */
static ssize_t link_error(struct lean_link *l, int rc)
{
	int e = SSL_get_error(l->ssl, rc);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		l->want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
		errno = EAGAIN;
		return -1;
	}
	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	errno = ECONNRESET;
	return -1;
}

ssize_t lean_link_recv(struct lean_link *l, void *buf, size_t len)
{
	if (!l->ssl) {
		l->want = POLLIN;
		return recv(l->fd, buf, len, 0);
	}
	size_t got = 0;
	int rc = SSL_read_ex(l->ssl, buf, len, &got);
	return rc == 1 ? (ssize_t)got : link_error(l, rc);
}

bool lean_link_pending(const struct lean_link *l)
{
	return l->ssl && SSL_has_pending(l->ssl);
}

ssize_t lean_link_send(struct lean_link *l, const void *buf, size_t len)
{
	if (!l->ssl) {
		l->want = POLLOUT;
		return send(l->fd, buf, len, MSG_NOSIGNAL);
	}
	size_t put = 0;
	int rc = SSL_write_ex(l->ssl, buf, len, &put);
	return rc == 1 ? (ssize_t)put : link_error(l, rc);
}

void lean_link_end(struct lean_link *l, bool polite)
{
	if (!l->ssl)
		return;
	if (polite)
		SSL_shutdown(l->ssl); /* close_notify, if the socket takes it now */
	ERR_clear_error();
	SSL_free(l->ssl);
	l->ssl = NULL;
}
