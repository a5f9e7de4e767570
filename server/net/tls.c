/* TLS sessions over memory buffers, and the server context SIGHUP replaces. */
#include "server/net/tls.h"

#include "conf/config.h"
#include "server/net/tls_session.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/log.h"

/*
 * The sessions' BIO: the one a TLS session reads its ciphertext from and writes its records to, in
 * place of OpenSSL's memory BIOs: it reads straight from bytes the caller lends
 * (struct tls_bio_io's in) and appends straight to a struct buf the caller names (out). A
 * memory BIO would copy each direction once more, through a BUF_MEM of its own, and
 * take a BIO_ctrl_pending and a BIO_read per flush to give the records back.
 *
 * An empty input reads as "retry" (SSL_ERROR_WANT_READ), never as end of file; a
 * write fails (no retry) only when out cannot grow. Flushing does nothing.
 *
 * Thread rules: the method is made once per server context (tls_setup) and shared,
 * read-only; a BIO and its io belong to one session.
 */

/* What a BIO reads and writes: set by the session before each OpenSSL call. */
struct tls_bio_io {
	const unsigned char *in; /* ciphertext not yet read (borrowed), in_len bytes */
	size_t in_len;
	struct buf *out; /* where records go (borrowed; never NULL while OpenSSL may write) */
};

static int io_read(BIO *b, char *data, size_t len, size_t *got)
{
	struct tls_bio_io *io = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	if (io->in_len == 0) {
		BIO_set_retry_read(b);
		*got = 0;
		return 0;
	}
	size_t n = len < io->in_len ? len : io->in_len;
	memcpy(data, io->in, n);
	io->in += n;
	io->in_len -= n;
	*got = n;
	return 1;
}

static int io_write(BIO *b, const char *data, size_t len, size_t *put)
{
	struct tls_bio_io *io = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	*put = 0;
	if (!io->out || buf_append(io->out, data, len) < 0)
		return 0;
	*put = len;
	return 1;
}

static long io_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	(void)ptr;
	struct tls_bio_io *io = BIO_get_data(b);
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_PENDING:
		return (long)io->in_len;
	default: /* no EOF, nothing waiting to be written, no kernel TLS */
		return 0;
	}
}

static int io_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* The method, or NULL (out of memory). Freed with BIO_meth_free. */
static BIO_METHOD *tls_bio_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "minidir session");
	if (m && (!BIO_meth_set_read_ex(m, io_read) || !BIO_meth_set_write_ex(m, io_write) ||
	          !BIO_meth_set_ctrl(m, io_ctrl) || !BIO_meth_set_create(m, io_create))) {
		BIO_meth_free(m);
		return NULL;
	}
	return m;
}

/* A BIO of method m over io (borrowed: it must outlive the BIO), or NULL. */
static BIO *tls_bio_new(const BIO_METHOD *m, struct tls_bio_io *io)
{
	BIO *b = BIO_new(m);
	if (b)
		BIO_set_data(b, io);
	return b;
}

#define TLS_SUITES_DEFAULT                                                                         \
	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

struct tls_server {
	pthread_mutex_t lock; /* around ctx: replaced by SIGHUP, taken by new sessions */
	SSL_CTX *ctx;
	BIO_METHOD *bio; /* the sessions' BIO (below): fixed at tls_setup */
	bool ktls;       /* tls_ktls = yes and the kernel has it: fixed at tls_setup */
};

/*
 * Ciphertext in: tls_input lends the bytes it was given to the BIO (io.in) and OpenSSL
 * reads them into its own buffer (read-ahead: all of them, a buffer at a time, while
 * tls_input reads records); any it did not take wait in held for the next call. Ciphertext out:
 * during tls_output the BIO appends records straight to the caller's buffer; what OpenSSL writes at
 * other times (handshake, tickets, alerts) waits in own, and tls_output puts it first.
 */
struct tls_session {
	SSL *ssl;
	BIO *bio;             /* the BIO above, over io: read, and written unless sock_wbio */
	struct tls_bio_io io; /* io.out is &own but inside tls_output */
	struct buf own, held; /* ciphertext to send, received but not yet read */
	bool done;            /* handshake complete */
	bool sock_wbio; /* kernel TLS: the write BIO is the socket (until the handshake ends) */
	bool ktls_send; /* the kernel encrypts what is sent (tls_kernel_send) */
	bool failed;
	char why[200];
};

/* The reason of the last OpenSSL error (and clears the queue), or fallback. */
static void openssl_reason(char *out, size_t cap, const char *fallback)
{
	unsigned long e = ERR_peek_last_error();
	if (e)
		ERR_error_string_n(e, out, cap);
	else
		snprintf(out, cap, "%s", fallback);
	ERR_clear_error();
}

/* Logs "KEY FILE: reason" for a file the context could not use. Returns NULL. */
static SSL_CTX *ctx_fail(SSL_CTX *ctx, const char *key, const char *file, const char *what)
{
	char why[256];
	if (file && access(file, R_OK) != 0)
		snprintf(why, sizeof(why), "%s", strerror(errno));
	else
		openssl_reason(why, sizeof(why), what);
	log_error("TLS: %s %s: %s", key, file ? file : "", why);
	SSL_CTX_free(ctx);
	return NULL;
}

/* allow: a client certificate is asked for; a missing or bad one does not end the handshake. */
static int verify_allow(int ok, X509_STORE_CTX *store)
{
	(void)ok;
	(void)store;
	return 1;
}

static SSL_CTX *build_ctx(const struct config *cfg)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx)
		return ctx_fail(NULL, "context", NULL, "out of memory");
	SSL_CTX_set_min_proto_version(ctx,
	                              cfg->tls_min_version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
	                             SSL_OP_NO_COMPRESSION);
	/* A session keeps its read and write buffers while it is busy (SSL_MODE_RELEASE_BUFFERS
	 * would free and allocate each of them once a record: 4% of a TLS lookup's instructions)
	 * and gives them back when its connection idles (tls_session_idle). Read-ahead: OpenSSL
	 * takes all the ciphertext a recv brought in one BIO read, not a header and then a body. */
	SSL_CTX_set_read_ahead(ctx, 1);
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"minidir", 7);
	/* One TLS 1.3 ticket per handshake, not OpenSSL's two: each costs an encoding, an
	 * encryption and a MAC (5% of a full handshake's instructions, bench/handshake.sh). */
	SSL_CTX_set_num_tickets(ctx, 1);
	if (cfg->tls_ciphers[0] && SSL_CTX_set_cipher_list(ctx, cfg->tls_ciphers) != 1)
		return ctx_fail(ctx, "tls_ciphers", cfg->tls_ciphers,
		                "no cipher it names is usable");
	/* OpenSSL's three TLS 1.3 suites in Mozilla's order, AES-128-GCM first: its SHA-256 key
	 * schedule costs 3.5% less of a handshake than SHA-384's. */
	const char *suites = cfg->tls_ciphersuites[0] ? cfg->tls_ciphersuites : TLS_SUITES_DEFAULT;
	if (SSL_CTX_set_ciphersuites(ctx, suites) != 1)
		return ctx_fail(ctx, "tls_ciphersuites", cfg->tls_ciphersuites,
		                "no suite it names is usable");
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert_file) != 1)
		return ctx_fail(ctx, "tls_cert_file", cfg->tls_cert_file, "not a PEM certificate");
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key_file, SSL_FILETYPE_PEM) != 1) {
		bool mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
		if (mismatch)
			ERR_clear_error();
		return ctx_fail(ctx, "tls_key_file", cfg->tls_key_file,
		                mismatch ? "does not match the certificate in tls_cert_file"
		                         : "not a PEM private key");
	}
	if (SSL_CTX_check_private_key(ctx) != 1)
		return ctx_fail(ctx, "tls_key_file", cfg->tls_key_file,
		                "does not match the certificate in tls_cert_file");
	if (cfg->tls_ca_file[0]) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->tls_ca_file);
		if (!names || SSL_CTX_load_verify_locations(ctx, cfg->tls_ca_file, NULL) != 1) {
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			return ctx_fail(ctx, "tls_ca_file", cfg->tls_ca_file, "no PEM certificate");
		}
		SSL_CTX_set_client_CA_list(ctx, names);
	}
	switch (cfg->tls_verify_client) {
	case TLS_VERIFY_NEVER:
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
		break;
	case TLS_VERIFY_ALLOW:
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_allow);
		break;
	case TLS_VERIFY_DEMAND:
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
		break;
	}
	return ctx;
}

/* Whether kernel TLS can be used: OpenSSL built with it and the kernel's "tls" ULP. Returns
 * true, or false with why ("this kernel has no tls ULP: ..."). */
static bool ktls_probe(char *why, size_t cap)
{
#ifdef OPENSSL_NO_KTLS
	snprintf(why, cap, "this OpenSSL was built without kernel TLS");
	return false;
#else
#ifndef TCP_ULP
#define TCP_ULP 31
#endif
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, cap, "socket: %s", strerror(errno));
		return false;
	}
	/* The ULP attaches to connected sockets only: ENOTCONN says that it exists, ENOENT that
	 * it does not (the kernel loads the tls module on this call if it can). */
	int rc = setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls"));
	int err = errno;
	close(fd);
	if (rc == 0 || err == ENOTCONN)
		return true;
	/* For the tests (tls_session.h): as if the kernel had it. OpenSSL then fails to hand over
	 * the keys, and the sessions go back to memory buffers after a handshake on the socket. */
	const char *assume = getenv("MINIDIR_KTLS_ASSUME");
	if (assume && strcmp(assume, "1") == 0) {
		log_info("TLS: MINIDIR_KTLS_ASSUME=1: kernel TLS assumed (%s)", strerror(err));
		return true;
	}
	snprintf(why, cap, "this kernel has no tls ULP: setsockopt TCP_ULP \"tls\": %s",
	         strerror(err));
	return false;
#endif
}

int tls_setup(const struct config *cfg, struct tls_server **out)
{
	*out = NULL;
	if (!cfg->tls_cert_file[0])
		return 0;
	SSL_CTX *ctx = build_ctx(cfg);
	if (!ctx)
		return -1;
	struct tls_server *ts = calloc(1, sizeof(*ts));
	if (!ts || !(ts->bio = tls_bio_method())) {
		log_error("TLS: out of memory");
		free(ts);
		SSL_CTX_free(ctx);
		return -1;
	}
	pthread_mutex_init(&ts->lock, NULL);
	ts->ctx = ctx;
	*out = ts;
	log_info("TLS: certificate %s, client certificates %s, TLS %s and above (%s)",
	         cfg->tls_cert_file, config_tls_verify_name(cfg->tls_verify_client),
	         cfg->tls_min_version == 13 ? "1.3" : "1.2", OpenSSL_version(OPENSSL_VERSION));
	char why[200];
	if (cfg->tls_ktls && (ts->ktls = ktls_probe(why, sizeof(why))))
		log_info("TLS: kernel TLS on (tls_ktls): handshakes write to the socket, "
		         "then the kernel builds the records of what connections send");
	else if (cfg->tls_ktls)
		log_info("TLS: kernel TLS requested but %s; using userspace TLS", why);
	return 0;
}

bool tls_kernel(const struct tls_server *ts)
{
	return ts && ts->ktls;
}

void tls_reload(struct tls_server *ts, const struct config *cfg)
{
	if (!ts)
		return;
	SSL_CTX *ctx = build_ctx(cfg);
	if (!ctx) {
		log_error("SIGHUP: TLS keeps its certificate and key");
		return;
	}
	pthread_mutex_lock(&ts->lock);
	SSL_CTX *old = ts->ctx;
	ts->ctx = ctx;
	pthread_mutex_unlock(&ts->lock);
	SSL_CTX_free(old); /* open sessions hold their own reference */
	log_info("SIGHUP: TLS certificate %s and key reloaded (for new connections)",
	         cfg->tls_cert_file);
}

void tls_teardown(struct tls_server *ts)
{
	if (!ts)
		return;
	SSL_CTX_free(ts->ctx);
	BIO_meth_free(ts->bio); /* after the sessions: the server's end */
	pthread_mutex_destroy(&ts->lock);
	free(ts);
}

SSL *tls_server_ssl(struct tls_server *ts)
{
	pthread_mutex_lock(&ts->lock);
	SSL *ssl = SSL_new(ts->ctx);
	pthread_mutex_unlock(&ts->lock);
	return ssl;
}

struct tls_session *tls_session_new(struct tls_server *ts, int fd)
{
	struct tls_session *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ssl = tls_server_ssl(ts);
	t->io.out = &t->own;
	t->bio = tls_bio_new(ts->bio, &t->io);
	t->sock_wbio = ts->ktls;
	BIO *wbio = t->sock_wbio ? BIO_new_socket(fd, BIO_NOCLOSE) : t->bio;
	if (!t->ssl || !t->bio || !wbio) {
		BIO_free(t->bio);
		SSL_free(t->ssl);
		free(t);
		log_error("TLS: no memory for a session");
		return NULL;
	}
	if (t->sock_wbio)
		SSL_set_options(t->ssl, SSL_OP_ENABLE_KTLS);
	SSL_set_bio(t->ssl, t->bio, wbio); /* the session owns them now (one reference) */
	SSL_set_accept_state(t->ssl);
	return t;
}

void tls_session_shutdown(struct tls_session *t)
{
	if (t && t->done && !t->failed)
		SSL_shutdown(t->ssl);
	ERR_clear_error();
}

void tls_session_free(struct tls_session *t)
{
	if (!t)
		return;
	SSL_free(t->ssl);
	buf_free(&t->own);
	buf_free(&t->held);
	free(t);
}

void tls_session_idle(struct tls_session *t)
{
	if (t->done && !t->failed)
		SSL_free_buffers(t->ssl); /* refused (kept) while one holds part of a record */
	if (buf_pending(&t->own) == 0)    /* else a ticket waits for the first answer */
		buf_free(&t->own);
}

/* Records a failure of the call that returned rc. Returns TLS_FAILED or TLS_CLOSED. */
static enum tls_status failure(struct tls_session *t, int rc, const char *during)
{
	int e = SSL_get_error(t->ssl, rc);
	if (e == SSL_ERROR_ZERO_RETURN) {
		ERR_clear_error();
		return TLS_CLOSED;
	}
	char why[160];
	openssl_reason(why, sizeof(why), e == SSL_ERROR_SYSCALL ? "unexpected end of data" : "?");
	snprintf(t->why, sizeof(t->why), "%s: %s", during, why);
	t->failed = true;
	return TLS_FAILED;
}

static enum tls_status ktls_fail(struct tls_session *t, const char *why)
{
	snprintf(t->why, sizeof(t->why), "handshake: kernel TLS: %s", why);
	t->failed = true;
	return TLS_FAILED;
}

/* Kernel TLS, the handshake done: either the kernel took the keys for sending, or (a cipher it
 * lacks) records are built in user space from here, through memory as without tls_ktls.
 * Returns 0 or -1 (out of memory). */
static int ktls_handshake_done(struct tls_session *t)
{
#ifndef OPENSSL_NO_KTLS
	t->ktls_send = BIO_get_ktls_send(SSL_get_wbio(t->ssl)) == 1;
#endif
	if (t->ktls_send)
		return 0;
	if (BIO_up_ref(t->bio) != 1)
		return -1;
	SSL_set0_wbio(t->ssl, t->bio); /* frees the socket BIO (not the socket) */
	t->sock_wbio = false;
	return 0;
}

/* Marks t failed for want of memory. Returns TLS_FAILED. */
static enum tls_status no_memory(struct tls_session *t)
{
	snprintf(t->why, sizeof(t->why), "out of memory");
	t->failed = true;
	return TLS_FAILED;
}

/* tls_input's work on the ciphertext lent in t->io. */
static enum tls_status input(struct tls_session *t, struct buf *plain)
{
	if (!t->done) {
		int rc = SSL_do_handshake(t->ssl);
		if (rc != 1) {
			int e = SSL_get_error(t->ssl, rc);
			if (e == SSL_ERROR_WANT_READ)
				return TLS_OK;
			if (e == SSL_ERROR_WANT_WRITE) /* nothing would drive it on: say so */
				return ktls_fail(t, "the socket did not take the whole handshake");
			return failure(t, rc, "handshake");
		}
		t->done = true;
		if (t->sock_wbio && ktls_handshake_done(t) < 0)
			return ktls_fail(t, "out of memory");
	}
	for (;;) {
		if (buf_reserve(plain, TLS_RECORD_PLAIN + 1) < 0)
			return no_memory(t);
		int room = (int)(plain->cap - plain->len - 1);
		int n = SSL_read(t->ssl, plain->data + plain->len, room);
		if (n > 0) {
			plain->len += (size_t)n;
			/* Nothing more to decrypt: another SSL_read would only say WANT_READ, after
			 * a walk through the record layer and the error queue (about 1,000
			 * instructions a request). */
			if (!SSL_has_pending(t->ssl) && t->io.in_len == 0)
				return TLS_OK;
			continue;
		}
		int e = SSL_get_error(t->ssl, n);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) /* WRITE: kernel TLS */
			return TLS_OK;
		return failure(t, n, "read");
	}
}

enum tls_status tls_input(struct tls_session *t, const void *in, size_t len, struct buf *plain)
{
	if (t->failed)
		return TLS_FAILED;
	bool from_held = buf_pending(&t->held) > 0;
	if (from_held) { /* after what an earlier call left */
		if (buf_append(&t->held, in, len) < 0)
			return no_memory(t);
		in = t->held.data + t->held.off;
		len = buf_pending(&t->held);
	}
	t->io.in = in;
	t->io.in_len = len;
	enum tls_status s = input(t, plain);
	/* With read-ahead OpenSSL takes all it is lent; bytes stay only when it stopped for
	 * something else (kernel TLS: a socket that would not take a write SSL_read made). */
	size_t left = t->io.in_len;
	if (s == TLS_OK && from_held)
		buf_consume(&t->held, buf_pending(&t->held) - left);
	else if (s == TLS_OK && left > 0 && buf_append(&t->held, t->io.in, left) < 0)
		s = no_memory(t);
	if (buf_pending(&t->held) == 0)
		buf_free(&t->held);
	t->io.in = NULL;
	t->io.in_len = 0;
	return s;
}

int tls_output(struct tls_session *t, const void *plain, size_t len, struct buf *cipher,
               unsigned *records)
{
	*records = 0;
	if (t->failed)
		return -1;
	/* What the session wrote before (handshake, tickets, alerts) goes first. */
	if (buf_pending(&t->own)) {
		if (buf_append(cipher, t->own.data + t->own.off, buf_pending(&t->own)) < 0)
			return -1;
		t->own.off = t->own.len = 0;
	}
	if (len == 0)
		return 0;
	t->io.out = cipher;
	int n = SSL_write(t->ssl, plain, (int)len);
	t->io.out = &t->own;
	if (n <= 0 || (size_t)n != len) {
		failure(t, n, "write");
		return -1;
	}
	*records = (unsigned)((len + TLS_RECORD_PLAIN - 1) / TLS_RECORD_PLAIN);
	return 0;
}

bool tls_handshake_done(const struct tls_session *t)
{
	return t->done;
}

bool tls_kernel_send(const struct tls_session *t)
{
	return t->ktls_send;
}

const char *tls_why(const struct tls_session *t)
{
	return t->why[0] ? t->why : "unknown";
}

void tls_describe(const struct tls_session *t, char *out, size_t cap)
{
	snprintf(out, cap, "%s %s", SSL_get_version(t->ssl), SSL_get_cipher_name(t->ssl));
}

unsigned tls_cipher_bits(const struct tls_session *t)
{
	int bits = SSL_is_init_finished(t->ssl) ? SSL_get_cipher_bits(t->ssl, NULL) : 0;
	return bits > 0 ? (unsigned)bits : 0;
}

bool tls_has_output(const struct tls_session *t)
{
	return buf_pending(&t->own) > 0;
}

bool tls_is_13(const struct tls_session *t)
{
	return SSL_version(t->ssl) == TLS1_3_VERSION;
}

bool tls_resumed(const struct tls_session *t)
{
	return SSL_session_reused(t->ssl) == 1;
}

size_t tls_peer_subject(const struct tls_session *t, char *out, size_t cap)
{
	X509 *cert = SSL_get0_peer_certificate(t->ssl);
	if (!cert || SSL_get_verify_result(t->ssl) != X509_V_OK || cap == 0)
		return 0;
	BIO *b = BIO_new(BIO_s_mem());
	if (!b)
		return 0;
	size_t n = 0;
	/* RFC 2253 order and escaping: an LDAP DN, most specific RDN first. */
	if (X509_NAME_print_ex(b, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
		int got = BIO_read(b, out, (int)cap - 1);
		n = got > 0 ? (size_t)got : 0;
	}
	out[n] = '\0';
	BIO_free(b);
	return n;
}
