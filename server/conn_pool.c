#include "server/conn_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "server/conn.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
/* Under AddressSanitizer each connection is its own allocation, so that a use
 * after free is still caught. */
#define CONN_POOL_MALLOC 1
#endif
#endif

#ifdef CONN_POOL_MALLOC
struct conn *conn_pool_get(struct conn_pool *p)
{
	(void)p;
	return calloc(1, sizeof(struct conn));
}

void conn_pool_put(struct conn_pool *p, struct conn *c)
{
	(void)p;
	free(c);
}

void conn_pool_free(struct conn_pool *p)
{
	(void)p;
}
#else

/* A free slot holds the link to the next free slot of its slab. */
union conn_slot {
	struct conn conn;
	union conn_slot *next_free;
};

struct conn_slab {
	struct conn_slab *prev, *next;
	union conn_slot *free; /* free slots of this slab */
	size_t used;
	union conn_slot slots[];
};

#define SLOTS_PER_SLAB ((CONN_SLAB_BYTES - sizeof(struct conn_slab)) / sizeof(union conn_slot))

static void unlink_slab(struct conn_pool *p, struct conn_slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		p->slabs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void push_front(struct conn_pool *p, struct conn_slab *s)
{
	s->next = p->slabs;
	if (p->slabs)
		p->slabs->prev = s;
	p->slabs = s;
}

/* A slab mapped at a multiple of CONN_SLAB_BYTES, so a slot finds its slab by masking. */
static struct conn_slab *new_slab(void)
{
	size_t size = CONN_SLAB_BYTES;
	char *m = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *start = (char *)(((uintptr_t)m + size - 1) & ~(uintptr_t)(size - 1));
	if (start > m)
		munmap(m, (size_t)(start - m));
	if (start + size < m + 2 * size)
		munmap(start + size, (size_t)(m + 2 * size - (start + size)));
	struct conn_slab *s = (struct conn_slab *)start;
	/* Fresh anonymous pages are zero; link the slots in order. */
	for (size_t i = 0; i + 1 < SLOTS_PER_SLAB; i++)
		s->slots[i].next_free = &s->slots[i + 1];
	s->free = &s->slots[0];
	return s;
}

static struct conn_slab *slab_of(struct conn *c)
{
	return (struct conn_slab *)((uintptr_t)c & ~(uintptr_t)(CONN_SLAB_BYTES - 1));
}

struct conn *conn_pool_get(struct conn_pool *p)
{
	struct conn_slab *s = p->slabs;
	if (!s || !s->free) {
		if (!(s = new_slab()))
			return NULL;
		push_front(p, s);
		p->slabs_n++;
	}
	union conn_slot *slot = s->free;
	s->free = slot->next_free;
	s->used++;
	if (!s->free && s->next && s->next->free) {
		/* Full: to the back, so the front slab has room while any does. */
		unlink_slab(p, s);
		struct conn_slab *last = p->slabs;
		while (last->next)
			last = last->next;
		last->next = s;
		s->prev = last;
	}
	memset(&slot->conn, 0, sizeof(slot->conn));
	return &slot->conn;
}

void conn_pool_put(struct conn_pool *p, struct conn *c)
{
	struct conn_slab *s = slab_of(c);
	union conn_slot *slot = (union conn_slot *)c;
	slot->next_free = s->free;
	s->free = slot;
	if (--s->used == 0) {
		unlink_slab(p, s);
		munmap(s, CONN_SLAB_BYTES);
		p->slabs_n--;
		return;
	}
	if (s != p->slabs) { /* it has room now: to the front */
		unlink_slab(p, s);
		push_front(p, s);
	}
}

void conn_pool_free(struct conn_pool *p)
{
	while (p->slabs) {
		struct conn_slab *s = p->slabs;
		unlink_slab(p, s);
		munmap(s, CONN_SLAB_BYTES);
	}
	p->slabs_n = 0;
}
#endif
