/*
 * The slots of the memos of a served file (storage/key_memo.h, storage/record_memo.h):
 * pairs of 32-byte slots, one cache line a pair, in an anonymous map (aligned to a page,
 * its zero pages taking memory only once written to).
 */
#ifndef MINIDIR_STORAGE_MEMO_PAIRS_H
#define MINIDIR_STORAGE_MEMO_PAIRS_H

#include <stddef.h>

struct memo_pairs {
	void *slot;   /* the map; NULL: none */
	size_t bytes; /* its length */
	size_t mask;  /* pairs - 1 */
};

/* Maps slots slots (a power of two, 2 at least) of slot_bytes each, zeroed. Returns 0, or -1
 * when out of memory (*p zeroed). */
int memo_pairs_map(struct memo_pairs *p, size_t slots, size_t slot_bytes);
/* Unmaps p's slots (none: nothing) and zeroes *p. */
void memo_pairs_unmap(struct memo_pairs *p);
/* The bytes of at[0..len) in memory now (its pages the memo wrote, mincore(2)): what a memo
 * takes, for cn=monitor and /metrics; any thread, a system call and len / 4 KiB bytes of
 * scratch, never on a lookup. 0 for none (at NULL) or when it cannot tell. */
size_t memo_resident_bytes(const void *at, size_t len);

#endif
