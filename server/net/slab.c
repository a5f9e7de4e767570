#include "server/net/slab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "server/dlist.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define SLAB_MALLOC 1
#endif
#endif

#ifdef SLAB_MALLOC
void *slab_get(struct slab *s)
{
	return calloc(1, s->size);
}

void slab_put(struct slab *s, void *p)
{
	(void)s;
	free(p);
}

void slab_free(struct slab *s)
{
	(void)s;
}
#else

/* A free slot holds the link to the next free slot of its slab. */
struct slot {
	struct slot *next_free;
};

struct slab_page {
	struct slab_page *prev, *next;
	struct slot *free; /* free slots of this slab */
	size_t used;
	size_t high; /* the most slots it had in use at once */
	_Alignas(16) unsigned char slots[];
};

/* Slots are 16-byte aligned, and large enough to hold the free link. */
static size_t slot_size(const struct slab *s)
{
	size_t n = s->size < sizeof(struct slot) ? sizeof(struct slot) : s->size;
	return (n + 15) & ~(size_t)15;
}

static size_t slots_per_page(const struct slab *s)
{
	return (SLAB_BYTES - sizeof(struct slab_page)) / slot_size(s);
}

static void unlink_page(struct slab *s, struct slab_page *p)
{
	DLIST_UNLINK(s->pages, p);
	p->prev = p->next = NULL;
}

static void push_front(struct slab *s, struct slab_page *p)
{
	DLIST_PUSH(s->pages, p);
}

/* A slab mapped at a multiple of SLAB_BYTES, so a slot finds its slab by masking. */
static struct slab_page *new_page(const struct slab *s)
{
	size_t size = SLAB_BYTES;
	char *m = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *start = (char *)(((uintptr_t)m + size - 1) & ~(uintptr_t)(size - 1));
	if (start > m)
		munmap(m, (size_t)(start - m));
	if (start + size < m + 2 * size)
		munmap(start + size, (size_t)(m + 2 * size - (start + size)));
	struct slab_page *p = (struct slab_page *)start;
	/* Fresh anonymous pages are zero; link the slots in order. */
	size_t n = slots_per_page(s), step = slot_size(s);
	for (size_t i = 0; i + 1 < n; i++)
		((struct slot *)(p->slots + i * step))->next_free =
		    (struct slot *)(p->slots + (i + 1) * step);
	p->free = (struct slot *)p->slots;
	return p;
}

static struct slab_page *page_of(void *obj)
{
	return (struct slab_page *)((uintptr_t)obj & ~(uintptr_t)(SLAB_BYTES - 1));
}

void *slab_get(struct slab *s)
{
	struct slab_page *p = s->pages;
	if (!p || !p->free) {
		if (!(p = new_page(s)))
			return NULL;
		push_front(s, p);
		s->pages_n++;
	}
	struct slot *slot = p->free;
	p->free = slot->next_free;
	if (++p->used > p->high)
		p->high = p->used;
	if (!p->free && p->next && p->next->free) {
		/* Full: to the back, so the front slab has room while any does. */
		unlink_page(s, p);
		struct slab_page *last = s->pages;
		while (last->next)
			last = last->next;
		last->next = p;
		p->prev = last;
	}
	memset(slot, 0, s->size);
	return slot;
}

void slab_put(struct slab *s, void *obj)
{
	struct slab_page *p = page_of(obj);
	struct slot *slot = obj;
	slot->next_free = p->free;
	p->free = slot;
	/* Empty: unmapped, but for a last slab that stayed small (see slab.h). */
	if (--p->used == 0 && (s->pages_n > 1 || p->high * slot_size(s) > SLAB_KEEP_BYTES)) {
		unlink_page(s, p);
		munmap(p, SLAB_BYTES);
		s->pages_n--;
		return;
	}
	if (p != s->pages) { /* it has room now: to the front */
		unlink_page(s, p);
		push_front(s, p);
	}
}

void slab_free(struct slab *s)
{
	while (s->pages) {
		struct slab_page *p = s->pages;
		unlink_page(s, p);
		munmap(p, SLAB_BYTES);
	}
	s->pages_n = 0;
}
#endif
