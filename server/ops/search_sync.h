/*
 * A search with the Sync Request control (RFC 4533), answered as a provider
 * (sync_provider = yes, on a replica): the Content Synchronization operation, so that
 * replicas follow this one.
 *
 * The refresh is the search itself (search_run.c), each entry it would send passed here
 * first (search_sync_state): without a cookie every entry goes out as an add; with one, an
 * entry whose entryCSN is no later than the cookie's is not sent but named present, and the
 * present UUIDs go out at the refresh's end as syncIdSet messages (refreshDeletes FALSE),
 * so the consumer deletes whatever else it holds. RFC 4533 3.3.1 allows this without any
 * history; what it costs is a walk of the search's scope per refresh. The cookie handed out
 * is the change feed's at the refresh's start (server/change_feed.h: the contextCSN this
 * replica holds of its own provider), which the refresh's snapshot covers, "rid=NNN," first
 * when the consumer's cookie had one.
 *
 * refreshOnly ends with SearchResultDone and the Sync Done control. refreshAndPersist sends
 * a refreshPresent Sync Info message (refreshDone) and goes on as a persistent search
 * (search_persist.c): it looks at the change feed every SYNC_POLL_MS and sends each change
 * from the refresh's start on, the entry as it stands now (Sync State modify) or a delete,
 * and a newcookie message when it has caught up. An entry that no longer matches the
 * search (scope, filter, access) is sent as a delete: the consumer may hold it. A search
 * that falls behind the feed ends with e-syncRefreshRequired (4096).
 *
 * Ownership: struct sync_search is the search's (s->sync), freed by search_free. Thread
 * rules: the search's worker.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_SYNC_H
#define MINIDIR_SERVER_OPS_SEARCH_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "protocol/request.h"
#include "protocol/sync.h"
#include "server/change_feed.h"
#include "server/net/conn.h"
#include "server/ops/access.h"
#include "storage/db.h"

/* How often a persistent search looks at the change feed. */
#define SYNC_POLL_MS 20
/* Changes a persistent search sends before it lets the worker's other connections run. */
#define SYNC_PERSIST_BATCH 64
/* UUIDs in one syncIdSet message. */
#define SYNC_IDSET_MAX 1000

struct search_op;

struct sync_search {
	enum sync_mode mode;
	struct buf csns;    /* the consumer cookie's csn= value; len 0: send every entry */
	bool have_csns;     /* it had one (reloadHint not set) */
	uint64_t seq;       /* the feed's position: the refresh's start, then what is sent */
	struct buf cookie;  /* the cookie handed out (rid=NNN,csn=...) */
	int rid;            /* the consumer cookie's rid, or -1 */
	struct buf base;    /* the search's base DN as asked (a delete's DN when none is known) */
	struct buf present; /* a refresh from a cookie: the UUIDs named present, 16 bytes each */
	bool refreshed;     /* refreshOnly: the refresh is whole (its Sync Done goes out) */
	bool persisting;
	struct conn_wake wake;
	struct feed_change changes[SYNC_PERSIST_BATCH];
	struct buf dns, upstream, scratch;
};

/*
 * For op_search, before its read transaction: when req has the Sync Request control, sets
 * s->sync (the feed's position taken first, so the refresh's snapshot covers its cookie),
 * or answers and ends the search: sync_provider off (12 when critical, else 53), with paged
 * results, sorting or VLV (53), a malformed control (2). True when the search goes on.
 */
bool search_sync_begin(struct conn *c, struct ldap_request *req, struct search_op *s);

/*
 * For send_entry (search_run.c), entry e (its record's UUID) about to be sent: 1 to send it
 * with *ctl (a [0] Controls element holding its Sync State control, in the search's
 * scratch), 0 when it is only named present, -1 out of memory.
 */
int search_sync_state(struct search_op *s, const struct entry_view *e, struct db_read *txn,
                      entry_id id, const struct buf **ctl);

/* The refresh found its last entry: the present UUIDs, then SearchResultDone (refreshOnly)
 * or the refreshPresent message and the persistent search. c->task is the search. */
void search_sync_refresh_end(struct conn *c);

/* y->cookie made again from y->upstream (the feed's cookie last read). 0 or -1. */
int search_sync_cookie(struct sync_search *y);
/* A newcookie Sync Info message with s->sync's cookie, flushed. 0 or -1. */
int search_sync_new_cookie(struct conn *c, struct search_op *s);

/* A Sync Info message of kind (sync_info_encode's cookie, flag, uuids and n) on c for s,
 * flushed with flush. 0 or -1. */
int search_sync_info(struct conn *c, int32_t msgid, enum sync_info_kind kind,
                     const struct buf *cookie, bool flag, const unsigned char *uuids, size_t n,
                     bool flush);

/* search_persist.c: the refresh of the search c runs has ended; it persists from now on,
 * looking at the feed every SYNC_POLL_MS. */
void search_persist_start(struct conn *c);

/* y->scratch made a [0] Controls element holding the Sync State control of uuid in state.
 * 0 or -1 (out of memory). */
int search_sync_state_control(struct sync_search *y, enum sync_state state,
                              const unsigned char *uuid);

/* Appends the Sync Done control (refreshOnly's end) to a SearchResultDone's list. 0 or -1. */
int search_sync_done_control(const struct sync_search *y, struct buf *list);

/* Frees y (NULL: nothing) and takes its wake off the queue. */
void search_sync_free(struct sync_search *y);

#endif
