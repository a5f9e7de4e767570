/*
 * The end of a search's response (search_op.h): its SearchResultDone with the response
 * controls it owes (the paged results cookie, the sortResult), parking a paged search for
 * its next page, and freeing a search that ends.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <ldap.h>

#include "protocol/controls.h"
#include "server/net/reply.h"
#include "server/ops/search_op.h"
#include "server/ops/search_sync.h"

const char search_expired_message[] =
    "the database was reloaded twice since this search began; search again";

void search_free(struct search_op *s)
{
	struct worker *w = s->c->w;
	struct arena mem = s->mem; /* s itself lives there */
	if (s->sync)               /* (a lookup makes no call) */
		search_sync_free(s->sync);
	sort_free(&s->sorted);
	access_op_free(&s->access);
	search_plan_free(&s->plan);
	buf_free(&s->name_bytes);
	free(s->names);
	search_txn_end(&s->read, w);      /* it may close the environment */
	arena_recycle(&w->req_mem, &mem); /* last: s is gone; the block goes back to the worker */
}

void search_task_free(struct conn_task *t)
{
	search_free((struct search_op *)t);
}

/* Appends the response controls the search owes (paged cookie, sort result, VLV; a
 * refreshOnly Content Synchronization's Sync Done once its refresh is whole) as
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
	if (s->sync && s->sync->refreshed) /* refreshOnly's end: the consumer's cookie */
		rc = search_sync_done_control(s->sync, &list);
	if (s->sorting || s->sort_result)
		rc |= control_sort_response(&list, s->sort_result);
	if (s->vlv && s->sort_result == LDAP_SUCCESS) /* a refused sort: the sortResult says */
		rc |= control_vlv_response(&list, s->vlv_at.target, s->vlv_at.count,
		                           s->vlv_at.result);
	if (rc == 0 && list.len)
		rc = controls_wrap(ctl, &list);
	buf_free(&list);
	return rc;
}

void search_finish_page(struct conn *c, int rc, const char *matched, const char *message,
                        bool more_pages)
{
	struct search_op *s = search_running(c);
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

void search_finish(struct conn *c, int rc, const char *matched, const char *message)
{
	search_finish_page(c, rc, matched, message, false);
}
