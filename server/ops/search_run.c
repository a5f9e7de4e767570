/*
 * A search's slices (search_op.h): each reads candidates in the search's read transaction
 * (search_txn.h), tests them (scope, access, filter, within the slice's work) and sends the
 * matches through the send policy, until the search ends, the socket is full, the slice's
 * work is used or a page is complete. A sorted search first collects every match, then
 * sends them in order. This is the hot path of every search: one call per candidate.
 */
#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <ldap.h>

#include "server/clock.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/net/reply.h"
#include "server/ops/ops.h"
#include "server/ops/search_alias.h"
#include "server/ops/search_op.h"
#include "server/ops/search_send.h"
#include "server/ops/search_sync.h"
#include "storage/candidates.h"
#include "storage/db_fault.h"

/* Candidates examined before a search lets the worker's other connections run, at most. */
#define SEARCH_SLICE 512
/* Work in a slice before the search lets them run: each candidate counts as a unit and
 * filter work as filter.h counts it. About 1 ms of evaluating here (bench/costly_filter.sh):
 * an OR of 1,000 :dn: items yields after every few candidates, (uid=x) after 512. */
#define SEARCH_SLICE_WORK 20000

/* Outcome of looking at one candidate (STEP_LIMIT: max_search_work is used up; STEP_CUT: the
 * slice ended in the middle of its filter, which the next slice resumes). */
enum step { STEP_MATCH, STEP_SKIP, STEP_END, STEP_ERROR, STEP_LIMIT, STEP_CUT };

static const char work_message[] =
    "the search needs more filter work than the server allows (max_search_work); use a "
    "simpler filter or a narrower base or scope";

/*
 * Reads the next candidate (the one a slice left cut first) and tests it: scope and filter,
 * its filter work ending at slice_end (an absolute s->work): past it the candidate is
 * STEP_CUT, to be tested again, where what its filter decided is remembered (s->memo).
 */
static enum step next_candidate(struct conn *c, entry_id *id, struct entry_view *e,
                                struct access_entry *ae, int *rc, uint64_t slice_end)
{
	struct search_op *s = search_running(c);
	struct worker *w = c->w;
	if (s->have_resume) {
		*id = s->resume_id;
		s->have_resume = false;
		*rc = 0;
	} else {
		if (s->memo.used) /* what the last candidate decided (filter_memo_clear) */
			filter_memo_clear(&s->memo);
		*rc = cand_next(&s->plan.cand, id);
	}
	if (*rc == DB_NOTFOUND)
		return STEP_END;
	if (*rc)
		return STEP_ERROR;
	entry_id cand = *id; /* before an alias stands for its target */
	*rc = db_get_entry(s->read.db, s->read.txn, *id, e);
	if (*rc == DB_NOTFOUND) /* an index naming a missing entry: skip it */
		return STEP_SKIP;
	if (*rc)
		return STEP_ERROR;
	if (!search_plan_holds(&s->plan, *id, e))
		return STEP_SKIP;
	/* derefInSearching: an alias below the base stands for its target. */
	bool from_candidates = true;
	if ((s->deref & LDAP_DEREF_SEARCHING) && *id != s->plan.base_id && search_is_alias(e)) {
		if (search_deref(s->read.db, s->read.txn, id, e) != LDAP_SUCCESS)
			return STEP_SKIP; /* a dangling alias matches nothing */
		if (search_plan_reaches(&s->plan, *id, e))
			return STEP_SKIP; /* the search reaches the target itself: no duplicate */
		from_candidates = false;
	}
	/* An entry the client may not read is not there for it (slapd skips it too). */
	access_entry_init(ae, &s->access, *id, e);
	if (ae->entry < ACCESS_READ)
		return STEP_SKIP;
	const struct attr_gate *gate = access_search_gate(ae);
	if (s->plan.filter_answered && from_candidates &&
	    attr_gate_allows(gate, s->filter->attr, s->filter->attr_len))
		return STEP_MATCH; /* the index answered the filter (search_plan.h) */
	struct filter_ctx fctx = {.dn = e->dn,
	                          .dnlen = e->dnlen,
	                          .id = *id, /* the entry tested: an alias's target */
	                          .gate = gate,
	                          .scratch = &w->scratch,
	                          .work = &s->work,
	                          .work_limit = s->max_work,
	                          .memo = s->memo.n ? &s->memo : NULL};
	s->memo.yield = slice_end;
	if (s->filter_oper) { /* the filter names computed attributes (entryDN, ...) */
		ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
		if (computed_attrs_all(&ops_worker(w)->extra, s->read.db, s->read.txn, *id, e,
		                       &s->access) < 0) {
			*rc = ENOMEM;
			return STEP_ERROR;
		}
		fctx.extra = ops_worker(w)->extra.data;
		fctx.extra_len = ops_worker(w)->extra.len;
	}
	enum filter_result r = filter_eval_ctx(s->filter, e->attrs, e->attrslen, &fctx);
	if (s->max_work && s->work > s->max_work)
		return STEP_LIMIT;
	if (!filter_memo_done(&s->memo, s->filter)) {
		s->resume_id = cand;
		s->have_resume = true;
		return STEP_CUT;
	}
	return r == FILTER_TRUE ? STEP_MATCH : STEP_SKIP;
}

/* The next entry to send: a page's look-ahead, the sorted list, or a candidate. */
static enum step next_match(struct conn *c, entry_id *id, struct entry_view *e,
                            struct access_entry *ae, int *rc, uint64_t slice_end)
{
	struct search_op *s = search_running(c);
	if (s->have_pending || s->sort_collected) {
		if (s->have_pending) {
			*id = s->pending_id;
			s->have_pending = false;
		} else if (s->sorted.pos < s->sorted.end) {
			*id = s->sorted.items[s->sorted.pos++].id;
		} else {
			return STEP_END;
		}
		*rc = db_get_entry(s->read.db, s->read.txn, *id, e);
		if (*rc == 0)
			access_entry_init(ae, &s->access, *id, e);
		return *rc == 0 ? STEP_MATCH : *rc == DB_NOTFOUND ? STEP_SKIP : STEP_ERROR;
	}
	return next_candidate(c, id, e, ae, rc, slice_end);
}

/* Starts a slice of s: its read transaction (search_txn.h), which the access rules' group
 * lookups and rule filters read too. Returns 0 or an LMDB error. */
static int slice_begin(struct search_op *s, struct worker *w)
{
	int rc = search_txn_slice_begin(&s->read, w);
	s->access.db = s->read.db;
	s->access.txn = s->read.txn;
	return rc;
}

void search_expire(struct db_hold *h)
{
	struct search_op *s = (struct search_op *)((char *)h - offsetof(struct search_op, read) -
	                                           offsetof(struct search_txn, hold));
	struct conn *c = s->c;
	if (c->parked == &s->task)
		conn_task_drop(&c->parked);
	else if (c->task == &s->task && c->blocked && !conn_closing(c))
		search_finish(c, LDAP_UNWILLING_TO_PERFORM, NULL, search_expired_message);
}

/* Where a slice stands: rc an LMDB error (or ENOMEM) that ends it, else 0; done, the search
 * ends with result and message (static text); page_full, a page is complete. And the
 * candidate it looks at (one place for both steps, so that they inline into search_run
 * with no stack of their own: the access decisions are large). */
struct slice {
	int rc;
	int result;
	const char *message;
	bool done, page_full;
	entry_id id;
	struct entry_view e;
	struct access_entry ae;
};

/* A VLV search, sorted: the window it sends (search_vlv.h), or the error it ends with.
 * Past the size limit the list's length is unknown: sizeLimitExceeded, nothing sent. */
static void vlv_place(struct conn *c, struct search_op *s, struct slice *sl)
{
	if (s->sizelimit && s->sorted.n > (size_t)s->sizelimit) {
		sl->result = LDAP_SIZELIMIT_EXCEEDED;
		sl->done = true;
		return;
	}
	vlv_window(&s->sorted, &s->sort, &s->vlv_req, &c->w->scratch, &s->vlv_at);
	if (s->vlv_at.result != LDAP_SUCCESS) {
		sl->result = LDAP_VLV_ERROR; /* as sssvlv: the search fails, the control says why */
		sl->message = "VLV target out of range";
		if (s->vlv_at.result == LDAP_INAPPROPRIATE_MATCHING)
			sl->message = "VLV assertion value does not match the sort key's syntax";
		sl->done = true;
		return;
	}
	s->sorted.pos = s->vlv_at.start;
	s->sorted.end = s->vlv_at.end;
}

/* One step of collecting a sorted search's matches (the next candidate, in sl): a match is
 * added to the sorted list; the last (or one past the size limit) sorts it. False when the
 * slice stops here (cut in the middle of a candidate's filter). */
static bool collect_step(struct conn *c, struct search_op *s, struct slice *sl, uint64_t slice_end)
{
	enum step st = next_candidate(c, &sl->id, &sl->e, &sl->ae, &sl->rc, slice_end);
	if (st == STEP_CUT) {
		conn_make_ready(c);
		return false;
	}
	if (st == STEP_MATCH && sort_add(&s->sorted, &s->sort, sl->id, &sl->e,
	                                 access_read_gate(&sl->ae), &c->w->scratch) < 0)
		sl->rc = ENOMEM;
	/* One match past the size limit is enough to know it is exceeded:
	 * collecting stops there, so memory stays bounded by the limit. */
	if (st == STEP_MATCH && s->sizelimit && s->sorted.n > (size_t)s->sizelimit)
		st = STEP_END;
	if (st == STEP_END) {
		sort_finish(&s->sorted, &s->sort);
		s->sort_collected = true;
		sl->rc = 0;
		if (s->vlv)
			vlv_place(c, s, sl);
	}
	if (st == STEP_SKIP)
		sl->rc = 0;
	if (st == STEP_LIMIT) {
		sl->result = LDAP_ADMINLIMIT_EXCEEDED;
		sl->message = work_message;
		sl->done = true;
	}
	return true;
}

/* One step of sending: the next match is sent, unless the size limit is reached or the page
 * is full (the match then opens the next page). False when the slice stops here. */
static bool send_step(struct conn *c, struct search_op *s, struct slice *sl, uint64_t slice_end)
{
	enum step st = next_match(c, &sl->id, &sl->e, &sl->ae, &sl->rc, slice_end);
	switch (st) {
	case STEP_CUT:
		conn_make_ready(c);
		return false;
	case STEP_SKIP:
		sl->rc = 0;
		return true;
	case STEP_END:
		sl->rc = 0;
		sl->done = true;
		return false;
	case STEP_ERROR:
		return false;
	case STEP_LIMIT:
		sl->result = LDAP_ADMINLIMIT_EXCEEDED;
		sl->message = work_message;
		sl->done = true;
		return false;
	case STEP_MATCH:
		break;
	}
	if (s->sizelimit && s->sent >= s->sizelimit) {
		sl->result = LDAP_SIZELIMIT_EXCEEDED;
		sl->done = true;
		return false;
	}
	if (s->page_size && s->page_sent == s->page_size) {
		/* Another match exists: it opens the next page. */
		s->pending_id = sl->id;
		s->have_pending = true;
		sl->page_full = true;
		return false;
	}
	sl->rc = search_send_entry(c, sl->id, &sl->e, &sl->ae);
	return true;
}

/* Ends the slice: the candidates' cursors and the transaction (kept for the next slice
 * unless the search ends), then the answer when the search ends or a page is complete. */
static void slice_finish(struct conn *c, struct search_op *s, const struct slice *sl)
{
	struct worker *w = c->w;
	cand_end(&s->plan.cand, &db_worker(w)->cursors);
	bool ends = (sl->rc != 0 && sl->rc != DB_NOTFOUND) || (sl->done && !sl->page_full);
	search_txn_slice_end(&s->read, w, !ends);
	if (sl->rc != 0 && sl->rc != DB_NOTFOUND) {
		/* A read failed in the worker's transaction (the search's own is renewed by
		 * each slice). */
		if (sl->rc != ENOMEM && s->read.txn == db_worker(w)->txn)
			db_gen_txn_failed(w);
		log_error("search: %s", sl->rc == ENOMEM ? "out of memory" : db_error_text(sl->rc));
		search_finish(c, LDAP_OTHER, NULL, "internal error reading the database");
	} else if (sl->page_full) {
		search_finish_page(c, LDAP_SUCCESS, NULL, NULL, true);
	} else if (sl->done && s->sync && sl->result == LDAP_SUCCESS) {
		search_sync_refresh_end(c);
	} else if (sl->done) {
		search_finish(c, sl->result, NULL, sl->message);
	}
}

/* LMDB asserted in s's slice (f, db_fault.h): a damaged page. The search fails alone (80),
 * logged with where its candidates stood; the cursor LMDB stopped in is closed, never
 * pooled, and the transaction reset, so the worker serves on. */
static void search_damaged(struct conn *c, struct search_op *s, struct db_fault *f)
{
	struct worker *w = c->w;
	char where[200];
	cand_where(&s->plan.cand, s->read.db, where, sizeof(where));
	cand_end(&s->plan.cand, NULL);
	db_fault_end(f); /* the cursors the jump left open */
	search_txn_failed(&s->read, w);
	log_error("%s: a damaged page met by a search (conn fd=%d msgid=%d), its candidates at "
	          "%s: %s; the search fails (80), the worker goes on (minidir -t checks every "
	          "page)",
	          w->srv->cfg.database, c->fd, (int)s->msgid, where, f->lmdb);
	search_finish(c, LDAP_OTHER, NULL, "a damaged page of the database file could not be read");
}

void search_run(struct conn *c)
{
	struct search_op *s = search_running(c);
	struct worker *w = c->w;
	if (db_hold_expired(w->srv, &s->read.hold)) {
		search_finish(c, LDAP_UNWILLING_TO_PERFORM, NULL, search_expired_message);
		return;
	}
	/* A damaged page LMDB asserts on comes back here (db_fault.h): nothing the slice
	 * holds is a lock, and what it holds the search owns, so it can end alone. */
	struct db_fault f;
	db_fault_begin(&f);
	if (sigsetjmp(f.jump, 0) != 0) {
		search_damaged(c, s, &f);
		return;
	}
	/* Not zeroed whole: the candidate's part is set by each step before it is read. */
	struct slice sl;
	sl.rc = slice_begin(s, w);
	sl.result = LDAP_SUCCESS;
	sl.message = NULL;
	sl.done = sl.page_full = false;
	if (sl.rc == 0)
		cand_begin(&s->plan.cand, s->read.txn, &db_worker(w)->cursors);
	uint64_t work_start = s->work;
	for (int n = 0; sl.rc == 0 && !sl.done; n++) {
		if (c->blocked || conn_closing(c))
			break; /* continues on EPOLLOUT */
		if (n == SEARCH_SLICE ||
		    (uint64_t)n + (s->work - work_start) >= SEARCH_SLICE_WORK) {
			conn_make_ready(c);
			break;
		}
		/* Where this slice's work ends: a candidate's filter still being evaluated there
		 * is cut and resumed by the next slice (next_candidate). */
		uint64_t slice_end = work_start + SEARCH_SLICE_WORK - (uint64_t)n;
		if (s->deadline && clock_seconds() >= s->deadline) {
			sl.result = LDAP_TIMELIMIT_EXCEEDED;
			sl.done = true;
			break;
		}
		bool go_on = s->sorting && !s->sort_collected ? collect_step(c, s, &sl, slice_end)
		                                              : send_step(c, s, &sl, slice_end);
		if (!go_on)
			break;
	}
	db_fault_end(&f);
	slice_finish(c, s, &sl);
}
