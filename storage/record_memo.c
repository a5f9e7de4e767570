/* The bounded table of records' places: see record_memo.h. */
#include "storage/record_memo.h"

#include "storage/memo_pairs.h"

int record_memo_init(struct record_memo *m, size_t max_bytes)
{
	*m = (struct record_memo){0};
	size_t slots = 2;
	if (max_bytes / RECORD_MEMO_SLOT_BYTES < slots)
		return 0;
	while (slots <= max_bytes / RECORD_MEMO_SLOT_BYTES / 2)
		slots *= 2;
	struct memo_pairs p;
	if (memo_pairs_map(&p, slots, RECORD_MEMO_SLOT_BYTES) < 0)
		return -1;
	*m = (struct record_memo){.slot = p.slot, .bytes = p.bytes, .mask = p.mask};
	return 0;
}

void record_memo_free(struct record_memo *m)
{
	memo_pairs_unmap(&(struct memo_pairs){.slot = m->slot, .bytes = m->bytes});
	*m = (struct record_memo){0};
}

/* Fibonacci hashing: IDs are dense and in import order, neighbours spread over pairs. */
static inline uint64_t hash(uint32_t id)
{
	return (uint64_t)id * 0x9e3779b97f4a7c15u;
}

static bool holds(struct record_memo_slot *s, uint32_t id, const void **data, uint32_t *size,
                  uint32_t *type_lens)
{
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	if (seq == 0 || seq & 1)
		return false;
	uint32_t found = atomic_load_explicit(&s->id, memory_order_relaxed);
	uint32_t len = atomic_load_explicit(&s->size, memory_order_relaxed);
	uint32_t types = atomic_load_explicit(&s->type_lens, memory_order_relaxed);
	const void *at = atomic_load_explicit(&s->data, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq || found != id)
		return false; /* rewritten while read, or another ID's */
	*data = at;
	*size = len;
	*type_lens = types;
	return true;
}

bool record_memo_get(const struct record_memo *m, uint32_t id, const void **data, uint32_t *size,
                     uint32_t *type_lens)
{
	struct record_memo_slot *pair = &m->slot[2 * ((hash(id) >> 32) & m->mask)];
	return holds(&pair[0], id, data, size, type_lens) ||
	       holds(&pair[1], id, data, size, type_lens);
}

void record_memo_put(const struct record_memo *m, uint32_t id, const void *data, uint32_t size,
                     uint32_t type_lens)
{
	struct record_memo_slot *pair = &m->slot[2 * ((hash(id) >> 32) & m->mask)];
	uint32_t seq0 = atomic_load_explicit(&pair[0].seq, memory_order_relaxed);
	uint32_t seq1 = atomic_load_explicit(&pair[1].seq, memory_order_relaxed);
	/* the empty slot of the pair, else slot 0 and slot 1 by turns: each write adds 2 to the
	 * sequence of its slot, so bit 1 of their sum flips at each */
	struct record_memo_slot *s = &pair[seq0 == 0   ? 0
	                                   : seq1 == 0 ? 1
	                                               : ((seq0 + seq1) >> 1 & 1)];
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
	if (seq & 1 || !atomic_compare_exchange_strong_explicit(
	                   &s->seq, &seq, seq + 1, memory_order_acquire, memory_order_relaxed))
		return; /* another writer has it */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->id, id, memory_order_relaxed);
	atomic_store_explicit(&s->size, size, memory_order_relaxed);
	atomic_store_explicit(&s->type_lens, type_lens, memory_order_relaxed);
	atomic_store_explicit(&s->data, data, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}
