/*
 * What a Content Synchronization search sends (search_sync.h): the cookie it hands out,
 * the Sync State control of an entry, the Sync Done control, Sync Info messages; and its
 * state freed. Below the search's other files, which all send through it.
 */
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/controls.h"
#include "server/net/reply.h"
#include "server/ops/search_op.h"
#include "server/ops/search_send.h"
#include "server/ops/search_sync.h"
#include "storage/entry_opattrs.h"

/* The cookie handed out: "rid=NNN," (the consumer's) and the csn= part of the upstream's. */
int search_sync_cookie(struct sync_search *y)
{
	struct berval up = {y->upstream.len, (char *)y->upstream.data}, csns;
	int rid;
	sync_cookie_parts(&up, &rid, &csns);
	char head[32];
	int n = y->rid >= 0 ? snprintf(head, sizeof(head), "rid=%03d", y->rid) : 0;
	y->cookie.off = y->cookie.len = 0;
	int rc = buf_append(&y->cookie, head, (size_t)n);
	if (rc == 0 && csns.bv_val) {
		rc = n ? buf_append(&y->cookie, ",", 1) : 0;
		rc |= buf_append(&y->cookie, "csn=", 4);
		rc |= buf_append(&y->cookie, csns.bv_val, csns.bv_len);
	}
	return rc;
}

int search_sync_state(struct search_op *s, const struct entry_view *e, struct db_read *txn,
                      entry_id id, const struct buf **ctl)
{
	struct sync_search *y = s->sync;
	if (!y->persisting && y->have_csns) {
		struct entry_view kept;
		struct berval csn = {0, NULL};
		int at = entry_opattrs_index("entryCSN");
		if (at >= 0 && entry_opattrs_get(s->read.db, txn, id, &kept) == 0)
			(void)entry_opattrs_values(s->read.db, &kept, at, &csn, 1);
		struct berval set = {y->csns.len, (char *)y->csns.data};
		if (!sync_csn_newer(csn.bv_val, csn.bv_len, &set))
			return buf_append(&y->present, e->uuid, SYNC_UUID_LEN) < 0 ? -1 : 0;
	}
	*ctl = &y->scratch;
	return search_sync_state_control(y, y->persisting ? SYNC_MODIFY : SYNC_ADD, e->uuid) < 0
	           ? -1
	           : 1;
}

int search_sync_state_control(struct sync_search *y, enum sync_state state,
                              const unsigned char *uuid)
{
	struct berval *v = NULL;
	struct buf list = {0};
	y->scratch.off = y->scratch.len = 0;
	int rc = sync_state_encode(state, uuid, NULL, &v);
	if (rc == 0)
		rc = control_put_value(&list, SYNC_STATE_OID, v);
	if (rc == 0)
		rc = controls_wrap(&y->scratch, &list);
	ber_bvfree(v);
	buf_free(&list);
	return rc;
}

int search_sync_done_control(const struct sync_search *y, struct buf *list)
{
	struct berval cookie = {y->cookie.len, (char *)y->cookie.data}, *v = NULL;
	int rc = sync_done_encode(&cookie, false, &v);
	if (rc == 0)
		rc = control_put_value(list, SYNC_DONE_OID, v);
	ber_bvfree(v);
	return rc;
}

/* A Sync Info message (an IntermediateResponse) of kind on c. 0 or -1. */
int search_sync_info(struct conn *c, int32_t msgid, enum sync_info_kind kind,
                     const struct buf *cookie, bool flag, const unsigned char *uuids, size_t n,
                     bool flush)
{
	struct berval ck = {cookie ? cookie->len : 0, cookie ? (char *)cookie->data : NULL},
	              *v = NULL;
	int rc = sync_info_encode(kind, cookie ? &ck : NULL, flag, uuids, n, &v);
	if (rc == 0)
		rc = reply_intermediate(c, msgid, SYNC_INFO_OID, v->bv_val, v->bv_len, flush);
	ber_bvfree(v);
	return rc;
}

int search_sync_new_cookie(struct conn *c, struct search_op *s)
{
	return search_sync_info(c, s->msgid, SYNC_INFO_NEW_COOKIE, &s->sync->cookie, false, NULL, 0,
	                        true);
}

void search_sync_free(struct sync_search *y)
{
	if (!y)
		return;
	conn_wake_cancel(&y->wake);
	buf_free(&y->csns);
	buf_free(&y->cookie);
	buf_free(&y->base);
	buf_free(&y->present);
	buf_free(&y->dns);
	buf_free(&y->upstream);
	buf_free(&y->scratch);
	free(y);
}

int search_send_sync_entry(struct conn *c, entry_id id, const struct entry_view *e,
                           const struct access_entry *ae)
{
	struct search_op *s = search_running(c);
	const struct buf *ctl = NULL;
	int k = search_sync_state(s, e, s->read.txn, id, &ctl);
	if (k <= 0)
		return k < 0 ? ENOMEM : 0;
	return search_send_entry_ctl(c, id, e, ae, ctl);
}
