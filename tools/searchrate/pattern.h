/*
 * pattern.h: value patterns, UnboundID's templates for --baseDN and --filter. A pattern is
 * literal text with numeric ranges in brackets, expanded anew for each search:
 *
 *   [A-B]        a uniformly random integer from A to B (either order; bounds included)
 *   [A:B]        sequential A, A+1, ... B, then A again (counts down when A > B)
 *   [A:B:S]      sequential with step S > 0 (also written [A:BxS], as UnboundID does)
 *   [...%000]    zero padded to as many digits as there are 0s after '%' (at most 20;
 *                '#' characters there are accepted and ignored, as in a decimal format)
 *   [[ and ]]    a literal [ and ]
 *
 * A and B are signed 64-bit decimal integers. The random generator is the caller's (one
 * state per thread: pattern_rng_next); a sequential range's position is shared by every
 * thread that expands the pattern, advanced atomically, so N threads together walk the
 * range once per N turns.
 */
#ifndef SEARCHRATE_PATTERN_H
#define SEARCHRATE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pattern_comp; /* one literal or range; private to pattern.c */

struct pattern {
	const char *src;            /* the text parsed (not copied: the caller keeps it alive) */
	struct pattern_comp *comps; /* owned */
	size_t ncomps;
	size_t maxlen;  /* the longest expansion, without its NUL */
	size_t nranges; /* bracketed ranges in it */
	char *fixed;    /* owned: the expansion when the pattern has no ranges, else NULL */
};

/*
 * Parses src into *p. Returns true on success; the pattern then owns memory until
 * pattern_free. On a malformed pattern returns false, leaves *p empty (pattern_free is
 * harmless) and writes to err (errlen bytes, NUL terminated) a message naming the offset
 * of the bad '[' and src, e.g.
 *   bad value pattern at offset 9 of "(uid=user[0-)": expected [A-B], [A:B] or [A:B:STEP]
 *   with integers (write [[ and ]] for literal brackets)
 * Running out of memory gives false and "out of memory".
 */
bool pattern_parse(struct pattern *p, const char *src, char *err, size_t errlen);

/*
 * Expands p into buf, which must hold p->maxlen + 1 bytes, drawing random ranges from
 * *rng. Returns the NUL-terminated expansion: buf, or p->fixed for a pattern without
 * ranges (then buf is untouched). Thread-safe for threads with their own rng and buf.
 */
const char *pattern_expand(struct pattern *p, uint64_t *rng, char *buf);

/* Where one range's value went in an expansion: buf[at, at + len). */
struct pattern_span {
	size_t at, len;
};

/* pattern_expand, also writing to spans (p->nranges of them, in order; NULL: not wanted)
 * where each range's value went. */
const char *pattern_expand_spans(struct pattern *p, uint64_t *rng, char *buf,
                                 struct pattern_span *spans);

/* Puts every sequential range back at its first value (not while others expand p). */
void pattern_rewind(struct pattern *p);

/* Frees what p owns and empties it. */
void pattern_free(struct pattern *p);

/* The next value of a splitmix64 generator whose state is *state (any seed). */
uint64_t pattern_rng_next(uint64_t *state);

#endif
