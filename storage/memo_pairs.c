/* The memos' slots in an anonymous map: see memo_pairs.h. */
#include "storage/memo_pairs.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int memo_pairs_map(struct memo_pairs *p, size_t slots, size_t slot_bytes)
{
	*p = (struct memo_pairs){0};
	size_t bytes = slots * slot_bytes;
	void *at = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (at == MAP_FAILED)
		return -1;
	*p = (struct memo_pairs){.slot = at, .bytes = bytes, .mask = slots / 2 - 1};
	return 0;
}

void memo_pairs_unmap(struct memo_pairs *p)
{
	if (p->slot)
		munmap(p->slot, p->bytes);
	*p = (struct memo_pairs){0};
}

size_t memo_resident_bytes(const void *at, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	if (!at || len == 0 || page <= 0)
		return 0;
	/* mincore takes a page-aligned start: a calloc'ed array may begin inside a page */
	uintptr_t start = (uintptr_t)at & ~((uintptr_t)page - 1);
	size_t pages = ((uintptr_t)at + len - start + (size_t)page - 1) / (size_t)page;
	unsigned char *in = malloc(pages);
	if (!in)
		return 0;
	size_t n = 0;
	if (mincore((void *)start, pages * (size_t)page, in) == 0)
		for (size_t i = 0; i < pages; i++)
			n += in[i] & 1;
	free(in);
	n *= (size_t)page;
	return n < len ? n : len; /* the pages at either end hold other bytes too */
}
