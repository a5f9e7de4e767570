#include "storage/key_memo.h"

#include <string.h>

#include "storage/db_impl.h"
#include "storage/memo_pairs.h"

_Static_assert(sizeof(struct key_memo_slot) == 32, "a pair of slots is one cache line");

size_t key_memo_bytes_for(size_t keys, size_t max_slots)
{
	size_t slots = 64;
	while (slots < keys * 2 && slots < max_slots)
		slots *= 2;
	return slots * sizeof(struct key_memo_slot);
}

int key_memo_init(struct key_memo *m, size_t keys, size_t max_bytes)
{
	*m = (struct key_memo){0};
	size_t cap = max_bytes == SIZE_MAX ? KEY_MEMO_UNBOUNDED_SLOTS : KEY_MEMO_MAX_SLOTS;
	size_t slots = key_memo_bytes_for(keys, cap) / sizeof(*m->slot);
	while (slots >= 2 && slots * sizeof(*m->slot) > max_bytes)
		slots /= 2;
	if (slots < 2)
		return 0; /* not one pair within max_bytes: no memo */
	struct memo_pairs p;
	if (memo_pairs_map(&p, slots, sizeof(*m->slot)) < 0)
		return -1;
	*m = (struct key_memo){.slot = p.slot, .bytes = p.bytes, .mask = p.mask};
	return 0;
}

void key_memo_free(struct key_memo *m)
{
	memo_pairs_unmap(&(struct memo_pairs){.slot = m->slot, .bytes = m->bytes});
	*m = (struct key_memo){0};
}

/* FNV-1a over the table and the key: index keys are short, most under 32 bytes. */
static uint64_t hash(MDB_dbi dbi, const unsigned char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u ^ dbi;
	for (size_t i = 0; i < len; i++)
		h = (h ^ key[i]) * 0x100000001b3u;
	return h ^ h >> 32;
}

/* Whether slot s holds key[0..len) of table dbi (read under its sequence lock). */
static bool holds(struct key_memo_slot *s, uint32_t dbi_len, uint32_t tag, const void *key,
                  size_t len, uint32_t *id)
{
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	if (seq == 0 || seq & 1)
		return false;
	uint32_t found_dbi_len = atomic_load_explicit(&s->dbi_len, memory_order_relaxed);
	uint32_t found_tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
	const void *at = atomic_load_explicit(&s->key, memory_order_relaxed);
	uint32_t found = atomic_load_explicit(&s->id, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
		return false; /* rewritten while read */
	if (found_dbi_len != dbi_len || found_tag != tag || memcmp(at, key, len) != 0)
		return false;
	*id = found;
	return true;
}

bool key_memo_get(const struct key_memo *m, MDB_dbi dbi, const void *key, size_t len, uint32_t *id)
{
	if (len > 0xffff || dbi > 0xffff)
		return false;
	uint32_t dbi_len = dbi << 16 | (uint32_t)len;
	uint64_t h = hash(dbi, key, len);
	struct key_memo_slot *pair = &m->slot[2 * (h & m->mask)];
	uint32_t tag = (uint32_t)(h >> 32);
	return holds(&pair[0], dbi_len, tag, key, len, id) ||
	       holds(&pair[1], dbi_len, tag, key, len, id);
}

void key_memo_put(const struct key_memo *m, MDB_dbi dbi, const void *key, size_t len, uint32_t id)
{
	if (len > 0xffff || dbi > 0xffff)
		return;
	uint64_t h = hash(dbi, key, len);
	struct key_memo_slot *pair = &m->slot[2 * (h & m->mask)];
	/* the empty slot of the pair, else one of the two by a bit of the hash the pair's
	 * number does not use */
	struct key_memo_slot *s =
	    &pair[atomic_load_explicit(&pair[0].seq, memory_order_relaxed) == 0   ? 0
	          : atomic_load_explicit(&pair[1].seq, memory_order_relaxed) == 0 ? 1
	                                                                          : (h >> 63)];
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
	if (seq & 1 || !atomic_compare_exchange_strong_explicit(
	                   &s->seq, &seq, seq + 1, memory_order_acquire, memory_order_relaxed))
		return; /* another writer has it */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->key, key, memory_order_relaxed);
	atomic_store_explicit(&s->dbi_len, dbi << 16 | (uint32_t)len, memory_order_relaxed);
	atomic_store_explicit(&s->tag, (uint32_t)(h >> 32), memory_order_relaxed);
	atomic_store_explicit(&s->id, id, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}
