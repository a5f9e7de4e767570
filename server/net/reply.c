/* The reply API (reply.h): responses encoded into the connection's output, PDU by PDU. */
#include "server/net/reply.h"

#include "server/access_log.h"
#include "server/clock.h"

/* The access log's line of the operation this result ends (ops.c wrote its request part). */
static void log_result(struct conn *c, int rc)
{
	if (!c->op_text.len || !access_log_on(c->w->srv))
		return;
	unsigned long long us = c->op_start_ns ? (clock_ns() - c->op_start_ns) / 1000 : 0;
	if (conn_log_hold_result(c, rc, us))
		return; /* perhaps a health check: written later, or folded into one line */
	access_log_add(c->w, "conn=%llu %.*s result=%d entries=%u etime=%llu.%06llu",
	               (unsigned long long)c->id, (int)c->op_text.len,
	               (const char *)c->op_text.data, rc, c->op_entries, us / 1000000,
	               us % 1000000);
	c->op_text.len = 0;
}

/* A PDU is in c->out: count it, then let the send policy decide on sending. */
static int queued(struct conn *c, int encoded, bool last)
{
	if (encoded < 0) {
		c->closing = true;
		return -1;
	}
	conn_output_queued(c, last);
	c->policy->pdu_end(c, last, last && conn_more_requests(c));
	return 0;
}

void reply_begin(struct conn *c)
{
	if (c->policy->response_begin)
		c->policy->response_begin(c);
}

int reply_entry(struct conn *c, int32_t msgid, const struct stored_entry *st,
                const struct attr_select *sel, const unsigned char *extra, size_t extralen)
{
	c->op_entries++;
	return queued(c, response_stored_entry(&c->out, msgid, st, sel, extra, extralen), false);
}

int reply_result(struct conn *c, int32_t msgid, unsigned char optag, int rc, const char *matched,
                 const char *message, const struct result_extra *x)
{
	static const struct result_extra none = {.oid = NULL};
	log_result(c, rc);
	stat_result(&c->w->stats, optag, rc);
	return queued(
	    c, response_result_ex(&c->out, msgid, optag, rc, matched, message, x ? x : &none),
	    true);
}

int reply_done(struct conn *c, int32_t msgid, unsigned char optag, int rc, const char *matched,
               const char *message)
{
	reply_begin(c);
	return reply_result(c, msgid, optag, rc, matched, message, NULL);
}
