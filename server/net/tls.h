/*
 * TLS with OpenSSL, for ldaps:// listeners and StartTLS (RFC 4511 4.14): what other rooms
 * use of it. The sessions, one a connection, are the room's own (tls_session.h, which
 * tells how they work); tls.c implements both headers.
 *
 * The server's context (certificate chain, key, CA file, client verification,
 * versions and ciphers from the config) is built at start-up and rebuilt by
 * SIGHUP: new sessions get the new certificate, open ones keep theirs (a
 * session holds a reference to the context it was made from).
 *
 * Thread rules: tls_setup, tls_reload and tls_teardown run in the main thread;
 * tls_peer_subject in the worker of the session's connection.
 */
#ifndef MINIDIR_SERVER_NET_TLS_H
#define MINIDIR_SERVER_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct tls_server;
struct tls_session;

/*
 * Builds the context from cfg (borrowed) into *out; *out is NULL when TLS is
 * not configured (no tls_cert_file). Returns 0, or -1 after logging the file
 * and the reason (unreadable, not PEM, key not matching the certificate...).
 */
int tls_setup(const struct config *cfg, struct tls_server **out);
/* True when tls_ktls = yes found kernel TLS usable at tls_setup (ts NULL: false). */
bool tls_kernel(const struct tls_server *ts);
/* Rebuilds the context from cfg's files; on failure logs why and keeps the old one. */
void tls_reload(struct tls_server *ts, const struct config *cfg);
void tls_teardown(struct tls_server *ts);

/*
 * The subject of the client's certificate as an LDAP DN (RFC 4514, most
 * specific first, "cn=client,o=example"), if the client sent one and it
 * verified against tls_ca_file. Returns its length, 0 when there is none.
 */
size_t tls_peer_subject(const struct tls_session *t, char *out, size_t cap);

#endif
