/*
 * A replica's recent changes, for the Content Synchronization searches it answers
 * (server/ops/search_sync.h, sync_provider = yes): the consumer thread notes each entry it
 * stores or deletes inside its write transaction and publishes them when the transaction
 * commits, with the cookie that covers them; each persistent search reads on from its
 * position. A bounded ring of sync_provider_log changes: a search that falls further
 * behind than that is told so (CHANGE_FEED_BEHIND) and ends with e-syncRefreshRequired.
 * A change is its entry's entryUUID and, for a delete, its DN; a search reads what a
 * stored entry is now from the database, so a change published twice is sent the same.
 *
 * Memory: cap records of 32 bytes, the DNs of the deletes among them, the changes noted
 * in the open transaction (at most cap: past it they are only counted, and publishing
 * them moves every search behind), and one cookie.
 *
 * Thread rules: the noting and publishing calls are the consumer thread's; the reading
 * calls any thread's (a mutex, taken by a persistent search once per look and by the
 * consumer once per commit: never on a lookup). change_feed_head is a lock-free load.
 */
#ifndef MINIDIR_SERVER_CHANGE_FEED_H
#define MINIDIR_SERVER_CHANGE_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"

struct change_feed;

/* One change as a reader gets it: dn (a delete's; else empty) points into the reader's
 * buffer (change_feed_read's dns). */
struct feed_change {
	unsigned char uuid[16];
	bool deleted;
	size_t dn_off, dnlen; /* in dns */
};

#define CHANGE_FEED_BEHIND (-2)

/* A feed keeping the last cap changes (cap >= 1). NULL when out of memory. */
struct change_feed *change_feed_new(size_t cap);
void change_feed_free(struct change_feed *f);

/* The consumer stored (deleted: deleted) the entry uuid in its open transaction; dn is the
 * deleted entry's DN (dnlen 0 when not known). Returns 0, or -1 when out of memory (then
 * the change is counted, and its publishing moves every reader behind). */
int change_feed_note(struct change_feed *f, const unsigned char uuid[16], bool deleted,
                     const char *dn, size_t dnlen);
/* The transaction committed: the changes noted become readable, under cookie[0..len) (the
 * cookie stored with them; the one a reader at the head hands out). With no change noted
 * only the cookie changes. Returns 0, or -1 when out of memory (the cookie is then kept as
 * it was and every reader is behind). */
int change_feed_publish(struct change_feed *f, const void *cookie, size_t len);
/* The transaction was aborted: the changes noted are forgotten. */
void change_feed_discard(struct change_feed *f);

/* The position of the newest published change (0 before any). */
uint64_t change_feed_head(const struct change_feed *f);

/* The head and the cookie it was published with (copied into cookie, reset first).
 * Returns 0 or -1 (out of memory). */
int change_feed_position(struct change_feed *f, uint64_t *head, struct buf *cookie);

/*
 * Up to max changes after position from into out (*n of them) and their DNs into dns
 * (reset first); *from moves past them. When they reach the head, *caught_up is set and
 * cookie (reset) holds the head's. Returns 0, CHANGE_FEED_BEHIND when changes after *from
 * are no longer kept, or -1 (out of memory).
 */
int change_feed_read(struct change_feed *f, uint64_t *from, struct feed_change *out, size_t max,
                     size_t *n, struct buf *dns, bool *caught_up, struct buf *cookie);

#endif
