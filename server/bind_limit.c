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
	uint64_t evicted, untracked;
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

/*
 * What a live slot is worth keeping, the lowest given up first (bind_limit.h's order): an
 * address under the limit, an address at it, a DN under it; a DN at the limit in its
 * window is never given up (BIND_LIMIT_KEEP), so that nothing a client sends unlocks it.
 */
enum {
	BIND_LIMIT_FREE,
	BIND_LIMIT_ADDR_UNDER,
	BIND_LIMIT_ADDR_AT,
	BIND_LIMIT_DN_UNDER,
	BIND_LIMIT_KEEP
};

static int worth(const struct bind_limit *bl, const struct slot *c, uint32_t now)
{
	if (expired(bl, c, now))
		return BIND_LIMIT_FREE;
	bool at = c->count >= bl->limit;
	if (c->key & LIMIT_KEY_ADDR)
		return at ? BIND_LIMIT_ADDR_AT : BIND_LIMIT_ADDR_UNDER;
	return at ? BIND_LIMIT_KEEP : BIND_LIMIT_DN_UNDER;
}

/* True if slot c is to be given up before best, both worth rank: under the limit the one
 * with fewer failures, at it the one whose window ends first. */
static bool before(const struct slot *c, const struct slot *best, int rank)
{
	if (rank == BIND_LIMIT_ADDR_AT)
		return (int32_t)(c->start - best->start) < 0;
	return c->count < best->count;
}

/* key's slot, taking one of its set for it when it has none; NULL when every slot of the
 * set is a DN at the limit (the key is not counted: untracked). */
static struct slot *find_or_take(struct bind_limit *bl, uint64_t key, uint32_t now)
{
	struct slot *s = find(bl, key);
	if (s)
		return s;
	struct slot *set = set_of(bl, key), *best = NULL;
	int best_rank = BIND_LIMIT_KEEP;
	for (int i = 0; i < BIND_LIMIT_WAYS; i++) {
		struct slot *c = &set[i];
		int rank = worth(bl, c, now);
		if (rank < best_rank || (rank == best_rank && best && before(c, best, rank))) {
			best = c;
			best_rank = rank;
		}
	}
	if (!best) {
		bl->untracked++;
		return NULL;
	}
	if (best_rank > BIND_LIMIT_FREE)
		bl->evicted++;
	*best = (struct slot){.key = key};
	return best;
}

static void count_one(struct bind_limit *bl, uint64_t key, uint32_t now)
{
	struct slot *s = find_or_take(bl, key, now);
	if (!s)
		return;
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
	out->untracked = bl->untracked;
	pthread_mutex_unlock(&bl->lock);
}
