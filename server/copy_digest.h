/*
 * The checksum a /snapshot copy carries (server/monitor/snapshot.h sends it, the seed's
 * fetch server/replica/seed_fetch.h checks it): what both ends name it on the wire, and the
 * digest itself, made as the bytes pass.
 *
 * Two kinds. SHA-256 is what a client gets that asks for nothing (curl by hand, to compare
 * with sha256sum; a replica of an older minidir). XXH3-128 (libxxhash) is what a replica
 * asks for: on this project's machines SHA-256 runs at about 1.5 GB/s even with the CPU's
 * SHA instructions, XXH3 at about 14, and each end digests the whole copy on the way
 * (0.7 s of a 1 GB copy's 3 s, each side). A checksum sent in the same stream as the bytes
 * guards against a copy changed by accident (a cut, a bad disk or buffer), not by an
 * attacker, who could change both: that is TLS's part (metrics_tls), so a cryptographic
 * hash buys nothing here.
 *
 * The request header COPY_DIGEST_ASK names the kind wanted ("xxh3-128"); the answer's
 * Trailer header names the trailer it ends with (copy_digest_trailer), whose value is the
 * digest in lowercase hex (XXH3-128 in its canonical big-endian form, as `xxhsum -H2`
 * prints it).
 *
 * Thread rules: one digest to one thread at a time; no shared state.
 */
#ifndef MINIDIR_SERVER_COPY_DIGEST_H
#define MINIDIR_SERVER_COPY_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#define COPY_DIGEST_ASK "X-Snapshot-Digest"
#define COPY_DIGEST_HEX_MAX 64 /* SHA-256's 32 bytes */

enum copy_digest_kind {
	COPY_DIGEST_SHA256,   /* the default: trailer X-Snapshot-Sha256 */
	COPY_DIGEST_XXH3_128, /* asked for as "xxh3-128": trailer X-Snapshot-Xxh3-128 */
};

/* A digest under way: made by copy_digest_start, freed by copy_digest_free. */
struct copy_digest {
	enum copy_digest_kind kind;
	void *state; /* OpenSSL's EVP_MD_CTX or libxxhash's XXH3_state_t */
};

/* The name a request asks for kind by ("sha-256", "xxh3-128"), and the trailer the answer
 * carries it in ("X-Snapshot-Sha256", "X-Snapshot-Xxh3-128"). Static strings. */
const char *copy_digest_name(enum copy_digest_kind kind);
const char *copy_digest_trailer(enum copy_digest_kind kind);

/* The kind a request's COPY_DIGEST_ASK value names (case aside, spaces around ignored):
 * true and *kind set, or false for a name not known (the caller keeps SHA-256). */
bool copy_digest_by_name(const char *name, enum copy_digest_kind *kind);

/* Starts a digest of kind into d. 0, or -1 when memory ran out (d holds nothing). */
int copy_digest_start(struct copy_digest *d, enum copy_digest_kind kind);

/* Adds len bytes at p. */
void copy_digest_add(struct copy_digest *d, const void *p, size_t len);

/* Ends the digest: its lowercase hex into hex (COPY_DIGEST_HEX_MAX + 1 bytes, 64 or 32
 * digits and a NUL). 0, or -1 when OpenSSL failed. Then only copy_digest_free. */
int copy_digest_hex(struct copy_digest *d, char hex[COPY_DIGEST_HEX_MAX + 1]);

/* Frees d's state (started or not: a zeroed d is fine). */
void copy_digest_free(struct copy_digest *d);

#endif
