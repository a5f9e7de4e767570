/* Verifiers of binds the provider accepted: see bind_cache.h. */
#include "server/replica/bind_cache.h"

#include <argon2.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct verifier {
	uint64_t user; /* 0: a free slot */
	time_t at;
	unsigned char salt[16], hash[32];
};

struct bind_cache {
	pthread_mutex_t lock;
	int ttl;
	struct verifier v[BIND_CACHE_MAX];
};

struct bind_cache *bind_cache_new(int ttl)
{
	struct bind_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->ttl = ttl;
	return c;
}

void bind_cache_free(struct bind_cache *c)
{
	if (!c)
		return;
	explicit_bzero(c->v, sizeof(c->v));
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static bool hash(const struct berval *cred, const unsigned char salt[16], unsigned char out[32])
{
	return argon2id_hash_raw(BIND_CACHE_T_COST, BIND_CACHE_M_COST, 1, cred->bv_val,
	                         cred->bv_len, salt, 16, out, 32) == ARGON2_OK;
}

int bind_cache_remember(struct bind_cache *c, uint64_t user, const struct berval *cred, time_t now)
{
	struct verifier n = {.user = user, .at = now};
	if (getrandom(n.salt, sizeof(n.salt), 0) != (ssize_t)sizeof(n.salt) ||
	    !hash(cred, n.salt, n.hash))
		return -1;
	pthread_mutex_lock(&c->lock);
	/* user's own slot, else a free or outdated one, else the oldest */
	struct verifier *slot = NULL, *oldest = &c->v[0];
	for (size_t i = 0; i < BIND_CACHE_MAX && !(slot && slot->user == user); i++) {
		struct verifier *v = &c->v[i];
		if (v->user == user || (!slot && (!v->user || now - v->at >= c->ttl)))
			slot = v;
		if (v->at < oldest->at)
			oldest = v;
	}
	*(slot ? slot : oldest) = n;
	pthread_mutex_unlock(&c->lock);
	explicit_bzero(&n, sizeof(n));
	return 0;
}

/* user's slot, or NULL; under c->lock. */
static struct verifier *find(struct bind_cache *c, uint64_t user)
{
	for (size_t i = 0; i < BIND_CACHE_MAX; i++)
		if (c->v[i].user == user)
			return &c->v[i];
	return NULL;
}

void bind_cache_forget(struct bind_cache *c, uint64_t user)
{
	pthread_mutex_lock(&c->lock);
	struct verifier *v = find(c, user);
	if (v)
		explicit_bzero(v, sizeof(*v));
	pthread_mutex_unlock(&c->lock);
}

bool bind_cache_matches(struct bind_cache *c, uint64_t user, const struct berval *cred, time_t now,
                        long *age)
{
	struct verifier copy = {0};
	pthread_mutex_lock(&c->lock);
	struct verifier *v = find(c, user);
	if (v && now - v->at < c->ttl && now >= v->at)
		copy = *v;
	pthread_mutex_unlock(&c->lock);
	unsigned char h[32];
	bool ok = copy.user && hash(cred, copy.salt, h) && CRYPTO_memcmp(h, copy.hash, 32) == 0;
	if (ok)
		*age = (long)(now - copy.at);
	explicit_bzero(&copy, sizeof(copy));
	explicit_bzero(h, sizeof(h));
	return ok;
}
