/*
 * server/net/tls.c and its BIO: a server session against an OpenSSL client over memory, the
 * ciphertext carried by hand between them whole, in pieces or a byte at a time; records,
 * session tickets, idle sessions giving their buffers back, close_notify and garbage.
 */
#include <check.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "protocol/buf.h"
#include "server/net/tls.h"
#include "server/net/tls_session.h"
#include "tests/check_run.h"

static char dir[] = "/tmp/minidir-test-tls.XXXXXX";
static struct config cfg;
static struct tls_server *ts;

/* A self-signed EC P-256 certificate for localhost, and its key, as PEM files in dir. */
static void make_certificate(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	ck_assert(key && x);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1,
	                           -1, 0);
	X509_set_issuer_name(x, name);
	X509_set_pubkey(x, key);
	ck_assert_int_gt(X509_sign(x, key, EVP_sha256()), 0);
	snprintf(cfg.tls_cert_file, sizeof(cfg.tls_cert_file), "%s/cert.pem", dir);
	snprintf(cfg.tls_key_file, sizeof(cfg.tls_key_file), "%s/key.pem", dir);
	FILE *f = fopen(cfg.tls_cert_file, "w");
	ck_assert(f && PEM_write_X509(f, x) == 1);
	fclose(f);
	f = fopen(cfg.tls_key_file, "w");
	ck_assert(f && PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(key);
}

static void setup(void)
{
	make_certificate();
	cfg.tls_min_version = 12;
	cfg.tls_verify_client = TLS_VERIFY_NEVER;
	ck_assert_int_eq(tls_setup(&cfg, &ts), 0);
	ck_assert_ptr_nonnull(ts);
}

static void teardown(void)
{
	tls_teardown(ts);
	ts = NULL;
	unlink(cfg.tls_cert_file);
	unlink(cfg.tls_key_file);
	rmdir(dir);
	strcpy(dir, "/tmp/minidir-test-tls.XXXXXX");
}

/* Both ends: the server's session and plaintext, and a client over memory BIOs. */
struct pair {
	struct tls_session *t;
	struct buf plain;  /* what the server decrypted */
	struct buf cipher; /* what the server wrote */
	SSL_CTX *cctx;
	SSL *c;
	BIO *to_client, *from_client; /* the client's read and write BIOs */
	size_t chunk;                 /* ciphertext handed to tls_input at a time (0: all) */
	unsigned records;             /* counted by the last tls_output */
};

/* Client to server: everything the client wrote, through tls_input; returns its status. */
static enum tls_status to_server(struct pair *p)
{
	enum tls_status s = TLS_OK;
	char buf[65536];
	int n = BIO_read(p->from_client, buf, sizeof(buf));
	for (int off = 0; n > 0 && off < n && s == TLS_OK;) {
		size_t len =
		    p->chunk && p->chunk < (size_t)(n - off) ? p->chunk : (size_t)(n - off);
		s = tls_input(p->t, buf + off, len, &p->plain);
		off += (int)len;
	}
	return s;
}

/* Server to client: plain[0..len) as records after what the session had to send. */
static void to_client(struct pair *p, const void *plain, size_t len)
{
	p->cipher.off = p->cipher.len = 0;
	ck_assert_int_eq(tls_output(p->t, plain, len, &p->cipher, &p->records), 0);
	if (p->cipher.len)
		ck_assert_int_eq(BIO_write(p->to_client, p->cipher.data, (int)p->cipher.len),
		                 (int)p->cipher.len);
}

static void pair_open(struct pair *p, int client_max_version)
{
	*p = (struct pair){0};
	p->t = tls_session_new(ts, -1);
	ck_assert_ptr_nonnull(p->t);
	p->cctx = SSL_CTX_new(TLS_client_method());
	ck_assert_ptr_nonnull(p->cctx);
	SSL_CTX_set_max_proto_version(p->cctx, client_max_version);
	/* The certificate is checked, as a real client would. */
	ck_assert_int_eq(SSL_CTX_load_verify_locations(p->cctx, cfg.tls_cert_file, NULL), 1);
	SSL_CTX_set_verify(p->cctx, SSL_VERIFY_PEER, NULL);
	p->c = SSL_new(p->cctx);
	ck_assert_int_eq(SSL_set1_host(p->c, "localhost"), 1);
	p->to_client = BIO_new(BIO_s_mem());
	p->from_client = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(p->to_client, -1);
	SSL_set_bio(p->c, p->to_client, p->from_client);
	SSL_set_connect_state(p->c);
	for (int round = 0; round < 10 && !(tls_handshake_done(p->t) && SSL_is_init_finished(p->c));
	     round++) {
		int rc = SSL_do_handshake(p->c);
		ck_assert_msg(rc == 1 || SSL_get_error(p->c, rc) == SSL_ERROR_WANT_READ,
		              "client handshake failed");
		ck_assert_int_eq(to_server(p), TLS_OK);
		/* As conn_tls.c: a TLS 1.3 ticket waits for the first answer. */
		if (!tls_handshake_done(p->t) || !tls_is_13(p->t))
			to_client(p, NULL, 0);
	}
	ck_assert(tls_handshake_done(p->t));
	ck_assert(SSL_is_init_finished(p->c));
	ck_assert_int_eq(SSL_get_verify_result(p->c), X509_V_OK);
}

static void pair_close(struct pair *p)
{
	tls_session_free(p->t);
	SSL_free(p->c);
	SSL_CTX_free(p->cctx);
	buf_free(&p->plain);
	buf_free(&p->cipher);
	ERR_clear_error();
}

/* The client sends data[0..len) in writes of at most `each` bytes; the server must
 * decrypt all of it, in order. */
static void client_sends(struct pair *p, const unsigned char *data, size_t len, size_t each)
{
	size_t before = p->plain.len;
	for (size_t off = 0; off < len; off += each) {
		size_t n = len - off < each ? len - off : each;
		ck_assert_int_eq(SSL_write(p->c, data + off, (int)n), (int)n);
	}
	ck_assert_int_eq(to_server(p), TLS_OK);
	ck_assert_uint_eq(p->plain.len - before, len);
	ck_assert(memcmp(p->plain.data + before, data, len) == 0);
	ck_assert_uint_gt(p->plain.cap, p->plain.len); /* one spare byte, as tls.h says */
}

/* The server sends data[0..len); the client must read all of it. */
static void server_sends(struct pair *p, const unsigned char *data, size_t len)
{
	to_client(p, data, len);
	ck_assert_uint_eq(p->records, (len + TLS_RECORD_PLAIN - 1) / TLS_RECORD_PLAIN);
	unsigned char *got = malloc(len + 1);
	size_t have = 0;
	while (have < len) {
		int n = SSL_read(p->c, got + have, (int)(len - have));
		ck_assert_int_gt(n, 0);
		have += (size_t)n;
	}
	ck_assert(memcmp(got, data, len) == 0);
	free(got);
}

static unsigned char *pattern(size_t len)
{
	unsigned char *d = malloc(len);
	for (size_t i = 0; i < len; i++)
		d[i] = (unsigned char)(i * 7 + i / 251);
	return d;
}

START_TEST(requests_and_answers_both_ways)
{
	struct pair p;
	pair_open(&p, _i == 0 ? 0 : TLS1_2_VERSION); /* 0: the highest, TLS 1.3 */
	ck_assert(tls_is_13(p.t) == (_i == 0));
	char what[128];
	tls_describe(p.t, what, sizeof(what));
	ck_assert_msg(strstr(what, "GCM"), "negotiated %s", what);
	/* TLS 1.3: the ticket, written when the handshake ended, goes with the first answer. */
	ck_assert(tls_has_output(p.t) == (_i == 0));
	static const unsigned char req[] = "a request", answer[] = "an answer";
	client_sends(&p, req, sizeof(req), sizeof(req));
	server_sends(&p, answer, sizeof(answer));
	ck_assert(!tls_has_output(p.t));
	for (int i = 0; i < 50; i++) { /* records one after another, each answered */
		client_sends(&p, req, sizeof(req), sizeof(req));
		server_sends(&p, answer, sizeof(answer));
	}
	pair_close(&p);
}
END_TEST

/* Several records, large and small, reach the server whole, cut anywhere, or a byte at a
 * time: the plaintext is the same. */
START_TEST(ciphertext_in_any_pieces)
{
	static const size_t chunks[] = {0, 1, 5, 6, 100, 16389, 16390};
	struct pair p;
	pair_open(&p, 0);
	p.chunk = chunks[_i];
	size_t len = 3 * TLS_RECORD_PLAIN + 1000;
	unsigned char *d = pattern(len);
	client_sends(&p, d, 10, 1);                     /* ten one-byte records */
	client_sends(&p, d, len, len);                  /* four records, three full */
	client_sends(&p, d, 2 * TLS_RECORD_PLAIN, 700); /* 47 records in one go */
	free(d);
	pair_close(&p);
}
END_TEST

START_TEST(large_answers_are_full_records)
{
	struct pair p;
	pair_open(&p, 0);
	size_t len = 2 * TLS_RECORD_PLAIN + 123;
	unsigned char *d = pattern(len);
	server_sends(&p, d, len);
	ck_assert_uint_eq(p.records, 3);
	server_sends(&p, d, TLS_RECORD_PLAIN);
	ck_assert_uint_eq(p.records, 1);
	free(d);
	pair_close(&p);
}
END_TEST

/* An idle session gives its buffers back and works on after; one that holds part of a
 * record keeps it. */
START_TEST(idle_sessions_give_buffers_back)
{
	struct pair p;
	pair_open(&p, 0);
	static const unsigned char req[] = "request", answer[] = "answer";
	ck_assert(tls_has_output(p.t));
	tls_session_idle(p.t); /* keeps the ticket: the answer's record number follows it */
	ck_assert(tls_has_output(p.t));
	client_sends(&p, req, sizeof(req), sizeof(req));
	server_sends(&p, answer, sizeof(answer));
	tls_session_idle(p.t);
	client_sends(&p, req, sizeof(req), sizeof(req));
	server_sends(&p, answer, sizeof(answer));
	/* Half a record in, idle, the other half in. */
	ck_assert_int_eq(SSL_write(p.c, req, sizeof(req)), (int)sizeof(req));
	char buf[256];
	int n = BIO_read(p.from_client, buf, sizeof(buf));
	ck_assert_int_gt(n, 10);
	size_t before = p.plain.len;
	ck_assert_int_eq(tls_input(p.t, buf, 10, &p.plain), TLS_OK);
	ck_assert_uint_eq(p.plain.len, before);
	tls_session_idle(p.t);
	ck_assert_int_eq(tls_input(p.t, buf + 10, (size_t)n - 10, &p.plain), TLS_OK);
	ck_assert_uint_eq(p.plain.len - before, sizeof(req));
	ck_assert(memcmp(p.plain.data + before, req, sizeof(req)) == 0);
	tls_session_idle(p.t);
	server_sends(&p, answer, sizeof(answer));
	pair_close(&p);
}
END_TEST

START_TEST(close_notify_closes)
{
	struct pair p;
	pair_open(&p, 0);
	static const unsigned char req[] = "last";
	/* A request and the close_notify behind it, in one piece: the request still counts. */
	ck_assert_int_eq(SSL_write(p.c, req, sizeof(req)), (int)sizeof(req));
	SSL_shutdown(p.c);
	ck_assert_int_eq(to_server(&p), TLS_CLOSED);
	ck_assert_uint_eq(p.plain.len, sizeof(req));
	/* The server's own close_notify goes out through tls_output, and the client sees it. */
	tls_session_shutdown(p.t);
	ck_assert(tls_has_output(p.t));
	to_client(&p, NULL, 0);
	char buf[16];
	int n = SSL_read(p.c, buf, sizeof(buf));
	ck_assert_int_le(n, 0);
	ck_assert_int_eq(SSL_get_error(p.c, n), SSL_ERROR_ZERO_RETURN);
	pair_close(&p);
}
END_TEST

START_TEST(garbage_fails)
{
	struct tls_session *t = tls_session_new(ts, -1);
	ck_assert_ptr_nonnull(t);
	struct buf plain = {0};
	static const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	ck_assert_int_eq(tls_input(t, junk, sizeof(junk) - 1, &plain), TLS_FAILED);
	ck_assert_msg(strstr(tls_why(t), "handshake"), "why: %s", tls_why(t));
	ck_assert_int_eq(tls_input(t, junk, 1, &plain), TLS_FAILED); /* and stays failed */
	struct buf cipher = {0};
	unsigned records;
	ck_assert_int_eq(tls_output(t, "x", 1, &cipher, &records), -1);
	tls_session_free(t);
	buf_free(&plain);
	buf_free(&cipher);
	ERR_clear_error();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("session");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, requests_and_answers_both_ways, 0, 2); /* TLS 1.3, TLS 1.2 */
	tcase_add_loop_test(tc, ciphertext_in_any_pieces, 0, 7);
	tcase_add_test(tc, large_answers_are_full_records);
	tcase_add_test(tc, idle_sessions_give_buffers_back);
	tcase_add_test(tc, close_notify_closes);
	tcase_add_test(tc, garbage_fails);
	suite_add_tcase(s, tc);
	return check_run(s);
}
