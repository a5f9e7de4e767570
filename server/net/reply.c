/* The reply API (reply.h): responses encoded into the connection's output, PDU by PDU.
 * Above the send policies it calls, which call conn_output.c: there it would close a
 * circle of calls. */
#include "server/net/reply.h"
#include "server/net/conn_impl.h"
#include "server/net/policy.h"

#include "server/access_log.h"
#include "server/clock.h"

/* The access log's line of the operation this result ends (ops.c wrote its request part). */
static void log_result(struct conn *c, int rc)
{
	if (!c->trace.text.len || !access_log_on(c->w->srv))
		return;
	unsigned long long us = c->op_start_ns ? (clock_ns() - c->op_start_ns) / 1000 : 0;
	if (conn_log_hold_result(c, rc, us))
		return; /* perhaps a health check: written later, or folded into one line */
	access_log_add(c->w, "conn=%llu %.*s result=%d entries=%u etime=%llu.%06llu",
	               (unsigned long long)c->id, (int)c->trace.text.len,
	               (const char *)c->trace.text.data, rc, c->trace.entries, us / 1000000,
	               us % 1000000);
	c->trace.text.len = 0;
}

/* A PDU is in CI(c)->out: count it, then let the send policy decide on sending. */
__attribute__((always_inline)) static inline int queued(struct conn *c, int encoded, bool last)
{
	if (encoded < 0) {
		CI(c)->closing = true;
		return -1;
	}
	conn_output_queued(c, last);
	CI(c)->policy->pdu_end(c, last, last && conn_more_requests(c));
	return 0;
}

void reply_begin(struct conn *c)
{
	if (CI(c)->policy->response_begin)
		CI(c)->policy->response_begin(c);
}

int reply_entry(struct conn *c, int32_t msgid, const struct stored_entry *st,
                const struct attr_select *sel, const unsigned char *extra, size_t extralen)
{
	c->trace.entries++;
	return queued(c, response_stored_entry(&CI(c)->out, msgid, st, sel, extra, extralen),
	              false);
}

int reply_entry_ctl(struct conn *c, int32_t msgid, const struct stored_entry *st,
                    const struct attr_select *sel, const unsigned char *extra, size_t extralen,
                    const void *ctl, size_t clen)
{
	struct buf *out = &CI(c)->out;
	size_t at = buf_pending(out); /* the message starts there, however out moves */
	c->trace.entries++;
	int rc = response_stored_entry(out, msgid, st, sel, extra, extralen);
	if (rc == 0)
		rc = response_add_controls(out, at, ctl, clen);
	return queued(c, rc, false);
}

/* A PDU of a persistent search that goes out now: the policy sees a response's last PDU
 * (it flushes), the operation's count and latency untouched. */
static int queued_flush(struct conn *c, int encoded)
{
	if (encoded < 0) {
		CI(c)->closing = true;
		return -1;
	}
	conn_output_queued(c, false); /* counted as a PDU within a response */
	CI(c)->policy->pdu_end(c, true, false);
	return 0;
}

int reply_bare_entry(struct conn *c, int32_t msgid, const void *dn, size_t dnlen, const void *ctl,
                     size_t clen)
{
	struct buf *out = &CI(c)->out;
	size_t at = buf_pending(out); /* the message starts there, however out moves */
	int rc = response_bare_entry(out, msgid, dn, dnlen);
	if (rc == 0)
		rc = response_add_controls(out, at, ctl, clen);
	return queued(c, rc, false);
}

int reply_intermediate(struct conn *c, int32_t msgid, const char *oid, const void *value,
                       size_t vlen, bool flush)
{
	int rc = response_intermediate(&CI(c)->out, msgid, oid, value, vlen);
	return flush ? queued_flush(c, rc) : queued(c, rc, false);
}

int reply_result(struct conn *c, int32_t msgid, unsigned char optag, int rc, const char *matched,
                 const char *message, const struct result_extra *x)
{
	static const struct result_extra none = {.oid = NULL};
	log_result(c, rc);
	stat_result(&c->w->stats, optag, rc);
	return queued(
	    c, response_result_ex(&CI(c)->out, msgid, optag, rc, matched, message, x ? x : &none),
	    true);
}

int reply_done(struct conn *c, int32_t msgid, unsigned char optag, int rc, const char *matched,
               const char *message)
{
	reply_begin(c);
	return reply_result(c, msgid, optag, rc, matched, message, NULL);
}
