/*
 * A search's entry on the wire: the computed attributes it asks for, and a Content
 * Synchronization search's Sync State control (or the entry only named present). The hot
 * path of every search: inline, so that search_run.c's loop keeps it in its own code (a
 * call out of the file cost a lookup 4% of its instructions, bench/perf_check.sh), and the
 * persistent search (search_persist.c) sends as the search does. Private to server/ops/.
 *
 * Sends entry id (viewed as e) as ae lets the client read it, for the search c runs.
 * Returns 0, or ENOMEM.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_SEND_H
#define MINIDIR_SERVER_OPS_SEARCH_SEND_H

#include <errno.h>

#include "server/net/reply.h"
#include "server/ops/ops.h"
#include "server/ops/search_op.h"
#include "server/ops/search_sync.h"

/* The body of both: with ctl NULL (a constant once inlined) the search's own path, as it was
 * before Content Synchronization; else the entry with that [0] Controls element. */
__attribute__((always_inline)) static inline int
search_send_entry_ctl(struct conn *c, entry_id id, const struct entry_view *e,
                      const struct access_entry *ae, const struct buf *ctl)
{
	struct search_op *s = search_running(c);
	struct worker *w = c->w;
	s->sel.gate = access_read_gate(ae);
	ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
	int rc = 0;
	if (s->want_oper && computed_attrs_build(&ops_worker(w)->extra, &s->sel, s->read.db,
	                                         s->read.txn, id, e, &s->access) < 0)
		rc = ENOMEM;
	s->sent++;
	s->page_sent++;
	STAT_ADD(w->stats.entries_sent, 1);
	if (rc == 0 && !ctl &&
	    reply_entry(c, s->msgid, &ENTRY_STORED(e), &s->sel, ops_worker(w)->extra.data,
	                ops_worker(w)->extra.len) < 0)
		rc = ENOMEM;
	if (rc == 0 && ctl &&
	    reply_entry_ctl(c, s->msgid, &ENTRY_STORED(e), &s->sel, ops_worker(w)->extra.data,
	                    ops_worker(w)->extra.len, ctl->data, ctl->len) < 0)
		rc = ENOMEM;
	s->sel.gate = NULL; /* ae is the caller's, for this entry only */
	return rc;
}

/* search_sync_msg.c: search_send_entry of a Content Synchronization search, out of the
 * search's loop: its Sync State control, or the entry only named present. */
int search_send_sync_entry(struct conn *c, entry_id id, const struct entry_view *e,
                           const struct access_entry *ae);

__attribute__((always_inline)) static inline int search_send_entry(struct conn *c, entry_id id,
                                                                   const struct entry_view *e,
                                                                   const struct access_entry *ae)
{
	if (__builtin_expect(search_running(c)->sync != NULL, 0))
		return search_send_sync_entry(c, id, e, ae);
	return search_send_entry_ctl(c, id, e, ae, NULL);
}

#endif
