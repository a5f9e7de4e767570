/* A search with the Sync Request control: its start and its refresh's end (search_sync.h). */
#include "server/ops/search_sync.h"

#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "protocol/controls.h"
#include "server/net/reply.h"
#include "server/ops/search_op.h"

static bool refuse(struct conn *c, int rc, const char *why)
{
	search_finish(c, rc, NULL, why);
	return false;
}

bool search_sync_begin(struct conn *c, struct ldap_request *req, struct search_op *s)
{
	const struct request_control *rq = request_control(req, SYNC_REQUEST_OID);
	if (!rq)
		return true;
	struct change_feed *feed = c->w->srv->feed;
	if (!feed)
		return refuse(c,
		              rq->critical ? LDAP_UNAVAILABLE_CRITICAL_EXTENSION
		                           : LDAP_UNWILLING_TO_PERFORM,
		              "Content Synchronization is not offered here (sync_provider = no)");
	if (request_control(req, CONTROL_PAGED_RESULTS) ||
	    request_control(req, CONTROL_SORT_REQUEST) || request_control(req, CONTROL_VLV_REQUEST))
		return refuse(c, LDAP_UNWILLING_TO_PERFORM,
		              "Content Synchronization cannot be combined with paged results, "
		              "sorting or VLV");
	enum sync_mode mode;
	struct berval cookie;
	bool reload;
	if (!rq->has_value || sync_request_decode(&rq->value, &mode, &cookie, &reload) < 0)
		return refuse(c, LDAP_PROTOCOL_ERROR, "malformed Sync Request control");
	struct sync_search *y = calloc(1, sizeof(*y));
	if (!y)
		return refuse(c, LDAP_OTHER, "out of memory");
	s->sync = y;
	y->mode = mode;
	struct berval csns;
	sync_cookie_parts(&cookie, &y->rid, &csns);
	int rc = 0;
	if (csns.bv_val && !reload) {
		y->have_csns = true;
		rc |= buf_append(&y->csns, csns.bv_val, csns.bv_len);
	}
	rc |= buf_append(&y->base, req->u.search.base.bv_val, req->u.search.base.bv_len);
	if (rc == 0 && change_feed_position(feed, &y->seq, &y->upstream) == 0 &&
	    search_sync_cookie(y) == 0)
		return true;
	return refuse(c, LDAP_OTHER, "out of memory");
}

void search_sync_refresh_end(struct conn *c)
{
	struct search_op *s = search_running(c);
	struct sync_search *y = s->sync;
	size_t n = y->present.len / SYNC_UUID_LEN;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i += SYNC_IDSET_MAX)
		rc = search_sync_info(c, s->msgid, SYNC_INFO_ID_SET, NULL, false,
		                      y->present.data + i * SYNC_UUID_LEN,
		                      n - i < SYNC_IDSET_MAX ? n - i : SYNC_IDSET_MAX, false);
	buf_free(&y->present);
	if (rc < 0)
		return; /* the connection closes (reply.h) */
	if (y->mode == SYNC_REFRESH_ONLY) {
		y->refreshed = true;
		search_finish(c, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	if (search_sync_info(c, s->msgid, SYNC_INFO_REFRESH_PRESENT, &y->cookie, true, NULL, 0,
	                     true) < 0)
		return;
	search_persist_start(c);
}
