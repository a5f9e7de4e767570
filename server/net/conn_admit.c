/*
 * max_conns_per_ip at the connection (conn_impl.h: conn_admit_peer, conn_release_peer): the
 * count of open connections per client address, in srv->addr_conns. Its own file because
 * both conn_life.c (at accept) and conn_proxy.c (once a PROXY header names the client) call it.
 */
#include "server/net/conn.h"
#include "server/net/conn_impl.h"

#include "server/addr_conns.h"
#include "server/limit_key.h"
#include "server/log.h"
#include "server/net/net_worker.h"

/* Gives back c's count in srv->addr_conns, if it holds one. */
void conn_release_peer(struct conn *c)
{
	if (CI(c)->peer_counted)
		addr_conns_release(c->w->srv->addr_conns, CI(c)->peer_counted);
	CI(c)->peer_counted = 0;
}

bool conn_admit_peer(struct conn *c)
{
	struct server *srv = c->w->srv;
	if (!srv->addr_conns)
		return true;
	conn_release_peer(c);
	uint64_t key = limit_key_peer(c->peer);
	if (!key)
		return true;
	switch (addr_conns_acquire(srv->addr_conns, key)) {
	case ADDR_CONNS_COUNTED:
		CI(c)->peer_counted = key;
		return true;
	case ADDR_CONNS_FULL: /* let in uncounted: addr_conns.h */
		return true;
	case ADDR_CONNS_OVER:
		break;
	}
	STAT_ADD(c->w->stats.conns_per_ip_refused, 1);
	log_info("connection from %s closed: that address has %d connections open "
	         "(max_conns_per_ip)",
	         c->peer, srv->cfg.max_conns_per_ip);
	return false;
}
