/* Memory given back all at once; see arena.h. */
#include "protocol/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A block stops doubling here: a huge filter does not keep megabytes for later requests. */
#define ARENA_BLOCK_MAX (256 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t size;
	alignas(max_align_t) unsigned char data[];
};

void arena_init(struct arena *a, void *buf, size_t size)
{
	a->next = buf;
	a->end = buf ? (unsigned char *)buf + size : NULL;
	a->blocks = NULL;
	a->last = 0;
}

void *arena_alloc_block(struct arena *a, size_t n)
{
	size_t size = a->last ? 2 * a->last : ARENA_BLOCK;
	if (size > ARENA_BLOCK_MAX)
		size = ARENA_BLOCK_MAX;
	if (size < n)
		size = n;
	if (n > SIZE_MAX - sizeof(struct arena_block))
		return NULL;
	struct arena_block *b = malloc(sizeof(*b) + size);
	if (!b)
		return NULL;
	b->next = a->blocks;
	b->size = size;
	a->blocks = b;
	a->last = size;
	a->end = b->data + size;
	a->next = b->data + n;
	return b->data;
}

char *arena_strdup(struct arena *a, const void *p, size_t n)
{
	char *s = n < SIZE_MAX ? arena_alloc(a, n + 1) : NULL;
	if (s) {
		if (n)
			memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

void arena_reset(struct arena *a)
{
	struct arena_block *keep = a->blocks; /* the newest: the largest */
	if (!keep)
		return;
	for (struct arena_block *b = keep->next, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	keep->next = NULL;
	a->next = keep->data;
	a->end = keep->data + keep->size;
}

void arena_free(struct arena *a)
{
	for (struct arena_block *b = a->blocks, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	memset(a, 0, sizeof(*a));
}

void arena_take(struct arena *dst, struct arena *src)
{
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

void arena_recycle(struct arena *spare, struct arena *a)
{
	if (spare->blocks || !a->blocks) {
		arena_free(a);
		return;
	}
	arena_reset(a);
	arena_take(spare, a);
}
