/*
 * A TLS session on one connection (OpenSSL), server/net/'s own: conn_tls.c drives it. The
 * server's context it is made from, and what other rooms use, are tls.h's.
 *
 * A session never touches the socket. Ciphertext goes in and out through
 * memory buffers (a BIO of its own, tls.c's, over the caller's buffers), so that the connection
 * keeps doing its own recv and send with the send policy's flags: a flush of plaintext becomes
 * records of up to 16 KiB (one record per flush when the flush is smaller) and leaves in one send,
 * as plaintext would. No call blocks; a handshake advances as bytes arrive, inside the worker's
 * event loop.
 *
 * Kernel TLS (tls_ktls = yes, on a kernel with the "tls" TCP ULP, probed once
 * at tls_setup) is the one exception: a session then writes its handshake to
 * the socket itself (a socket BIO, SSL_OP_ENABLE_KTLS; input still comes
 * through memory), so that OpenSSL can hand the keys to the kernel. Once
 * tls_kernel_send says so, the connection sends plaintext on the socket with
 * the policy's flags and the kernel builds the records (MSG_MORE and TCP_CORK
 * gather them as they gather segments). Where the kernel refused the session's
 * cipher, the session goes back to memory buffers when the handshake ends.
 * Not exercised on the machines this was written on (no tls ULP): the
 * handshake must fit the socket's send buffer (else it fails, logged), and a
 * client's TLS 1.3 KeyUpdate asking for ours ends the connection. For tests,
 * MINIDIR_KTLS_ASSUME=1 in the environment makes the probe succeed: on such a
 * kernel that runs the handshake on the socket and the way back to memory.
 *
 * Thread rules: tls_setup, tls_reload and tls_teardown run in the main
 * thread (tls.h); tls_session_new in any worker (it takes the context under a lock);
 * a session belongs to one connection and is used by its worker only.
 */
#ifndef MINIDIR_SERVER_NET_TLS_SESSION_H
#define MINIDIR_SERVER_NET_TLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"

struct ssl_st; /* OpenSSL's SSL */
struct tls_server;
struct tls_session;

/* The most plaintext one TLS record carries (RFC 8446 5.1). */
#define TLS_RECORD_PLAIN 16384

/* A server session on a new connection whose socket is fd (borrowed: written to only by a
 * kernel TLS handshake, never closed), or NULL (logged). */
struct tls_session *tls_session_new(struct tls_server *ts, int fd);
/* A bare SSL of ts's current context (taken under its lock), for a session of another kind
 * (tls_socket.c), or NULL. The caller frees it with SSL_free. */
struct ssl_st *tls_server_ssl(struct tls_server *ts);
/* Frees t (NULL allowed); with notify, first queues a close_notify alert for tls_output. */
void tls_session_free(struct tls_session *t);
/* Queues a close_notify alert (after a completed handshake), for tls_output. */
void tls_session_shutdown(struct tls_session *t);
/* The connection went idle: the session gives back the buffers it can (OpenSSL's read and
 * write buffers, unless one holds part of a record); they come back when next needed. */
void tls_session_idle(struct tls_session *t);

/* What tls_input returns. */
enum tls_status {
	TLS_OK,     /* plaintext appended (maybe none yet: the handshake goes on) */
	TLS_CLOSED, /* the client sent close_notify */
	TLS_FAILED, /* handshake or record error: close the connection (tls_why says why) */
};

/*
 * Takes in[0..len) (ciphertext the client sent), advances the handshake and
 * appends the plaintext it decrypts to plain (the caller's), leaving one byte
 * of spare capacity after it. Returns a tls_status.
 */
enum tls_status tls_input(struct tls_session *t, const void *in, size_t len, struct buf *plain);

/*
 * Encrypts plain[0..len) into records appended to cipher (the caller's), with
 * whatever the session had waiting to send before them (handshake messages,
 * tickets, alerts); len 0 takes only those. *records counts the records
 * written. Returns 0, or -1 (out of memory, or a session that failed).
 */
int tls_output(struct tls_session *t, const void *plain, size_t len, struct buf *cipher,
               unsigned *records);

bool tls_handshake_done(const struct tls_session *t);
/* True once the handshake is done and the kernel encrypts what is sent on the socket:
 * the connection then sends plaintext itself and calls tls_output only with len 0. */
bool tls_kernel_send(const struct tls_session *t);
/* Why the session failed (an OpenSSL reason), for the log. */
const char *tls_why(const struct tls_session *t);
/* The negotiated protocol and cipher, e.g. "TLSv1.3 TLS_AES_256_GCM_SHA384". */
void tls_describe(const struct tls_session *t, char *out, size_t cap);
/* The secret bits of the session's cipher (a SASL bind's external strength), 0 before
 * the handshake is done. */
unsigned tls_cipher_bits(const struct tls_session *t);
/* True if the handshake reused an earlier session (ticket). */
bool tls_resumed(const struct tls_session *t);
/* True if the session has bytes of its own to send (tickets, alerts) not yet taken. */
bool tls_has_output(const struct tls_session *t);
/* True if the session speaks TLS 1.3. */
bool tls_is_13(const struct tls_session *t);
#endif
