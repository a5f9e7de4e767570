/*
 * A connection's lines in the access log (conn.h), and the one thing they hold back: a load
 * balancer's health check. HAProxy's `option ldap-check` connects, binds anonymously, reads
 * the answer and resets the connection; a TCP check connects and closes. Written as they
 * come, each would be an ACCEPT, a BIND and a CLOSE reason="read error", a dozen lines a
 * second per server at `inter 250`. So the ACCEPT line waits (CI(c)->log_held), and so does the
 * result line of an anonymous bind that is op 0 and succeeds (CI(c)->bind_held), until another
 * line of the connection, its close, or a second has passed; a connection that ends with
 * nothing more, closed by the client, is one line:
 *
 *   conn=7 fd=15 ACCEPT from=127.0.0.1:40312 via=pldap proxy=local CLOSE
 *     reason="health check" ops=1
 *
 * docs/access-log.md says what admins see. Called by conn_life.c, conn_proxy.c, conn_tls.c,
 * reply.c and (through conn_log_release) the operations' trace; calls the access log.
 */
#include "server/net/conn.h"
#include "server/net/conn_impl.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "server/access_log.h"

static const char *via(const struct conn *c)
{
	switch (c->listen->scheme) {
	case LISTEN_LDAPS:
		return c->listen->proxy ? "pldaps" : "ldaps";
	case LISTEN_LDAPI:
		return "ldapi";
	default:
		return c->listen->proxy ? "pldap" : "ldap";
	}
}

/* " proxy=HOST:PORT" (the proxy that sent the header), " proxy=local" (a LOCAL or UNKNOWN
 * header: from= is the proxy itself), or nothing (no PROXY listener). */
static void proxy_text(const struct conn *c, char *out, size_t cap)
{
	out[0] = '\0';
	if (!c->listen->proxy)
		return;
	if (CI(c)->proxy_local || CI(c)->proxy_ip.family == 0) {
		snprintf(out, cap, " proxy=%s", CI(c)->proxy_wait ? "none" : "local");
		return;
	}
	char host[INET6_ADDRSTRLEN] = "?";
	inet_ntop(CI(c)->proxy_ip.family == 4 ? AF_INET : AF_INET6, CI(c)->proxy_ip.bytes, host,
	          sizeof(host));
	snprintf(out, cap, CI(c)->proxy_ip.family == 6 ? " proxy=[%s]:%u" : " proxy=%s:%u", host,
	         (unsigned)CI(c)->proxy_port);
}

void conn_log_accept(struct conn *c)
{
	CI(c)->log_held = access_log_on(c->w->srv); /* off: nothing to hold, nothing to release */
}

/* The ACCEPT line, with tail after it (the CLOSE part of a health check's one line). */
static void write_accept(struct conn *c, const char *tail)
{
	char proxy[80];
	proxy_text(c, proxy, sizeof(proxy));
	access_log_add(c->w, "conn=%llu fd=%d ACCEPT from=%s via=%s%s%s", (unsigned long long)c->id,
	               c->fd, c->peer, via(c), proxy, tail);
	CI(c)->log_held = false;
}

static void write_held_bind(struct conn *c)
{
	CI(c)->bind_held = false;
	access_log_add(c->w, "conn=%llu %.*s result=%d entries=0 etime=%llu.%06llu",
	               (unsigned long long)c->id, (int)c->trace.text.len,
	               (const char *)c->trace.text.data, CI(c)->held_rc,
	               (unsigned long long)(CI(c)->held_us / 1000000),
	               (unsigned long long)(CI(c)->held_us % 1000000));
	c->trace.text.len = 0;
}

void conn_log_release(struct conn *c)
{
	if (CI(c)->log_held)
		write_accept(c, "");
	if (CI(c)->bind_held)
		write_held_bind(c);
}

bool conn_log_hold_result(struct conn *c, int rc, uint64_t us)
{
	bool hold = c->trace.check_bind && rc == 0 && CI(c)->log_held && c->trace.nops == 1;
	c->trace.check_bind = false;
	if (!hold) {
		conn_log_release(c);
		return false;
	}
	CI(c)->bind_held = true;
	CI(c)->held_rc = rc;
	CI(c)->held_us = us;
	return true;
}

void conn_log_close(struct conn *c, const char *why)
{
	/* The client went (a reset is what HAProxy's checks end with) after nothing, or after
	 * only the held anonymous bind, leaving nothing unread (bytes of a header or a request
	 * cut short are no check): a health check. */
	bool client_went = strcmp(why, "client closed") == 0 || strcmp(why, "read error") == 0 ||
	                   strcmp(why, "client hung up") == 0;
	if (CI(c)->log_held && client_went && buf_pending(&CI(c)->in) == 0 &&
	    (c->trace.nops == 0 || (c->trace.nops == 1 && CI(c)->bind_held))) {
		char tail[64];
		snprintf(tail, sizeof(tail), " CLOSE reason=\"health check\" ops=%u",
		         c->trace.nops);
		CI(c)->bind_held = false;
		write_accept(c, tail);
		return;
	}
	conn_log_release(c);
	access_log_add(c->w, "conn=%llu CLOSE reason=\"%s\" ops=%u", (unsigned long long)c->id, why,
	               c->trace.nops);
}

void conn_log_sweep(struct conn *c, time_t now)
{
	if ((CI(c)->log_held || CI(c)->bind_held) && now - CI(c)->last_request > 1)
		conn_log_release(c);
}
