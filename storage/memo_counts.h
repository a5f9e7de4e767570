/*
 * What the memos of a file opened read-only (storage/db.h: the record memo; storage/
 * key_memo.h: the key memo) answered, counted by the thread that asked, into counters it
 * owns: no cache line another thread writes is written on a lookup. A server's worker
 * points db_memo_counts at its own statistics (server/stats.h) when it starts; a thread
 * that does not (the main thread, a tool, a test) counts nothing.
 *
 * A hit is an entry's record, or a one-ID index key's ID, the memo had; a miss one it did
 * not have and LMDB's B-tree gave (the memo then remembers it). Keys holding several IDs,
 * and keys or IDs not found, are neither.
 *
 * Thread rules: only the thread whose db_memo_counts points at a struct writes it (relaxed
 * atomic stores, one writer); any thread reads it with relaxed loads.
 */
#ifndef MINIDIR_STORAGE_MEMO_COUNTS_H
#define MINIDIR_STORAGE_MEMO_COUNTS_H

#include <stdint.h>

struct db_memo_counts {
	uint64_t record_hits, record_misses; /* entries' records (db_get_entry) */
	uint64_t key_hits, key_misses;       /* one-ID equality-index keys (storage/candidates.h) */
};

/* The calling thread's counters, or NULL (nothing counted). Borrowed: they must outlive
 * the thread's lookups. */
extern _Thread_local struct db_memo_counts *db_memo_counts;

/* One more in *field of the calling thread's counters. */
static inline void db_memo_count(uint64_t *field)
{
	__atomic_store_n(field, __atomic_load_n(field, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

#endif
