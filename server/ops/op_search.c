/*
 * Search: picks a candidate set, evaluates the filter on each candidate in one
 * read transaction, and streams SearchResultEntry PDUs through the send
 * policy. The search is a resumable cursor (struct search_op): it stops when
 * the socket is full and continues on EPOLLOUT, and it yields after a slice of
 * work (SEARCH_SLICE_WORK: candidates read and filter work, filter.h's units) so
 * that the worker's other connections are served between slices however much
 * each candidate costs: a candidate whose filter is still being evaluated when the
 * slice's work is used is cut and evaluated again first by the next slice, which
 * resumes it through a memo of the filter items already decided (filter.h), so one
 * costly entry (an OR of member items on a large group) is split across slices too.
 * Past max_filter_items or max_search_work a search (not the rootdn's) ends with
 * adminLimitExceeded.
 *
 * A search reads one database generation (db_gen.h) from its start to its end,
 * a paged one across all its pages: the worker's read transaction while the
 * worker serves that generation, else a transaction of its own, made when the
 * worker has moved to a newer database. A search still running, paused or
 * parked when its generation is two reloads old ends with unwillingToPerform.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/dn.h"
#include "protocol/schema.h"
#include "protocol/response.h"
#include "server/clock.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/ops/access.h"
#include "server/ops/ops.h"
#include "server/net/net.h"
#include "protocol/controls.h"
#include "server/ops/search_alias.h"
#include "server/ops/search_sort.h"
#include "server/ops/search_checks.h"
#include "server/ops/search_txn.h"
#include "server/ops/search_names.h"
#include "server/ops/search_page.h"
#include "server/ops/search_plan.h"
#include "storage/candidates.h"

/* Candidates examined before a search lets the worker's other connections run, at most. */
#define SEARCH_SLICE 512
/* Work in a slice before the search lets them run: each candidate counts as a unit and
 * filter work as filter.h counts it. About 1 ms of evaluating here (bench/costly_filter.sh):
 * an OR of 1,000 :dn: items yields after every few candidates, (uid=x) after 512. */
#define SEARCH_SLICE_WORK 20000

struct search_op {
	struct conn_task task; /* first: a conn_task * is a search_op * */
	int32_t msgid;
	struct conn *c;
	struct search_txn rt;    /* what it reads through (search_txn.h) */
	struct search_plan plan; /* scope, base, candidates */
	int deref;               /* derefAliases of the request */
	/* The worker's request arena, lent (arena.h): the search itself, its filter and its
	 * Matched Values items live there. */
	struct arena mem;
	struct filter *filter; /* in mem */
	int sizelimit;         /* 0: none */
	int sent;
	time_t deadline;   /* timelimit as a CLOCK_MONOTONIC second; 0: none */
	uint64_t work;     /* filter work so far, over all pages (filter.h's units) */
	uint64_t max_work; /* max_search_work; 0: none (the rootdn) */
	/* One candidate's evaluation split across slices (filter.h): what is decided of it so
	 * far (its bytes in mem; none for a small filter), and the candidate to evaluate again
	 * first when the last slice ended in the middle of it. */
	struct filter_memo memo;
	bool have_resume;
	entry_id resume_id;
	/* Paged results (RFC 2696): page_size 0 means not paged. */
	int page_size;
	int page_sent;
	uint64_t cookie; /* the cookie handed out with the last page */
	/* What the first page was asked with (search_page.h): the next pages must be too. */
	unsigned char page_digest[SEARCH_PAGE_DIGEST];
	bool have_pending; /* pending_id matched and waits for the next page */
	entry_id pending_id;
	/* Server-side sort (RFC 2891). */
	bool sorting;
	bool sort_collected;
	int sort_result; /* sortResult sent back: success, or why keys were refused */
	struct sort_spec sort;
	struct sorted sorted;
	struct attr_select sel;
	struct filter *values; /* the Matched Values control's items (in mem), or NULL */
	bool want_oper;        /* operational attributes are asked for */
	bool filter_oper;      /* the filter names operational attributes */
	struct berval *names;  /* copies of the requested attribute names */
	int nnames;
	struct buf name_bytes;
	/* Last: op_search zeroes what comes before it; access_op_init sets what it needs
	 * (its decision cache, most of its bytes, is filled when first used). */
	struct access_op access; /* who asks (access.h) */
};

/* The search c runs, or NULL. */
static struct search_op *running(const struct conn *c)
{
	return (struct search_op *)c->task;
}

static void search_free(struct search_op *s)
{
	struct worker *w = s->c->w;
	struct arena mem = s->mem; /* s itself lives there */
	sort_free(&s->sorted);
	access_op_free(&s->access);
	search_plan_free(&s->plan);
	buf_free(&s->name_bytes);
	free(s->names);
	search_txn_end(&s->rt, w);        /* it may close the environment */
	arena_recycle(&w->req_mem, &mem); /* last: s is gone; the block goes back to the worker */
}

static void search_task_free(struct conn_task *t)
{
	search_free((struct search_op *)t);
}

/* Keeps the requested attribute names beyond the request's lifetime. */
static int copy_names(struct search_op *s, const struct search_request *r)
{
	if (r->nattrs == 0)
		return 0;
	struct berval names[REQUEST_MAX_ATTRS];
	size_t cap = search_names_space(r);
	char *space = malloc(cap);
	if (!space)
		return -1;
	search_names_canonical(r, names, space, cap);
	size_t total = 0;
	for (int i = 0; i < r->nattrs; i++)
		total += names[i].bv_len;
	s->names = calloc((size_t)r->nattrs, sizeof(*s->names));
	/* At least one byte: names that are all empty ("") still get a non-NULL data. */
	if (!s->names || buf_reserve(&s->name_bytes, total + 1) < 0) {
		free(space);
		return -1;
	}
	/* Reserved up front, so the pointers taken here stay valid. */
	for (int i = 0; i < r->nattrs; i++) {
		s->names[i].bv_val = (char *)s->name_bytes.data + s->name_bytes.len;
		s->names[i].bv_len = names[i].bv_len;
		buf_append(&s->name_bytes, names[i].bv_val, names[i].bv_len);
	}
	s->nnames = r->nattrs;
	free(space);
	return 0;
}

/* Appends the response controls the search owes (paged cookie, sort result) as
 * one [0] Controls element, or nothing when it owes none. */
static int put_controls(struct search_op *s, struct buf *ctl, bool more_pages)
{
	struct buf list = {0};
	int rc = 0;
	if (s->page_size) {
		uint64_t c = s->cookie;
		rc |= more_pages ? control_paged_response(&list, &c, sizeof(c))
		                 : control_paged_response(&list, NULL, 0);
	}
	if (s->sorting || s->sort_result)
		rc |= control_sort_response(&list, s->sort_result);
	if (rc == 0 && list.len)
		rc = controls_wrap(ctl, &list);
	buf_free(&list);
	return rc;
}

/* Ends the response (SearchResultDone). With more_pages the search is parked
 * on the connection for the next page; otherwise it is freed. */
static void search_finish_page(struct conn *c, int rc, const char *matched, const char *message,
                               bool more_pages)
{
	struct search_op *s = running(c);
	int32_t msgid = s->msgid;
	struct buf ctl = {0};
	c->task = NULL;
	if (more_pages) {
		/* Random, so it tells the client nothing about the server's memory. */
		if (getrandom(&s->cookie, sizeof(s->cookie), 0) != sizeof(s->cookie))
			s->cookie ^= (uint64_t)s->sent * 0x9e3779b97f4a7c15ULL + (uint64_t)msgid;
		c->parked = &s->task;
	}
	if (put_controls(s, &ctl, more_pages) < 0)
		rc = LDAP_OTHER;
	if (!more_pages)
		search_free(s);
	struct result_extra x = {.controls = ctl.data, .clen = ctl.len};
	reply_result(c, msgid, LDAP_RES_SEARCH_RESULT, rc, matched, message, &x);
	buf_free(&ctl);
}

static void search_finish(struct conn *c, int rc, const char *matched, const char *message)
{
	search_finish_page(c, rc, matched, message, false);
}

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
	struct search_op *s = running(c);
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
	if (*rc == MDB_NOTFOUND)
		return STEP_END;
	if (*rc)
		return STEP_ERROR;
	entry_id cand = *id; /* before an alias stands for its target */
	*rc = db_get_entry(s->rt.db, s->rt.txn, *id, e);
	if (*rc == MDB_NOTFOUND) /* an index naming a missing entry: skip it */
		return STEP_SKIP;
	if (*rc)
		return STEP_ERROR;
	if (!search_plan_holds(&s->plan, *id, e))
		return STEP_SKIP;
	/* derefInSearching: an alias below the base stands for its target. */
	bool from_candidates = true;
	if ((s->deref & LDAP_DEREF_SEARCHING) && *id != s->plan.base_id && search_is_alias(e)) {
		if (search_deref(s->rt.db, s->rt.txn, id, e) != LDAP_SUCCESS)
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
	                          .gate = gate,
	                          .scratch = &w->scratch,
	                          .work = &s->work,
	                          .work_limit = s->max_work,
	                          .memo = s->memo.n ? &s->memo : NULL};
	s->memo.yield = slice_end;
	if (s->filter_oper) { /* the filter names computed attributes (entryDN, ...) */
		ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
		if (op_attrs_all(&ops_worker(w)->extra, s->rt.db, s->rt.txn, *id, e, &s->access) <
		    0) {
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
	struct search_op *s = running(c);
	if (s->have_pending || s->sort_collected) {
		if (s->have_pending) {
			*id = s->pending_id;
			s->have_pending = false;
		} else if (s->sorted.pos < s->sorted.n) {
			*id = s->sorted.items[s->sorted.pos++].id;
		} else {
			return STEP_END;
		}
		*rc = db_get_entry(s->rt.db, s->rt.txn, *id, e);
		if (*rc == 0)
			access_entry_init(ae, &s->access, *id, e);
		return *rc == 0 ? STEP_MATCH : *rc == MDB_NOTFOUND ? STEP_SKIP : STEP_ERROR;
	}
	return next_candidate(c, id, e, ae, rc, slice_end);
}

/* Sends entry id (viewed as e), as ae lets the client read it. */
static int send_entry(struct conn *c, entry_id id, const struct entry_view *e,
                      const struct access_entry *ae)
{
	struct search_op *s = running(c);
	struct worker *w = c->w;
	s->sel.gate = access_read_gate(ae);
	ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
	int rc = 0;
	if (s->want_oper && op_attrs_build(&ops_worker(w)->extra, &s->sel, s->rt.db, s->rt.txn, id,
	                                   e, &s->access) < 0)
		rc = ENOMEM;
	s->sent++;
	s->page_sent++;
	STAT_ADD(w->stats.entries_sent, 1);
	if (rc == 0 && reply_entry(c, s->msgid, e->op, e->oplen, &s->sel, ops_worker(w)->extra.data,
	                           ops_worker(w)->extra.len) < 0)
		rc = ENOMEM;
	s->sel.gate = NULL; /* ae is the caller's, for this entry only */
	return rc;
}

/* Starts a slice of s: its read transaction (search_txn.h), which the access rules' group
 * lookups and rule filters read too. Returns 0 or an LMDB error. */
static int slice_begin(struct search_op *s, struct worker *w)
{
	int rc = search_txn_slice_begin(&s->rt, w);
	s->access.db = s->rt.db;
	s->access.txn = s->rt.txn;
	return rc;
}

static const char expired_message[] =
    "the database was reloaded twice since this search began; search again";

/* db_hold's expire: s's generation is too old to keep. A search waiting for its
 * client ends now (a parked page with no answer: its cookie is no longer valid);
 * one on the ready list ends at its next slice (search_run). */
static void search_expire(struct db_hold *h)
{
	struct search_op *s = (struct search_op *)((char *)h - offsetof(struct search_op, rt) -
	                                           offsetof(struct search_txn, hold));
	struct conn *c = s->c;
	if (c->parked == &s->task)
		conn_task_drop(&c->parked);
	else if (c->task == &s->task && c->blocked && !c->closing)
		search_finish(c, LDAP_UNWILLING_TO_PERFORM, NULL, expired_message);
}

/*
 * Runs the search until it ends, the socket is full, the slice is used or a
 * page is complete. Sorting first collects every match, then sends in order.
 */
static void search_run(struct conn *c)
{
	struct search_op *s = running(c);
	struct worker *w = c->w;
	if (db_hold_expired(w->srv, &s->rt.hold)) {
		search_finish(c, LDAP_UNWILLING_TO_PERFORM, NULL, expired_message);
		return;
	}
	int rc = slice_begin(s, w);
	if (rc == 0)
		cand_begin(&s->plan.cand, s->rt.txn, &db_worker(w)->cursors);
	int result = LDAP_SUCCESS;
	const char *message = NULL;
	bool done = false, page_full = false;
	uint64_t work_start = s->work;
	for (int n = 0; rc == 0 && !done; n++) {
		if (c->blocked || c->closing)
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
			result = LDAP_TIMELIMIT_EXCEEDED;
			done = true;
			break;
		}
		entry_id id;
		struct entry_view e;
		if (s->sorting && !s->sort_collected) {
			struct access_entry ae;
			enum step st = next_candidate(c, &id, &e, &ae, &rc, slice_end);
			if (st == STEP_CUT) {
				conn_make_ready(c);
				break;
			}
			if (st == STEP_MATCH && sort_add(&s->sorted, &s->sort, id, &e,
			                                 access_read_gate(&ae), &w->scratch) < 0)
				rc = ENOMEM;
			/* One match past the size limit is enough to know it is exceeded:
			 * collecting stops there, so memory stays bounded by the limit. */
			if (st == STEP_MATCH && s->sizelimit && s->sorted.n > (size_t)s->sizelimit)
				st = STEP_END;
			if (st == STEP_END) {
				sort_finish(&s->sorted, &s->sort);
				s->sort_collected = true;
				rc = 0;
			}
			if (st == STEP_SKIP)
				rc = 0;
			if (st == STEP_LIMIT) {
				result = LDAP_ADMINLIMIT_EXCEEDED;
				message = work_message;
				done = true;
			}
			continue;
		}
		struct access_entry ae;
		enum step st = next_match(c, &id, &e, &ae, &rc, slice_end);
		if (st == STEP_CUT) {
			conn_make_ready(c);
			break;
		}
		if (st == STEP_SKIP) {
			rc = 0;
			continue;
		}
		if (st == STEP_END) {
			rc = 0;
			done = true;
			break;
		}
		if (st == STEP_ERROR)
			break;
		if (st == STEP_LIMIT) {
			result = LDAP_ADMINLIMIT_EXCEEDED;
			message = work_message;
			done = true;
			break;
		}
		if (s->sizelimit && s->sent >= s->sizelimit) {
			result = LDAP_SIZELIMIT_EXCEEDED;
			done = true;
			break;
		}
		if (s->page_size && s->page_sent == s->page_size) {
			/* Another match exists: it opens the next page. */
			s->pending_id = id;
			s->have_pending = true;
			page_full = true;
			break;
		}
		rc = send_entry(c, id, &e, &ae);
	}
	cand_end(&s->plan.cand, &db_worker(w)->cursors);
	bool ends = (rc != 0 && rc != MDB_NOTFOUND) || (done && !page_full);
	search_txn_slice_end(&s->rt, w, !ends);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		log_error("search: %s", rc == ENOMEM ? "out of memory" : mdb_strerror(rc));
		search_finish(c, LDAP_OTHER, NULL, "internal error reading the database");
	} else if (page_full) {
		search_finish_page(c, LDAP_SUCCESS, NULL, NULL, true);
	} else if (done) {
		search_finish(c, result, NULL, message);
	}
}

void op_matched_dn(struct worker *w, struct access_op *aop, const struct buf *key, struct buf *out)
{
	const struct db *db = &db_worker(w)->gen->db;
	size_t len = dn_key_parent_len(key->data, key->len);
	bool all = access_entry_granted(aop, ACCESS_DISCLOSE);
	while (len >= db->suffix_key.len && len > 0) {
		entry_id id;
		struct entry_view e;
		struct access_entry ae;
		/* An entry the client may not know of is passed by as if it were not there, so
		 * that nothing below it tells it exists (slapd names none, which does tell). */
		if (db_dn2id(db, db_worker(w)->txn, key->data, len, &id) == 0 &&
		    db_get_entry(db, db_worker(w)->txn, id, &e) == 0 &&
		    (all || (access_entry_init(&ae, aop, id, &e), ae.entry >= ACCESS_DISCLOSE))) {
			buf_append(out, e.dn, e.dnlen);
			break;
		}
		len = dn_key_parent_len(key->data, len);
	}
	buf_append(out, "", 1);
}

/* Size and time limits: the client's, within the server's (the rootdn has none). The
 * filter work limit is the server's (max_search_work). */
static void set_limits(struct conn *c, struct search_op *s, const struct search_request *r)
{
	int size = r->sizelimit, time = r->timelimit;
	int max_size = server_sizelimit(c->w->srv), max_time = server_timelimit(c->w->srv);
	s->max_work = c->auth != AUTH_ROOT ? server_max_search_work(c->w->srv) : 0;
	if (c->auth != AUTH_ROOT) {
		if (max_size && (size == 0 || size > max_size))
			size = max_size;
		if (max_time && (time == 0 || time > max_time))
			time = max_time;
	}
	s->sizelimit = size;
	s->deadline = time ? clock_seconds() + time : 0;
}

/*
 * The key of the search base, in w->base_key (valid until the worker's next search
 * starts); NULL if it is not a valid DN. A load names the same base search after search, and
 * normalizing it costs about a tenth of a lookup, so each worker keeps the last base it normalized.
 * The schema, which the normal form follows, does not change while the server runs (a reload that
 * would change it is refused).
 */
static const struct buf *base_key(struct worker *w, const struct berval *base)
{
	if (ops_worker(w)->base_dn.len == base->bv_len && base->bv_len > 0 &&
	    memcmp(ops_worker(w)->base_dn.data, base->bv_val, base->bv_len) == 0)
		return &ops_worker(w)->base_key;
	ops_worker(w)->base_dn.len = ops_worker(w)->base_key.len =
	    0; /* forgotten until both are stored again */
	if (dn_normalize(base->bv_val, base->bv_len, NULL, &ops_worker(w)->base_key) < 0)
		return NULL;
	if (buf_append(&ops_worker(w)->base_dn, base->bv_val, base->bv_len) < 0)
		ops_worker(w)->base_dn.len = 0; /* not kept: the next search normalizes again */
	return &ops_worker(w)->base_key;
}

/* The next page of the paged search parked on c (RFC 2696 3). */
static void resume_page(struct conn *c, struct ldap_request *req, int page_size,
                        const struct berval *cookie)
{
	struct search_op *s = (struct search_op *)c->parked;
	uint64_t want;
	if (!s || cookie->bv_len != sizeof(want) ||
	    (memcpy(&want, cookie->bv_val, sizeof(want)), want != s->cookie)) {
		/* Also the cookie of a search dropped because the database was reloaded
		 * twice since it began (search_expire). */
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_UNWILLING_TO_PERFORM, NULL,
		           "paged results cookie is invalid");
		return;
	}
	/* The cookie goes on only with the request that made it; the search stays parked. */
	unsigned char digest[SEARCH_PAGE_DIGEST];
	if (search_page_digest(c, req, digest) < 0 ||
	    memcmp(digest, s->page_digest, sizeof(digest)) != 0) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_UNWILLING_TO_PERFORM, NULL,
		           "paged results cookie was made by another search request (base, scope, "
		           "filter, attributes, controls or identity differ)");
		return;
	}
	c->parked = NULL;
	c->task = &s->task;
	s->msgid = s->task.msgid = req->msgid;
	access_op_free(&s->access); /* the identity may have changed since the last page */
	access_op_init(&s->access, c);
	/* Each page has its own time limit; the size limit stays the first request's, as
	 * it counts the entries of every page. */
	int sizelimit = s->sizelimit;
	set_limits(c, s, &req->u.search);
	s->sizelimit = sizelimit;
	s->page_size = page_size;
	s->page_sent = 0;
	reply_begin(c);
	if (page_size == 0) { /* the client abandons the paged search */
		s->have_pending = false;
		search_finish(c, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	search_run(c);
}

void op_search(struct conn *c, struct ldap_request *req)
{
	struct search_request *r = &req->u.search;
	struct worker *w = c->w;
	const struct db *db = &db_worker(w)->gen->db;
	if (!access_may_read(c)) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_INSUFFICIENT_ACCESS, NULL,
		           "anonymous access is disabled (allow_anonymous)");
		return;
	}
	size_t max_items = server_max_filter_items(w->srv), items;
	if (c->auth != AUTH_ROOT && max_items && (items = filter_items(r->filter)) > max_items) {
		char why[160];
		snprintf(why, sizeof(why),
		         "the filter has %zu items, more than the %zu allowed "
		         "(max_filter_items)",
		         items, max_items);
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_ADMINLIMIT_EXCEEDED, NULL,
		           why);
		return;
	}
	if (r->base.bv_len == 0 && r->scope == LDAP_SCOPE_BASE) {
		op_special_search(c, req, &w->srv->rootdse);
		return;
	}
	/* Paged results: a cookie continues the search parked on this connection. */
	const struct request_control *paged = request_control(req, CONTROL_PAGED_RESULTS);
	int page_size = 0;
	struct berval cookie = {0, NULL};
	if (paged &&
	    (!paged->has_value || control_paged_decode(&paged->value, &page_size, &cookie) < 0)) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_PROTOCOL_ERROR, NULL,
		           "malformed paged results control");
		return;
	}
	if (paged && cookie.bv_len) {
		resume_page(c, req, page_size, &cookie);
		return;
	}
	conn_task_drop(&c->parked); /* a new search replaces an unfinished paged one */
	/* The worker's (the last base normalized): copied into the search's arena below. */
	const struct buf *key = base_key(w, &r->base);
	struct search_op *s = NULL;
	const unsigned char *own_key = NULL;
	if (!key)
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_INVALID_DN_SYNTAX, NULL,
		           "invalid DN");
	else if (op_monitor_holds(key)) {
		/* Built entries, not paged, sorted or tested (RFC 4511 4.1.11). */
		static const char *const applied[] = {OP_CONTROL_MANAGE_DSA_IT};
		if (!ops_refuse_critical(c, req, applied, 1))
			op_monitor_search(c, req, key);
	} else if (op_special_is_subschema(key))
		op_special_search(c, req, &w->srv->subschema);
	else if (!dn_key_in_subtree(key->data, key->len, db->suffix_key.data, db->suffix_key.len))
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_NO_SUCH_OBJECT, NULL, NULL);
	else if (!(s = arena_alloc(req->mem, sizeof(*s))) ||
	         !(own_key = (const unsigned char *)arena_strdup(req->mem, key->data, key->len)))
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_OTHER, NULL,
		           "out of memory");
	if (!own_key)
		return;
	memset(s, 0, offsetof(struct search_op, access));
	s->msgid = s->task.msgid = req->msgid;
	s->task.resume = search_run;
	s->task.free = search_task_free;
	s->c = c;
	search_txn_start(&s->rt, w, search_expire); /* the generation w serves, from now on */
	access_op_init(&s->access, c);
	s->plan.scope = r->scope;
	s->deref = r->deref;
	set_limits(c, s, r);
	s->page_size = paged ? page_size : 0;
	arena_take(&s->mem, req->mem); /* the search and its filter live as long as it does */
	s->filter = r->filter;
	/* A leaf (a lookup's filter) gets no memo (filter.h) and skips the call: s->memo is
	 * zeroed above. Out of memory, a costly entry is evaluated in one slice, as before. */
	if (s->filter->child && filter_memo_init(&s->memo, s->filter, &s->mem) < 0)
		log_error("search: out of memory for the filter's memo");
	s->plan.base_key = own_key;
	s->plan.base_keylen = key->len;
	c->task = &s->task;
	reply_begin(c);
	if (copy_names(s, r) < 0 || (paged && search_page_digest(c, req, s->page_digest) < 0) ||
	    db_gen_txn_begin(w) != 0) {
		search_finish(c, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	int rc = db_dn2id(db, db_worker(w)->txn, s->plan.base_key, s->plan.base_keylen,
	                  &s->plan.base_id);
	if (rc == 0 && (r->deref & LDAP_DEREF_FINDING)) {
		/* derefFindingBaseObj: the search starts at the alias's target. */
		struct entry_view be;
		int d = db_get_entry(db, db_worker(w)->txn, s->plan.base_id, &be) == 0
		            ? search_deref(db, db_worker(w)->txn, &s->plan.base_id, &be)
		            : LDAP_OTHER;
		if (d == LDAP_SUCCESS) {
			s->plan.base_key =
			    (const unsigned char *)arena_strdup(&s->mem, be.key, be.keylen);
			s->plan.base_keylen = be.keylen;
			d = s->plan.base_key ? d : LDAP_OTHER;
		}
		if (d != LDAP_SUCCESS) {
			db_gen_txn_end(w);
			search_finish(c, d, NULL, NULL);
			return;
		}
	}
	int asserted =
	    rc == 0 ? search_base_access(&s->access, c->w, s->plan.base_id) : LDAP_SUCCESS;
	if (asserted == LDAP_SUCCESS && rc == 0)
		asserted = search_assertion(req, &s->access, c->w, s->plan.base_id);
	struct buf matched = {0};
	/* A base the client may not know of is answered as a missing one, matchedDN too. */
	if (rc == MDB_NOTFOUND || asserted == LDAP_NO_SUCH_OBJECT)
		op_matched_dn(w, &s->access,
		              &(struct buf){.data = (unsigned char *)s->plan.base_key,
		                            .len = s->plan.base_keylen},
		              &matched);
	if (asserted != LDAP_SUCCESS) {
		db_gen_txn_end(w);
		search_finish(c, asserted, (const char *)matched.data,
		              asserted == LDAP_PROTOCOL_ERROR ? "malformed assertion control"
		                                              : NULL);
		buf_free(&matched);
		return;
	}
	if (rc == 0)
		search_plan_candidates(&s->plan, db, db_worker(w)->txn, s->filter);
	if (rc)
		db_gen_txn_end(w);
	else /* the first slice reads on in this transaction: one snapshot from the base on */
		search_txn_planned(&s->rt, w);
	if (rc) {
		search_finish(c, rc == MDB_NOTFOUND ? LDAP_NO_SUCH_OBJECT : LDAP_OTHER,
		              rc == MDB_NOTFOUND ? (const char *)matched.data : NULL, NULL);
		buf_free(&matched);
		return;
	}
	attr_select_init(&s->sel, s->names, s->nnames, r->typesonly);
	if (search_matched_values(req, &s->mem, &w->scratch, &s->values) < 0) {
		search_finish(c, LDAP_PROTOCOL_ERROR, NULL, "malformed matched values control");
		return;
	}
	s->sel.values = s->values;
	s->want_oper = op_attrs_requested(&s->sel);
	s->filter_oper = op_attrs_in_filter(s->filter);
	if (paged && page_size == 0) { /* size 0 and no cookie: nothing to return */
		search_finish(c, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	const struct request_control *sort = request_control(req, CONTROL_SORT_REQUEST);
	if (sort) {
		struct sort_key keys[CONTROL_MAX_SORT_KEYS];
		int n = 0;
		if (!sort->has_value || control_sort_decode(&sort->value, keys, &n) < 0) {
			search_finish(c, LDAP_PROTOCOL_ERROR, NULL, "malformed sort control");
			return;
		}
		s->sort_result = sort_spec_init(&s->sort, keys, n);
		s->sorting = s->sort_result == LDAP_SUCCESS;
		if (!s->sorting) {
			/* As slapd: the search fails with the sortResult code, critical or not
			 * (RFC 2891 would send the entries unsorted when not critical). */
			search_finish(c, s->sort_result, NULL, "cannot sort on the requested key");
			return;
		}
	}
	search_run(c);
}
