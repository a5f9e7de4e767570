/*
 * Equality-index keys of a file opened read-only that hold exactly one ID, remembered
 * as each is first looked up: looking one up again is a hash, a slot and a compare
 * with the key's bytes in the map (only when the slot's tag, part of the key's hash,
 * matches), where LMDB descends the index's B-tree (about 1,200
 * instructions and a cache miss a level). The lookups a directory answers most are of
 * this kind: uid, mail, uidNumber, each naming one entry.
 *
 * Slots come in pairs, one cache line each: a key goes into the empty one of its pair, or
 * takes the place of one of them. A slot holds a pointer to the key in LMDB's map, which
 * stays valid while the file is open because the file never changes (storage/db.h). Keys
 * that hold several IDs, and keys not found, are not remembered.
 *
 * Thread rules: any number of threads get and put at once. Each slot is a sequence lock:
 * a reader that sees it change under it takes it as a miss; a writer that finds another
 * one in it leaves it.
 */
#ifndef MINIDIR_STORAGE_KEY_MEMO_H
#define MINIDIR_STORAGE_KEY_MEMO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slots at most with no bound on the memory (memo_bytes = unlimited): 32 MiB of them,
 * about a million keys. A bound given in bytes may hold more, up to KEY_MEMO_MAX_SLOTS
 * (4 GiB): the memos' memory is then what the admin chose. Both are touched only as they
 * are written. */
#define KEY_MEMO_UNBOUNDED_SLOTS ((size_t)1 << 20)
#define KEY_MEMO_MAX_SLOTS ((size_t)1 << 27)

struct key_memo_slot {
	_Alignas(32) _Atomic uint32_t seq; /* odd while a writer fills the slot; 0: never filled */
	_Atomic uint32_t id;               /* the key's one ID */
	_Atomic uint32_t dbi_len;          /* the index's table << 16 | the key's length */
	/* The key's hash, its high half (the pair's number is of the low bits): another key
	 * of the same length fails on it without a read of the map (a cache miss) */
	_Atomic uint32_t tag;
	_Atomic(const void *) key; /* the key's bytes in the map */
};

struct key_memo {
	struct key_memo_slot *slot; /* pairs; mapped whole, zero until written */
	size_t bytes;
	size_t mask; /* pairs - 1; a power of two */
};

/* The bytes a memo of keys keys takes: twice as many slots (a power of two, 64 at least,
 * max_slots at most). */
size_t key_memo_bytes_for(size_t keys, size_t max_slots);
/* Room for about keys keys, as key_memo_bytes_for says, but within max_bytes (fewer slots,
 * a power of two; fewer bytes than a pair: no slots, m zeroed, and 0): at most
 * KEY_MEMO_UNBOUNDED_SLOTS when max_bytes is SIZE_MAX (no bound), KEY_MEMO_MAX_SLOTS
 * otherwise. Returns 0, or -1 when out of memory (m zeroed). */
int key_memo_init(struct key_memo *m, size_t keys, size_t max_bytes);
void key_memo_free(struct key_memo *m);

/* The ID of key[0..len) in table dbi, if remembered: true with *id set. */
bool key_memo_get(const struct key_memo *m, unsigned int dbi, const void *key, size_t len,
                  uint32_t *id);

/* Remembers that key[0..len) (its bytes in the map of a file that never changes) holds
 * the one ID id in table dbi. Keys longer than 65535 bytes or tables past 65535 are not.
 * (m is const: its slots change, not where they are.) */
void key_memo_put(const struct key_memo *m, unsigned int dbi, const void *key, size_t len,
                  uint32_t id);

#endif
