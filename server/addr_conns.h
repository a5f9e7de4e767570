/*
 * Open connections per client address, across all workers (max_conns_per_ip;
 * docs/reliability.md): an address key (limit_key.h: an IPv4 address, an IPv6 /64) may hold
 * at most max connections at once.
 *
 * A fixed table of ADDR_CONNS_SLOTS keys (open addressing, 16 bytes a key: 1 MiB, made at
 * start-up) holds the addresses with a connection open; an address leaves it with its last
 * connection. When every slot is taken (as many distinct addresses connected at once), a
 * new address is let in uncounted (addr_conns_acquire says so): the limit is on what one
 * address holds, and refusing would let a client with many addresses keep every new one
 * out. One mutex for all workers, taken at accept and close only. Any thread.
 */
#ifndef MINIDIR_SERVER_ADDR_CONNS_H
#define MINIDIR_SERVER_ADDR_CONNS_H

#include <stdint.h>

#define ADDR_CONNS_SLOTS 65536

struct addr_conns;

/* A table allowing max (>= 1) connections per address, or NULL out of memory. */
struct addr_conns *addr_conns_new(unsigned max);
void addr_conns_free(struct addr_conns *t);

enum addr_conns_result {
	ADDR_CONNS_COUNTED, /* one more for key: give it back with addr_conns_release */
	ADDR_CONNS_OVER,    /* key holds max already: refuse the connection */
	ADDR_CONNS_FULL,    /* the table is full: let it in, uncounted (nothing to release) */
};

/* One connection more for address key (non-zero). */
enum addr_conns_result addr_conns_acquire(struct addr_conns *t, uint64_t key);

/* A connection addr_conns_acquire counted for key is gone. */
void addr_conns_release(struct addr_conns *t, uint64_t key);

#endif
