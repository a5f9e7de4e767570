/*
 * lean.h: the lean engine (--engine lean, the default). The same load as
 * the libldap engine (worker.h: threads owning their connections, synchronous or
 * --asynchronous with --maxOutstandingRequests per connection, --ratePerSecond,
 * --iterationsBeforeReconnect, lost connections counted and re-established with backoff,
 * the same counters), at a fraction of the client CPU per search:
 *
 *   - requests are written by hand into each connection's output buffer (leanber.h), the
 *     filter's BER from a per-thread cache patched with each expansion's digits;
 *   - sockets are non-blocking, one epoll per thread; a connection's requests queued in a
 *     round leave in one send, and a partial send waits for EPOLLOUT;
 *   - responses are read into a per-connection buffer, framed by their BER length and read
 *     in place: entries are counted per search, the SearchResultDone's result code recorded
 *     (a notice of disconnection loses the connection, as with libldap);
 *   - message IDs are chosen so that each request in flight owns the slot msgid & mask of
 *     a table of at least twice --maxOutstandingRequests: a response finds its request
 *     with one load.
 *
 * Connecting (then StartTLS and the TLS handshake with --useStartTLS or --useSSL, through
 * OpenSSL: lean_tls.h, and a simple bind with --bindDN) is done with blocking waits bounded
 * at 5 s for the connect and 10 s for each later step, as the libldap engine's timeouts.
 */
#ifndef SEARCHRATE_LEAN_H
#define SEARCHRATE_LEAN_H

#include "tools/searchrate/run.h"

extern const struct sr_engine sr_engine_lean;

#endif
