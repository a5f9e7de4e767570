/*
 * A connection's bound identity (conn.h: conn_set_identity): its DN and entry key, kept
 * for as long as the connection stays bound, so for as long as it idles.
 *
 * Both live in one slot of the worker's identity slab (slab.h) when they fit in
 * CONN_IDENT_BYTES, as almost every DN does. Allocated with malloc they would sit
 * between the input and output buffers of busy connections, and each would pin a heap
 * page that malloc_trim cannot return once the buffers around it are freed: 10,000
 * password-bound idle connections held 5.1 KB each that way, and kept the memory after
 * they closed. A longer identity is malloc'd.
 *
 * With chain_passwd, the password of a simple bind is kept too (malloc'd: rare, and wiped
 * with explicit_bzero when the identity goes).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/net_worker.h"
#include "server/net/slab.h"

/* Under nw->conns_lock: conn_list may be copying the DN from another thread. */
static void clear_locked(struct conn *c)
{
	if (c->bound_pw.data) {
		explicit_bzero((void *)c->bound_pw.data, c->bound_pw.len);
		free((void *)c->bound_pw.data);
		c->bound_pw = (struct conn_bytes){NULL, 0};
	}
	if (CI(c)->ident) {
		if (c->bound_dn.len + c->bound_key.len <= CONN_IDENT_BYTES)
			slab_put(&net_worker(c->w)->ident_slab, CI(c)->ident);
		else
			free(CI(c)->ident);
	}
	CI(c)->ident = NULL;
	c->bound_dn = c->bound_key = (struct conn_bytes){NULL, 0};
	c->auth = AUTH_ANONYMOUS;
	c->must_change = 0;
}

void conn_clear_identity(struct conn *c)
{
	pthread_mutex_lock(&net_worker(c->w)->conns_lock);
	clear_locked(c);
	pthread_mutex_unlock(&net_worker(c->w)->conns_lock);
}

int conn_set_identity(struct conn *c, enum conn_auth auth, const void *dn, size_t dnlen,
                      const void *key, size_t keylen)
{
	struct net_worker *nw = net_worker(c->w);
	pthread_mutex_lock(&nw->conns_lock);
	clear_locked(c);
	if (auth == AUTH_ANONYMOUS) {
		pthread_mutex_unlock(&nw->conns_lock);
		return 0;
	}
	size_t need = dnlen + keylen;
	unsigned char *m = need <= CONN_IDENT_BYTES ? slab_get(&nw->ident_slab) : malloc(need);
	if (!m) {
		pthread_mutex_unlock(&nw->conns_lock);
		return -1;
	}
	if (dnlen)
		memcpy(m, dn, dnlen);
	if (keylen)
		memcpy(m + dnlen, key, keylen);
	CI(c)->ident = m;
	c->bound_dn = (struct conn_bytes){m, dnlen};
	c->bound_key = (struct conn_bytes){m + dnlen, keylen};
	c->auth = auth;
	pthread_mutex_unlock(&nw->conns_lock);
	return 0;
}

int conn_set_password(struct conn *c, const void *pw, size_t len)
{
	unsigned char *m = malloc(len ? len : 1);
	if (!m)
		return -1;
	memcpy(m, pw, len);
	c->bound_pw = (struct conn_bytes){m, len};
	return 0;
}
