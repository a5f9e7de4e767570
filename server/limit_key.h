/*
 * The keys the abuse limits count by (bind_limit.h, addr_conns.h): a bind DN or a client
 * address turned into a 64-bit hash under a seed drawn at start-up, so that a client cannot
 * choose names that pile into one place of the tables. Two names on one key share a count;
 * at 64 bits that is left to chance (and a client who could lock a DN that way can lock it
 * anyway, by guessing its password).
 *
 * A client address is the host of a connection's peer text (conn.h, c->peer: "HOST:PORT",
 * "[HOST]:PORT" for IPv6); an IPv6 address counts by its /64 (one host, or one site,
 * usually holds a whole /64, so counting each address would let it spray), an IPv4-mapped
 * one as the IPv4 address. Any thread.
 */
#ifndef MINIDIR_SERVER_LIMIT_KEY_H
#define MINIDIR_SERVER_LIMIT_KEY_H

#include <stddef.h>
#include <stdint.h>

/* Set in the key of an address, clear in a DN's. */
#define LIMIT_KEY_ADDR (1ULL << 63)

/* The key of a bind DN in its normal form (dn_normalize's); never 0. */
uint64_t limit_key_dn(const void *ndn, size_t len);

/* The key of the client address of peer ("HOST:PORT" or "[HOST]:PORT"), or 0 when peer
 * holds no IP address (an ldapi:// peer, "ldapi uid=..."). */
uint64_t limit_key_peer(const char *peer);

#endif
