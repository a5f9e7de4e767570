/*
 * The access log's text of a request (ops.h): what the operation is, on what,
 * and who asks, written into c->trace.text when the request is taken; reply.c
 * adds the result, the entries and the time when the response ends. Requests
 * without a response (Unbind, Abandon) get their line at once.
 */
#include <ldap.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "protocol/buf.h"
#include "server/access_log.h"
#include "server/ops/ops.h"

/* Appends s[0..len) with '"', backslashes and control bytes as \XX, so that a client cannot break a
 * line or a quoted field. */
static void put_quoted_bytes(struct buf *out, const char *s, size_t len)
{
	buf_append_escaped(out, s, len, "\"");
}

/* s[0..len) in double quotes (put_quoted_bytes). */
static void put_quoted(struct buf *out, const char *s, size_t len)
{
	buf_append(out, "\"", 1);
	put_quoted_bytes(out, s, len);
	buf_append(out, "\"", 1);
}

static void put_field(struct buf *out, const char *name, const char *s, size_t len)
{
	buf_append(out, " ", 1);
	buf_append(out, name, strlen(name));
	buf_append(out, "=", 1);
	put_quoted(out, s, len);
}

static void put_text(struct buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_text(struct buf *out, const char *fmt, ...)
{
	char t[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t, sizeof(t), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_append(out, t, (size_t)n < sizeof(t) ? (size_t)n : sizeof(t) - 1);
}

static void put_search(struct buf *out, const struct search_request *r)
{
	static const char *const scopes[] = {"base", "one", "sub", "children"};
	put_field(out, "base", r->base.bv_val, r->base.bv_len);
	const char *scope = r->scope >= 0 && r->scope <= 3 ? scopes[r->scope] : "?";
	buf_append(out, " scope=", 7);
	buf_append(out, scope, strlen(scope));
	/* The string form escapes what a quoted field must not hold (filter.h). */
	buf_append(out, " filter=\"", 9);
	if (r->filter)
		filter_to_string(r->filter, out);
	buf_append(out, "\" attrs=\"", 9);
	for (int i = 0; i < r->nattrs; i++) {
		if (i)
			buf_append(out, " ", 1);
		put_quoted_bytes(out, r->attrs[i].bv_val, r->attrs[i].bv_len);
	}
	buf_append(out, "\"", 1);
}

void op_trace(struct conn *c, const struct ldap_request *req)
{
	struct buf *out = &c->trace.text;
	unsigned long long id = (unsigned long long)c->id;
	/* A first anonymous simple bind may be a load balancer's health check: its line is
	 * held with the ACCEPT line (server/net/conn_log.c); anything else writes them first. */
	bool check = c->trace.nops == 0 && req->op == LDAP_REQ_BIND && req->u.bind.simple &&
	             req->u.bind.dn.bv_len == 0;
	if (!check)
		conn_log_release(c);
	c->trace.check_bind = check;
	unsigned op = c->trace.nops++;
	if (req->op == LDAP_REQ_UNBIND || req->op == LDAP_REQ_ABANDON) {
		if (req->op == LDAP_REQ_UNBIND)
			access_log_add(c->w, "conn=%llu op=%u UNBIND", id, op);
		else
			access_log_add(c->w, "conn=%llu op=%u ABANDON msgid=%d", id, op,
			               (int)req->u.abandon_msgid);
		return;
	}
	out->off = out->len = 0;
	c->trace.entries = 0;
	put_text(out, "op=%u msgid=%d", op, (int)req->msgid);
	switch (req->op) {
	case LDAP_REQ_BIND: {
		const struct bind_request *b = &req->u.bind;
		put_text(out, " BIND");
		put_field(out, "dn", b->dn.bv_val, b->dn.bv_len);
		/* method is quoted as the mechanism a client names is (docs/access-log.md). */
		if (b->simple)
			put_text(out, " method=\"simple\"");
		else
			put_field(out, "method", b->mech.bv_val, b->mech.bv_len);
		break;
	}
	case LDAP_REQ_SEARCH:
		put_text(out, " SEARCH");
		put_search(out, &req->u.search);
		break;
	case LDAP_REQ_COMPARE:
		put_text(out, " COMPARE");
		put_field(out, "dn", req->u.compare.dn.bv_val, req->u.compare.dn.bv_len);
		put_field(out, "attr", req->u.compare.attr.bv_val, req->u.compare.attr.bv_len);
		break;
	case LDAP_REQ_EXTENDED:
		put_text(out, " EXTENDED");
		put_field(out, "oid", req->u.extended.oid.bv_val, req->u.extended.oid.bv_len);
		break;
	default:
		put_text(out, " WRITE tag=0x%lx", (unsigned long)req->op);
		break;
	}
	/* Who asks: the identity before the operation (a bind's result says what it became). */
	if (c->bound_dn.len)
		put_field(out, "by", (const char *)c->bound_dn.data, c->bound_dn.len);
	else
		put_text(out, " by=\"anonymous\""); /* quoted as a DN is: one form per field */
}
