/* Connections per address: linear probing, deletion by shifting back (no tombstones, so
 * a table that saw many addresses come and go probes as short as a fresh one). */
#include "server/addr_conns.h"

#include <pthread.h>
#include <stdlib.h>

_Static_assert((ADDR_CONNS_SLOTS & (ADDR_CONNS_SLOTS - 1)) == 0, "a power of two");
#define MASK (ADDR_CONNS_SLOTS - 1)

struct slot {
	uint64_t key; /* 0: free */
	uint32_t count;
};

struct addr_conns {
	pthread_mutex_t lock;
	unsigned max;
	unsigned used;
	struct slot slots[ADDR_CONNS_SLOTS];
};

struct addr_conns *addr_conns_new(unsigned max)
{
	struct addr_conns *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->max = max;
	return t;
}

void addr_conns_free(struct addr_conns *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* key's slot, or the free one it would take. Keys are spread by limit_key's hash. */
static size_t probe(const struct addr_conns *t, uint64_t key)
{
	size_t i = key & MASK;
	while (t->slots[i].key && t->slots[i].key != key)
		i = (i + 1) & MASK;
	return i;
}

enum addr_conns_result addr_conns_acquire(struct addr_conns *t, uint64_t key)
{
	enum addr_conns_result r = ADDR_CONNS_COUNTED;
	pthread_mutex_lock(&t->lock);
	/* One slot always stays free (used < ADDR_CONNS_SLOTS), so that a probe ends. */
	struct slot *s = &t->slots[probe(t, key)];
	if (s->key == key) {
		if (s->count >= t->max)
			r = ADDR_CONNS_OVER;
		else
			s->count++;
	} else if (t->used == ADDR_CONNS_SLOTS - 1) {
		r = ADDR_CONNS_FULL;
	} else {
		*s = (struct slot){.key = key, .count = 1};
		t->used++;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

void addr_conns_release(struct addr_conns *t, uint64_t key)
{
	pthread_mutex_lock(&t->lock);
	size_t i = probe(t, key);
	if (t->slots[i].key == key && --t->slots[i].count == 0) {
		/* Shift back the keys after i that probed past it. */
		t->slots[i].key = 0;
		t->used--;
		for (size_t j = (i + 1) & MASK; t->slots[j].key; j = (j + 1) & MASK) {
			size_t home = t->slots[j].key & MASK;
			/* j's key may move to i if i lies between its home and j (cyclically). */
			if (((j - home) & MASK) >= ((j - i) & MASK)) {
				t->slots[i] = t->slots[j];
				t->slots[j].key = 0;
				i = j;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
}
