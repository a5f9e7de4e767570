/*
 * The PROXY protocol on a connection (conn.h): a pldap:// or pldaps:// listener takes
 * connections only from proxy_from, and each begins with a header (proxy_header.c) that
 * says who the client is; from then on c->peer and c->peer_ip are the client's, in every
 * log line and access rule. The header is bounded: PROXY_HEADER_MAX bytes, within
 * pdu_timeout of the accept (10 s when pdu_timeout is 0). Called by conn_life.c (accept,
 * events, the sweep), which closes what it refuses; it calls conn_tls.c on pldaps://,
 * conn_output.c (the handshake's answer) and conn_log.c.
 */
#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/net_worker.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "server/log.h"
#include "server/net/proxy_header.h"

/* The header's time bound when pdu_timeout is 0 (forever would let a silent client hold a
 * connection on a listener that takes only proxies). */
#define PROXY_HEADER_TIMEOUT 10

/* "HOST:PORT" or "[HOST]:PORT" of a into out. */
static void format_addr(const struct ip_addr *a, uint16_t port, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN] = "?";
	inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->bytes, host, sizeof(host));
	snprintf(out, cap, a->family == 6 ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
}

bool conn_proxy_allowed(struct conn *c)
{
	const struct config *cfg = &c->w->srv->cfg;
	for (int i = 0; i < cfg->nproxy_from; i++)
		if (ip_net_holds(&cfg->proxy_from[i], &c->peer_ip))
			return true;
	STAT_ADD(c->w->stats.proxy_refused, 1);
	log_info("conn fd=%d from %s: not in proxy_from, refused on a %s:// listener", c->fd,
	         c->peer, c->listen->scheme == LISTEN_LDAPS ? "pldaps" : "pldap");
	return false;
}

int conn_proxy_input(struct conn *c)
{
	size_t used;
	struct proxy_source src;
	const char *why = NULL;
	enum proxy_status st = proxy_header_parse(CI(c)->in.data + CI(c)->in.off,
	                                          buf_pending(&CI(c)->in), &used, &src, &why);
	if (st == PROXY_NEED_MORE)
		return 0;
	if (st == PROXY_MALFORMED) {
		STAT_ADD(c->w->stats.proxy_malformed, 1);
		log_info("conn fd=%d from %s: %s; closing", c->fd, c->peer, why);
		CI(c)->closing = true;
		CI(c)->close_why = "malformed PROXY header";
		return -1;
	}
	buf_consume(&CI(c)->in, used);
	CI(c)->proxy_wait = false;
	CI(c)->proxy_ip = c->peer_ip;
	CI(c)->proxy_local = src.addr.family == 0;
	/* The proxy's port, read back from the peer text written at accept. */
	const char *colon = strrchr(c->peer, ':');
	CI(c)->proxy_port = colon ? (uint16_t)strtoul(colon + 1, NULL, 10) : 0;
	if (!CI(c)->proxy_local) {
		/* cn=Monitor's connection entries copy peer under the worker's conns_lock. */
		struct net_worker *nw = net_worker(c->w);
		pthread_mutex_lock(&nw->conns_lock);
		c->peer_ip = src.addr;
		format_addr(&src.addr, src.port, c->peer, sizeof(c->peer));
		pthread_mutex_unlock(&nw->conns_lock);
	}
	log_debug("conn fd=%d: PROXY v%d header: the client is %s", c->fd, src.version, c->peer);
	conn_log_accept(c);
	/* max_conns_per_ip counts the client the header named (conn_accept did not count it). */
	if (!conn_admit_peer(c)) {
		CI(c)->closing = true;
		CI(c)->close_why = "max_conns_per_ip";
		return -1;
	}
	if (c->listen->scheme == LISTEN_LDAPS) {
		bool send;
		if (conn_tls_after_proxy(c, &send) < 0)
			return -1;
		if (send && conn_flush(c, 0) < 0)
			return -1;
		return buf_pending(&CI(c)->in) > 0 ? 1 : 0;
	}
	return 1;
}

bool conn_proxy_timed_out(struct conn *c, time_t now)
{
	int limit = server_pdu_timeout(c->w->srv);
	if (limit == 0)
		limit = PROXY_HEADER_TIMEOUT;
	if (now - CI(c)->last_request <= limit)
		return false;
	STAT_ADD(c->w->stats.proxy_malformed, 1);
	log_info("conn fd=%d from %s: %zu bytes and no whole PROXY header in %d s; closing", c->fd,
	         c->peer, buf_pending(&CI(c)->in), limit);
	return true;
}
