/* The failed-bind table: a set-associative cache of counts (bind_limit.h). */
#include "server/bind_limit.h"

#include <pthread.h>
#include <stdlib.h>

#include "server/limit_key.h"

struct slot {
	uint64_t key;   /* 0: free */
	uint32_t count; /* failures counted since start */
	uint32_t start; /* clock_seconds() of the first of them, truncated */
};

struct bind_limit {
	pthread_mutex_t lock;
	unsigned limit, window;
	uint64_t evicted;
	struct slot slots[BIND_LIMIT_SETS * BIND_LIMIT_WAYS];
};

_Static_assert((BIND_LIMIT_SETS & (BIND_LIMIT_SETS - 1)) == 0, "a power of two");

struct bind_limit *bind_limit_new(unsigned limit, unsigned window)
{
	struct bind_limit *bl = calloc(1, sizeof(*bl));
	if (!bl)
		return NULL;
	pthread_mutex_init(&bl->lock, NULL);
	bl->limit = limit;
	bl->window = window;
	return bl;
}

void bind_limit_free(struct bind_limit *bl)
{
	if (!bl)
		return;
	pthread_mutex_destroy(&bl->lock);
	free(bl);
}

/* now may be a second before a slot's start: another worker read the clock later but
 * took the mutex first. Signed differences keep such a slot live. */
static bool expired(const struct bind_limit *bl, const struct slot *s, uint32_t now)
{
	return s->key == 0 || s->count == 0 || (int32_t)(now - s->start) >= (int32_t)bl->window;
}

static struct slot *set_of(struct bind_limit *bl, uint64_t key)
{
	return &bl->slots[(key & (BIND_LIMIT_SETS - 1)) * BIND_LIMIT_WAYS];
}

/* key's slot, or NULL. */
static struct slot *find(struct bind_limit *bl, uint64_t key)
{
	struct slot *set = set_of(bl, key);
	for (int i = 0; i < BIND_LIMIT_WAYS; i++)
		if (set[i].key == key)
			return &set[i];
	return NULL;
}

static bool at_limit(const struct bind_limit *bl, uint64_t key, const struct slot *s, uint32_t now)
{
	return key && s && !expired(bl, s, now) && s->count >= bl->limit;
}

/* key's slot, taking one of its set for it when it has none (bind_limit.h's order). */
static struct slot *find_or_take(struct bind_limit *bl, uint64_t key, uint32_t now)
{
	struct slot *s = find(bl, key);
	if (s)
		return s;
	struct slot *set = set_of(bl, key), *best = NULL;
	int best_rank = 0;
	for (int i = 0; i < BIND_LIMIT_WAYS; i++) {
		struct slot *c = &set[i];
		/* rank: 0 free or expired, 1 under the limit (fewest failures first), 2 at it
		 * (the window ending first) */
		int rank = expired(bl, c, now) ? 0 : c->count < bl->limit ? 1 : 2;
		if (!best || rank < best_rank ||
		    (rank == best_rank && rank == 1 && c->count < best->count) ||
		    (rank == best_rank && rank == 2 && (int32_t)(c->start - best->start) < 0)) {
			best = c;
			best_rank = rank;
		}
	}
	if (best_rank > 0)
		bl->evicted++;
	*best = (struct slot){.key = key};
	return best;
}

static void count_one(struct bind_limit *bl, uint64_t key, uint32_t now)
{
	struct slot *s = find_or_take(bl, key, now);
	if (expired(bl, s, now)) {
		s->count = 0;
		s->start = now;
	}
	s->count++;
}

bool bind_limit_try(struct bind_limit *bl, uint64_t dn, uint64_t addr, time_t now_s)
{
	uint32_t now = (uint32_t)now_s;
	pthread_mutex_lock(&bl->lock);
	bool ok = !at_limit(bl, dn, find(bl, dn), now) &&
	          !(addr && at_limit(bl, addr, find(bl, addr), now));
	if (ok) {
		count_one(bl, dn, now);
		if (addr)
			count_one(bl, addr, now);
	}
	pthread_mutex_unlock(&bl->lock);
	return ok;
}

void bind_limit_succeeded(struct bind_limit *bl, uint64_t dn, uint64_t addr)
{
	pthread_mutex_lock(&bl->lock);
	struct slot *s = find(bl, dn);
	if (s)
		s->count = 0;
	/* Replaced meanwhile (a full set), the key has nothing to take back. */
	if (addr && (s = find(bl, addr)) && s->count)
		s->count--;
	pthread_mutex_unlock(&bl->lock);
}

void bind_limit_counts(struct bind_limit *bl, time_t now_s, struct bind_limit_counts *out)
{
	uint32_t now = (uint32_t)now_s;
	*out = (struct bind_limit_counts){0};
	pthread_mutex_lock(&bl->lock);
	for (size_t i = 0; i < sizeof(bl->slots) / sizeof(bl->slots[0]); i++) {
		const struct slot *s = &bl->slots[i];
		if (expired(bl, s, now))
			continue;
		out->tracked++;
		if (s->count >= bl->limit)
			++*(s->key & LIMIT_KEY_ADDR ? &out->addrs_over : &out->dns_over);
	}
	out->evicted = bl->evicted;
	pthread_mutex_unlock(&bl->lock);
}
