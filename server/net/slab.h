/*
 * Objects of one size packed into slabs: how a worker allocates its
 * connection structs.
 *
 * An idle connection should cost little memory, and all of it should go back
 * to the system when connections close. Allocated one by one with malloc,
 * connection structs end up between the buffers of other connections, and each
 * pins a heap page that malloc_trim cannot return even once the buffers around
 * it are freed. Slabs keep them together: a slab is one mmap of SLAB_BYTES,
 * unmapped as soon as its last object is freed, but for the set's last slab when
 * it never held more than SLAB_KEEP_BYTES of objects at once: it stays for the next
 * object (a worker whose connections come and go one at a time, as with a new TLS
 * connection per search, would otherwise map and unmap a slab, four system calls and
 * a page fault, per connection), while one a burst filled goes back whole. Under AddressSanitizer
 * every object is its own malloc instead, so that a use after free is still caught.
 *
 * A slab set belongs to one thread; nothing here locks.
 */
#ifndef MINIDIR_SERVER_NET_SLAB_H
#define MINIDIR_SERVER_NET_SLAB_H

#include <stddef.h>

#define SLAB_BYTES (128 * 1024)
#define SLAB_KEEP_BYTES (16 * 1024)

struct slab_page;

struct slab {
	size_t size;             /* object size, set before the first slab_get */
	struct slab_page *pages; /* every slab, those with free slots first */
	size_t pages_n;
};

/* A zeroed object of s->size bytes (at most SLAB_BYTES / 4), or NULL (ENOMEM). */
void *slab_get(struct slab *s);
/* Gives back p (from slab_get on s); its slab is unmapped when empty, unless it is the last. */
void slab_put(struct slab *s, void *p);
/* Unmaps every slab; every object must have been put back. */
void slab_free(struct slab *s);

#endif
