/*
 * The records of a file opened read-only whose entry IDs are too many for the direct
 * array of storage/db.h (struct db_record_at, 16 bytes an ID) within the memo budget
 * (memo_bytes): a table of a fixed number of slots, each remembering where one ID's
 * record lies in the map. Reading the record of a remembered ID again is a hash, a slot
 * and a compare, where LMDB descends id2entry's B-tree; an ID not remembered takes the
 * place of another (the table evicts, it never grows).
 *
 * Slots come in pairs, one cache line each: an ID goes into the empty one of its pair,
 * else takes the place of one of the two (which one alternates as the pair is
 * rewritten, so two hot IDs of one pair can both stay). A slot holds a pointer into
 * LMDB's map, valid while the file is open because the file never changes.
 *
 * Thread rules: any number of threads get and put at once. Each slot is a sequence lock:
 * a reader that sees it change under it takes it as a miss (never another ID's record);
 * a writer that finds another one in it leaves it.
 */
#ifndef MINIDIR_STORAGE_RECORD_MEMO_H
#define MINIDIR_STORAGE_RECORD_MEMO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record_memo_slot {
	_Alignas(32) _Atomic uint32_t seq; /* odd while a writer fills the slot; 0: never filled */
	_Atomic uint32_t id;               /* the entry ID */
	_Atomic uint32_t size;             /* its record's length */
	_Atomic uint32_t type_lens;        /* its attribute types summed up (storage/entry.h) */
	_Atomic(const void *) data;        /* its record in the map */
};

struct record_memo {
	struct record_memo_slot *slot; /* pairs; mapped whole, zero until written; NULL: none */
	size_t bytes;                  /* what the map takes at most */
	size_t mask;                   /* pairs - 1; a power of two */
};

/* The bytes of one slot: a table of bytes b holds b / RECORD_MEMO_SLOT_BYTES records. */
#define RECORD_MEMO_SLOT_BYTES sizeof(struct record_memo_slot)

/* As many slots as fit in max_bytes (a power of two, at least one pair; fewer bytes than
 * a pair: no table, m zeroed, and 0). Returns 0, or -1 when out of memory (m zeroed). */
int record_memo_init(struct record_memo *m, size_t max_bytes);
void record_memo_free(struct record_memo *m);

/* Where id's record lies, if remembered: true with *data, *size and *type_lens (what put
 * was given) set. */
bool record_memo_get(const struct record_memo *m, uint32_t id, const void **data, uint32_t *size,
                     uint32_t *type_lens);

/* Remembers that id's record is data[0..size) in the map of a file that never changes, with
 * type_lens, the summary of its attribute types (entry_type_lens). (m is const: its slots
 * change, not where they are.) */
void record_memo_put(const struct record_memo *m, uint32_t id, const void *data, uint32_t size,
                     uint32_t type_lens);

#endif
