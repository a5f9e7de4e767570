/*
 * The search cursor (struct search_op), shared by the three files of a search: op_search.c
 * checks the request and plans it (op_search, and resume_page for the next page of a paged
 * one), search_run.c runs it slice by slice and sends its entries, search_finish.c answers
 * its SearchResultDone and frees it. Private to server/ops/ (ops.h has op_search).
 *
 * A search is a resumable cursor: it stops when the socket is full and continues on
 * EPOLLOUT, and it yields after a slice of work (search_run.c's SEARCH_SLICE_WORK:
 * candidates read and filter work, filter.h's units) so that the worker's other connections
 * are served between slices however much each candidate costs: a candidate whose filter is
 * still being evaluated when the slice's work is used is cut and evaluated again first by
 * the next slice, which resumes it through a memo of the filter items already decided
 * (filter.h), so one costly entry (an OR of member items on a large group) is split across
 * slices too. Past max_filter_items (checked before it starts) or max_search_work a search
 * (not the rootdn's) ends with adminLimitExceeded.
 *
 * A search reads one database generation (server/db/generation.h) from its start to its end,
 * a paged one across all its pages: the worker's read transaction while the worker serves
 * that generation, else a transaction of its own, made when the worker has moved to a newer
 * database (search_txn.h). A search still running, paused or parked when its generation is
 * two reloads old ends with unwillingToPerform.
 *
 * Ownership: the search_op lives in the worker's request arena it took from its request
 * (s->mem, arena.h), with its filter and its Matched Values items; the rest it owns (names,
 * plan, sorted list, access decisions, transaction) goes in search_free. Thread rules: the
 * worker thread of its connection only.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_OP_H
#define MINIDIR_SERVER_OPS_SEARCH_OP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "protocol/arena.h"
#include "protocol/filter.h"
#include "protocol/response.h"
#include "server/net/conn.h"
#include "server/ops/access.h"
#include "server/ops/search_page.h"
#include "server/ops/search_plan.h"
#include "server/ops/search_sort.h"
#include "server/ops/search_vlv.h"
#include "server/ops/search_txn.h"

struct sync_search; /* search_sync.h */

struct search_op {
	struct conn_task task; /* first: a conn_task * is a search_op * */
	int32_t msgid;
	struct conn *c;
	struct search_txn read;  /* what it reads through (search_txn.h) */
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
	uint64_t cookie;   /* the cookie handed out with the last page */
	bool have_pending; /* pending_id matched and waits for the next page */
	entry_id pending_id;
	/* Server-side sort (RFC 2891). */
	bool sorting;
	bool sort_collected;
	int sort_result; /* sortResult sent back: success, or why keys were refused */
	struct sorted sorted;
	/* Virtual List View (search_vlv.h) over the sorted list. */
	bool vlv;
	struct vlv_window vlv_at;
	struct attr_select sel;
	struct filter *values; /* the Matched Values control's items (in mem), or NULL */
	bool want_oper;        /* operational attributes are asked for */
	bool filter_oper;      /* the filter names operational attributes */
	struct berval *names;  /* copies of the requested attribute names */
	int nnames;
	struct buf name_bytes;
	struct sync_search *sync; /* a Content Synchronization search's (search_sync.h), or NULL */
	/* op_search zeroes what comes before it; access_op_init sets what it needs (its
	 * decision cache, most of its bytes, is filled when first used). */
	struct access_op access; /* who asks (access.h) */
	/* Not zeroed either (a lookup uses none of them: zeroing them cost ~60 instructions):
	 * each is written whole before it is read. */
	/* A paged search's: what the first page was asked with (search_page.h), which the
	 * next pages must be asked with too; written before the first page runs. */
	unsigned char page_digest[SEARCH_PAGE_DIGEST];
	struct sort_spec sort;      /* read only when sorting: sort_spec_init wrote it */
	struct vlv_request vlv_req; /* read only when vlv: control_vlv_decode wrote it; its
	                               strings in the request's bytes (mem) */
};

/* The search c runs (c->task), or NULL. */
static inline struct search_op *search_running(const struct conn *c)
{
	return (struct search_op *)c->task;
}

/* --- search_run.c ------------------------------------------------------------------- */

/*
 * c->task's resume: runs the search c runs until it ends, the socket is full, the slice is
 * used or a page is complete; ending, it answers (search_finish*). Sorting first collects
 * every match, then sends in order.
 */
void search_run(struct conn *c);

/* db_hold's expire for s->read (search_txn_start): s's generation is too old to keep. A
 * search waiting for its client ends now (a parked page: its cookie is no longer valid);
 * one on the ready list ends at its next slice (search_run). */
void search_expire(struct db_hold *h);

/* The message of a search ended by search_expire's reason. */
extern const char search_expired_message[];

/* --- search_finish.c ---------------------------------------------------------------- */

/*
 * Ends the response of the search c runs (SearchResultDone with rc, matched and message,
 * borrowed for the call, and the response controls it owes) and takes it off c->task. With
 * more_pages the search is parked on c (c->parked) for the next page, with a new cookie;
 * otherwise it is freed.
 */
void search_finish_page(struct conn *c, int rc, const char *matched, const char *message,
                        bool more_pages);
/* search_finish_page without more pages: the search ends and is freed. */
void search_finish(struct conn *c, int rc, const char *matched, const char *message);

/* Frees s and what it owns (its transaction and hold last but the arena it lives in, whose
 * block goes back to the worker). The caller has taken s off its connection (c->task,
 * c->parked). */
void search_free(struct search_op *s);
/* The conn_task free of a search (Abandon, a closing connection): search_free. */
void search_task_free(struct conn_task *t);

#endif
