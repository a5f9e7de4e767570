/*
 * A peer's /snapshot (server/monitor/snapshot.h) fetched into a file, with libcurl, over
 * http:// or https://: the body written as it comes, its length and checksum checked
 * against the X-Snapshot-Bytes trailer and the checksum's (server/copy_digest.h: XXH3-128
 * asked for, SHA-256 from a peer that does not know it) that the peer ends a whole copy
 * with. What the bytes are (a database, of which replica) is seed.c's to check.
 *
 * Thread rules: any thread; libcurl's global state initialized before (curl_global_init,
 * which curl_easy_init does on first use in a single-threaded program).
 */
#ifndef MINIDIR_SERVER_REPLICA_SEED_FETCH_H
#define MINIDIR_SERVER_REPLICA_SEED_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the copy comes from and how its https:// certificate is checked. */
struct seed_peer {
	const char *url;       /* http[s]://PEER/snapshot */
	const char *cafile;    /* PEM CA file the peer's certificate must chain to; NULL or
	                        * empty: the system's CAs */
	bool no_verify;        /* the certificate is not checked at all (tls_reqcert=never) */
	int connect_timeout_s; /* for the connection (0: libcurl's 300 s) */
};

/*
 * GETs peer->url into the open file fd (written from its current offset), counting the
 * bytes into *bytes. 0 when the answer was 200 and its trailers name the bytes that came;
 * else -1 with why in why[0..cap) (the peer unreachable, its certificate not verified, a
 * status other than 200, a copy cut short, a length or sum that differs).
 */
int seed_fetch(const struct seed_peer *peer, int fd, uint64_t *bytes, char *why, size_t cap);

#endif
