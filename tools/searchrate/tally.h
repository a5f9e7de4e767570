/*
 * tally.h: a load thread's counters (struct stats) under its own mutex, shared with the main
 * thread, which moves them out every interval (tally_take). Both engines use it.
 */
#ifndef SEARCHRATE_TALLY_H
#define SEARCHRATE_TALLY_H

#include <pthread.h>
#include <string.h>

#include "tools/searchrate/stats.h"

struct sr_tally {
	pthread_mutex_t mu;
	struct stats st; /* guarded by mu */
};

static inline void tally_init(struct sr_tally *t)
{
	pthread_mutex_init(&t->mu, NULL);
	stats_reset(&t->st);
}

static inline void tally_destroy(struct sr_tally *t)
{
	pthread_mutex_destroy(&t->mu);
}

/* A completed search (stats_record_search). */
static inline void tally_search(struct sr_tally *t, int rc, uint64_t entries, uint64_t ns)
{
	pthread_mutex_lock(&t->mu);
	stats_record_search(&t->st, rc, entries, ns);
	pthread_mutex_unlock(&t->mu);
}

/* n errors that are not completed searches: requests lost with a connection, failed connects. */
static inline void tally_error(struct sr_tally *t, int rc, uint64_t n)
{
	pthread_mutex_lock(&t->mu);
	stats_record_error(&t->st, rc, n);
	pthread_mutex_unlock(&t->mu);
}

static inline void tally_reconnect(struct sr_tally *t)
{
	pthread_mutex_lock(&t->mu);
	t->st.reconnects++;
	pthread_mutex_unlock(&t->mu);
}

/* A TLS handshake that resumed an earlier session (--resumeTLSSessions). */
static inline void tally_resumed(struct sr_tally *t)
{
	pthread_mutex_lock(&t->mu);
	t->st.resumed++;
	pthread_mutex_unlock(&t->mu);
}

/* Adds t's counters to into and resets them; scratch (one struct stats) keeps the mutex held
 * only for a copy. */
static inline void tally_take(struct sr_tally *t, struct stats *into, struct stats *scratch)
{
	pthread_mutex_lock(&t->mu);
	memcpy(scratch, &t->st, sizeof(*scratch));
	stats_reset(&t->st);
	pthread_mutex_unlock(&t->mu);
	stats_add(into, scratch);
}

#endif
