/*
 * The BIO a TLS session (tls.c) reads its ciphertext from and writes its records to, in
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
#ifndef MINIDIR_SERVER_NET_TLS_BIO_H
#define MINIDIR_SERVER_NET_TLS_BIO_H

#include <openssl/bio.h>
#include <stddef.h>

#include "protocol/buf.h"

/* What a BIO reads and writes: set by the session before each OpenSSL call. */
struct tls_bio_io {
	const unsigned char *in; /* ciphertext not yet read (borrowed), in_len bytes */
	size_t in_len;
	struct buf *out; /* where records go (borrowed; never NULL while OpenSSL may write) */
};

/* The method, or NULL (out of memory). Freed with BIO_meth_free. */
BIO_METHOD *tls_bio_method(void);
/* A BIO of method m over io (borrowed: it must outlive the BIO), or NULL. */
BIO *tls_bio_new(const BIO_METHOD *m, struct tls_bio_io *io);

#endif
