/* A replica's recent changes, for its Content Synchronization searches (change_feed.h). */
#include "server/change_feed.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct feed_record {
	unsigned char uuid[16];
	bool deleted;
	char *dn; /* a delete's DN (malloc'd), or NULL */
	size_t dnlen;
};

struct change_feed {
	pthread_mutex_t lock;
	size_t cap;
	struct feed_record *ring; /* position p is ring[(p - 1) % cap], p in (oldest, head] */
	uint64_t head;            /* atomic: written under lock, read without it */
	uint64_t oldest;          /* positions after it are kept */
	struct buf cookie;        /* the head's */
	/* The consumer's own: the open transaction's changes (at most cap), and how many. */
	struct feed_record *pending;
	size_t npending;
	uint64_t counted;
};

struct change_feed *change_feed_new(size_t cap)
{
	struct change_feed *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->cap = cap ? cap : 1;
	f->ring = calloc(f->cap, sizeof(*f->ring));
	f->pending = calloc(f->cap, sizeof(*f->pending));
	if (!f->ring || !f->pending) {
		free(f->ring);
		free(f->pending);
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	return f;
}

void change_feed_discard(struct change_feed *f)
{
	for (size_t i = 0; i < f->npending; i++)
		free(f->pending[i].dn);
	f->npending = 0;
	f->counted = 0;
}

void change_feed_free(struct change_feed *f)
{
	if (!f)
		return;
	change_feed_discard(f);
	for (size_t i = 0; i < f->cap; i++)
		free(f->ring[i].dn);
	free(f->ring);
	free(f->pending);
	buf_free(&f->cookie);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int change_feed_note(struct change_feed *f, const unsigned char uuid[16], bool deleted,
                     const char *dn, size_t dnlen)
{
	f->counted++;
	if (f->npending == f->cap)
		return 0; /* more than the ring keeps: counted; publishing moves readers behind */
	struct feed_record *r = &f->pending[f->npending];
	memcpy(r->uuid, uuid, 16);
	r->deleted = deleted;
	r->dn = NULL;
	r->dnlen = 0;
	if (deleted && dnlen) {
		r->dn = malloc(dnlen);
		if (!r->dn)
			return -1;
		memcpy(r->dn, dn, dnlen);
		r->dnlen = dnlen;
	}
	f->npending++;
	return 0;
}

int change_feed_publish(struct change_feed *f, const void *cookie, size_t len)
{
	struct buf copy = {0};
	int rc = buf_append(&copy, cookie, len);
	pthread_mutex_lock(&f->lock);
	uint64_t head = f->head + f->counted;
	if (f->counted > f->npending || rc < 0) {
		f->oldest = head; /* changes were not kept: every reader is behind */
	} else {
		for (size_t i = 0; i < f->npending; i++) {
			struct feed_record *slot = &f->ring[(f->head + i) % f->cap];
			free(slot->dn);
			*slot = f->pending[i];
		}
		f->npending = 0;
		if (head - f->oldest > f->cap)
			f->oldest = head - f->cap;
	}
	if (rc == 0) {
		buf_free(&f->cookie);
		f->cookie = copy;
	}
	__atomic_store_n(&f->head, head, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&f->lock);
	change_feed_discard(f); /* what was not moved into the ring */
	return rc;
}

uint64_t change_feed_head(const struct change_feed *f)
{
	return __atomic_load_n(&f->head, __ATOMIC_ACQUIRE);
}

int change_feed_position(struct change_feed *f, uint64_t *head, struct buf *cookie)
{
	cookie->off = cookie->len = 0;
	pthread_mutex_lock(&f->lock);
	*head = f->head;
	int rc = buf_append(cookie, f->cookie.data, f->cookie.len);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int change_feed_read(struct change_feed *f, uint64_t *from, struct feed_change *out, size_t max,
                     size_t *n, struct buf *dns, bool *caught_up, struct buf *cookie)
{
	*n = 0;
	*caught_up = false;
	dns->off = dns->len = 0;
	cookie->off = cookie->len = 0;
	int rc = 0;
	pthread_mutex_lock(&f->lock);
	if (*from < f->oldest) {
		pthread_mutex_unlock(&f->lock);
		return CHANGE_FEED_BEHIND;
	}
	uint64_t p = *from;
	while (p < f->head && *n < max && rc == 0) {
		const struct feed_record *r = &f->ring[p % f->cap];
		struct feed_change *c = &out[*n];
		memcpy(c->uuid, r->uuid, 16);
		c->deleted = r->deleted;
		c->dn_off = dns->len;
		c->dnlen = r->dnlen;
		rc = r->dnlen ? buf_append(dns, r->dn, r->dnlen) : 0;
		if (rc == 0) {
			(*n)++;
			p++;
		}
	}
	if (rc == 0 && p == f->head) {
		*caught_up = true;
		rc = buf_append(cookie, f->cookie.data, f->cookie.len);
	}
	pthread_mutex_unlock(&f->lock);
	*from = p;
	return rc < 0 ? -1 : 0;
}
