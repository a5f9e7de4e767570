/*
 * A refreshAndPersist search after its refresh (search_sync.h): the change feed's changes
 * sent as they come, each entry as it stands in a fresh snapshot.
 */
#include <errno.h>
#include <ldap.h>

#include "server/clock.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/net/reply.h"
#include "server/ops/ops.h"
#include "server/ops/search_op.h"
#include "server/ops/search_send.h"
#include "server/ops/search_sync.h"

/* Whether entry id (e) is one the search returns: in its scope, readable, matching. */
static int persist_matches(struct conn *c, struct search_op *s, entry_id id,
                           const struct entry_view *e, struct access_entry *ae)
{
	const struct search_plan *p = &s->plan;
	bool in = p->scope == LDAP_SCOPE_BASE
	              ? id == p->base_id
	              : (p->scope == LDAP_SCOPE_SUBTREE && id == p->base_id) ||
	                    search_plan_reaches(p, id, e);
	if (!in)
		return 0;
	access_entry_init(ae, &s->access, id, e);
	if (ae->entry < ACCESS_READ)
		return 0;
	struct worker *w = c->w;
	uint64_t work = 0; /* one entry's filter: bounded by max_filter_items, checked at start */
	struct filter_ctx fctx = {.dn = e->dn,
	                          .dnlen = e->dnlen,
	                          .id = id,
	                          .gate = access_search_gate(ae),
	                          .scratch = &w->scratch,
	                          .work = &work};
	if (s->filter_oper) {
		ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
		if (computed_attrs_all(&ops_worker(w)->extra, s->read.db, s->read.txn, id, e,
		                       &s->access) < 0)
			return -1;
		fctx.extra = ops_worker(w)->extra.data;
		fctx.extra_len = ops_worker(w)->extra.len;
	}
	return filter_eval_ctx(s->filter, e->attrs, e->attrslen, &fctx) == FILTER_TRUE;
}

/* A delete of uuid, named dn[0..dnlen) (the search's base when not known). 0 or -1. */
static int send_delete(struct conn *c, struct search_op *s, const unsigned char *uuid,
                       const void *dn, size_t dnlen)
{
	struct sync_search *y = s->sync;
	if (!dnlen) {
		dn = y->base.data;
		dnlen = y->base.len;
	}
	int rc = search_sync_state_control(y, SYNC_DELETE, uuid);
	if (rc == 0)
		rc = reply_bare_entry(c, s->msgid, dn, dnlen, y->scratch.data, y->scratch.len);
	return rc;
}

/* One change: the entry as it stands, a delete, or nothing (stored no more: its delete
 * follows). 0, or an LMDB error or ENOMEM. */
static int send_change(struct conn *c, struct search_op *s, const struct feed_change *ch)
{
	struct sync_search *y = s->sync;
	if (ch->deleted)
		return send_delete(c, s, ch->uuid, y->dns.data + ch->dn_off, ch->dnlen) < 0 ? ENOMEM
		                                                                            : 0;
	entry_id id;
	struct entry_view e;
	struct access_entry ae;
	int rc = db_uuid2id(s->read.db, s->read.txn, ch->uuid, &id);
	if (rc == 0)
		rc = db_get_entry(s->read.db, s->read.txn, id, &e);
	if (rc == DB_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	int m = persist_matches(c, s, id, &e, &ae);
	if (m < 0)
		return ENOMEM;
	if (!m)
		return send_delete(c, s, ch->uuid, e.dn, e.dnlen) < 0 ? ENOMEM : 0;
	return search_send_entry(c, id, &e, &ae);
}

/* Ends the persistent search with rc (its consumer refreshes again on 4096). */
static void persist_end(struct conn *c, int rc, const char *why)
{
	search_finish(c, rc, NULL, why);
}

static void search_persist_run(struct conn *c);

void search_persist_start(struct conn *c)
{
	struct search_op *s = search_running(c);
	s->sync->persisting = true;
	s->task.resume = search_persist_run;
	conn_wake_at(&s->sync->wake, c, clock_ns() + (uint64_t)SYNC_POLL_MS * 1000000);
}

static void search_persist_run(struct conn *c)
{
	struct search_op *s = search_running(c);
	struct sync_search *y = s->sync;
	struct worker *w = c->w;
	if (c->blocked || conn_closing(c))
		return; /* goes on when the socket drains */
	if (db_hold_expired(w->srv, &s->read.hold)) {
		persist_end(c, LDAP_UNWILLING_TO_PERFORM, search_expired_message);
		return;
	}
	struct change_feed *feed = w->srv->feed;
	if (change_feed_head(feed) == y->seq) {
		conn_wake_at(&y->wake, c, clock_ns() + (uint64_t)SYNC_POLL_MS * 1000000);
		return;
	}
	uint64_t start = y->seq;
	size_t n = 0;
	bool caught_up = false;
	int rc = change_feed_read(feed, &y->seq, y->changes, SYNC_PERSIST_BATCH, &n, &y->dns,
	                          &caught_up, &y->upstream);
	if (rc == CHANGE_FEED_BEHIND) {
		persist_end(c, SYNC_REFRESH_REQUIRED,
		            "this replica no longer keeps the changes since this search's last "
		            "(sync_provider_log): refresh again");
		return;
	}
	if (rc < 0) {
		persist_end(c, LDAP_OTHER, "out of memory");
		return;
	}
	rc = search_txn_slice_begin(&s->read, w);
	s->access.db = s->read.db;
	s->access.txn = s->read.txn;
	size_t i = 0;
	for (; rc == 0 && i < n && !c->blocked && !conn_closing(c); i++)
		rc = send_change(c, s, &y->changes[i]);
	search_txn_slice_end(&s->read, w, false);
	if (rc) {
		log_error("sync search: %s", rc == ENOMEM ? "out of memory" : db_error_text(rc));
		persist_end(c, LDAP_OTHER, "internal error reading the database");
		return;
	}
	if (i < n) { /* the socket is full: the rest when it drains */
		y->seq = start + i;
		return;
	}
	if (!caught_up) {
		conn_make_ready(c);
		return;
	}
	if (search_sync_cookie(y) < 0 || search_sync_new_cookie(c, s) < 0)
		return; /* out of memory: the connection closes (reply.h) */
	conn_wake_at(&y->wake, c, clock_ns() + (uint64_t)SYNC_POLL_MS * 1000000);
}
