/* The memos' slots in an anonymous map: see memo_pairs.h. */
#include "storage/memo_pairs.h"

#include <sys/mman.h>

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
