/*
 * An arena: memory handed out in pieces and given back all at once. A decoded
 * request's filter tree lives in one (filter.h), so that a request costs no
 * malloc or free per node: the worker resets its arena before each request and
 * keeps the first block, and a search that outlives its request takes the
 * arena with it (arena_take) and hands the block back when it ends
 * (arena_recycle).
 *
 * Blocks are malloc'd, the first ARENA_BLOCK bytes, each next one twice the
 * last (at least as large as the piece asked for). An arena may also start in
 * a buffer of the caller's (a stack array): no malloc at all while that lasts.
 *
 * Thread rules: no global state; an arena belongs to one thread at a time.
 */
#ifndef MINIDIR_PROTOCOL_ARENA_H
#define MINIDIR_PROTOCOL_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of an arena's first malloc'd block. */
#define ARENA_BLOCK 2048

struct arena_block;

/*
 * A zeroed struct is an empty arena without a buffer of its own. Pieces are
 * valid until arena_reset or arena_free.
 */
struct arena {
	unsigned char *next, *end;  /* the free space left in the current block or buffer */
	struct arena_block *blocks; /* malloc'd blocks, the newest first */
	size_t last;                /* bytes of the newest block */
};

/* Starts a with buf[0..size) (the caller's, borrowed; buf may be NULL when size is 0). */
void arena_init(struct arena *a, void *buf, size_t size);
/* arena_alloc's piece when the current space has no room for it: from a new block. */
void *arena_alloc_block(struct arena *a, size_t n);

/* Where a piece of n bytes starts in a's current space, or NULL when it does not fit. */
static inline unsigned char *arena_fit(const struct arena *a, size_t n)
{
	if (!a->next)
		return NULL;
	uintptr_t p = ((uintptr_t)a->next + _Alignof(max_align_t) - 1) &
	              ~(uintptr_t)(_Alignof(max_align_t) - 1);
	if (p > (uintptr_t)a->end || (uintptr_t)a->end - p < n)
		return NULL;
	return a->next + (p - (uintptr_t)a->next);
}

/*
 * Returns n bytes aligned for any type (contents undefined) that stay valid
 * until the arena is reset or freed; NULL when out of memory. Inline: a lookup
 * takes five pieces (its filter's node and strings, the search), each a call
 * before (~50 instructions).
 */
static inline void *arena_alloc(struct arena *a, size_t n)
{
	if (n == 0)
		n = 1;
	unsigned char *p = arena_fit(a, n);
	if (!p)
		return arena_alloc_block(a, n);
	a->next = p + n;
	return p;
}
/* Copies p[0..n) into a with a NUL after it. Returns the copy, or NULL (out of memory). */
char *arena_strdup(struct arena *a, const void *p, size_t n);
/*
 * Gives back every piece: keeps the oldest block (the next pieces come from it), frees
 * the others. An arena started in a caller's buffer must not be reset once it grew
 * past it (the buffer is forgotten then); arena_free it instead.
 */
void arena_reset(struct arena *a);
/* Frees a's blocks and empties it (zeroed). */
void arena_free(struct arena *a);
/*
 * Moves everything src holds to dst (which must hold nothing: zeroed or freed) and
 * empties src, which must not have started in a caller's buffer. Pieces keep their
 * addresses.
 */
void arena_take(struct arena *dst, struct arena *src);
/*
 * Ends a (as arena_free) but, when spare holds no block, resets a and hands it to
 * spare instead: the block a worker's arena lent to a search comes back to it.
 * a must not have started in a caller's buffer.
 */
void arena_recycle(struct arena *spare, struct arena *a);

#endif
