/*
 * lean_io.h: the blocking steps of the lean engine's connections (lean.c): waiting on a
 * socket, one whole LDAPMessage read, a buffer sent in full, StartTLS and the simple bind,
 * each on a non-blocking connection (plain or TLS: lean_tls.h) with a bound on its waits.
 * Used while a connection opens, never once the load runs. Any thread; no state.
 */
#ifndef SEARCHRATE_LEAN_IO_H
#define SEARCHRATE_LEAN_IO_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/searchrate/lean_tls.h"
#include "tools/searchrate/leanber.h"
#include "tools/searchrate/options.h"

/* Bound of the bind's waits (a send, a read) in milliseconds. */
#define BIND_MS 10000

/* Waits up to ms for events (POLLIN, POLLOUT) on fd; true if they came. */
bool lean_wait_fd(int fd, short events, int ms);

/* Reads one whole LDAPMessage from l (waits of at most BIND_MS) into buf[0..cap), framed
 * into *m; its length, 0 on failure. */
long lean_read_one(struct lean_link *l, unsigned char *buf, size_t cap, struct lb_msg *m);

/* Sends buf[0..len) on l, waiting as needed (at most BIND_MS each time); false on failure. */
bool lean_send_all(struct lean_link *l, const unsigned char *buf, size_t len);

/* The simple bind of cfg on l (message ID 1): an LDAP result code, and the server's
 * diagnostic message (if any) in diag. */
int lean_bind(const struct sr_config *cfg, struct lean_link *l, char *diag, size_t diaglen);

/* The StartTLS extended operation (RFC 4511 4.14, message ID 1) on the plain connection l:
 * its result code (LDAP_SUCCESS: the TLS handshake may begin), the diagnostic in diag. */
int lean_starttls(struct lean_link *l, char *diag, size_t diaglen);

#endif
