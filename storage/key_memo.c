#include "storage/key_memo.h"

#include <stdlib.h>
#include <string.h>

int key_memo_init(struct key_memo *m, size_t keys)
{
	size_t n = 64;
	while (n < keys * 2 && n < KEY_MEMO_MAX_SLOTS)
		n *= 2;
	/* calloc of this size maps zero pages: only those written to take memory. */
	m->slot = calloc(n, sizeof(*m->slot));
	m->mask = n - 1;
	return m->slot ? 0 : -1;
}

void key_memo_free(struct key_memo *m)
{
	free(m->slot);
	m->slot = NULL;
	m->mask = 0;
}

/* FNV-1a over the table and the key: index keys are short, most under 32 bytes. */
static size_t slot_of(const struct key_memo *m, MDB_dbi dbi, const unsigned char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u ^ dbi;
	for (size_t i = 0; i < len; i++)
		h = (h ^ key[i]) * 0x100000001b3u;
	return (size_t)(h ^ h >> 32) & m->mask;
}

bool key_memo_get(const struct key_memo *m, MDB_dbi dbi, const void *key, size_t len, uint32_t *id)
{
	if (len > 0xffff || dbi > 0xffff)
		return false;
	struct key_memo_slot *s = &m->slot[slot_of(m, dbi, key, len)];
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	if (seq == 0 || seq & 1)
		return false;
	const void *at = atomic_load_explicit(&s->key, memory_order_relaxed);
	uint32_t dbi_len = atomic_load_explicit(&s->dbi_len, memory_order_relaxed);
	uint32_t found = atomic_load_explicit(&s->id, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
		return false; /* rewritten while read */
	if (dbi_len != (dbi << 16 | (uint32_t)len) || memcmp(at, key, len) != 0)
		return false;
	*id = found;
	return true;
}

void key_memo_put(const struct key_memo *m, MDB_dbi dbi, const void *key, size_t len, uint32_t id)
{
	if (len > 0xffff || dbi > 0xffff)
		return;
	struct key_memo_slot *s = &m->slot[slot_of(m, dbi, key, len)];
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
	if (seq & 1 || !atomic_compare_exchange_strong_explicit(
	                   &s->seq, &seq, seq + 1, memory_order_acquire, memory_order_relaxed))
		return; /* another writer has it */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->key, key, memory_order_relaxed);
	atomic_store_explicit(&s->dbi_len, dbi << 16 | (uint32_t)len, memory_order_relaxed);
	atomic_store_explicit(&s->id, id, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}
