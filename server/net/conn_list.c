/*
 * cn=Monitor's view of the connections (conn_list.h): a copy of each worker's list taken
 * under its conns_lock, so that nothing a worker frees is read after it is gone. What is
 * read outside the lock the worker writes with relaxed atomic stores (the counters and
 * last_request); the rest was set before the connection was linked.
 */
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "server/clock.h"
#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/conn_list.h"
#include "server/net/net_worker.h"

/* snprintf into a fixed field of struct conn_info: a longer value is cut, as a field of
 * cn=Monitor may be (a socket path of 108 bytes in an 80-byte field). Through vsnprintf
 * so that the compiler's truncation warning (which fires on the direct calls under
 * _FORTIFY_SOURCE with full objects, as the package builds them) is not raised for a cut
 * that is meant. */
static void put_field(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put_field(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/* Our end of c's socket as slapd writes it ("IP=127.0.0.1:389", "PATH=/run/ldapi"); the
 * descriptor stays open while c is linked (conn_close unlinks it first). */
static void local_address(const struct conn *c, char *out, size_t len, char *host, size_t hlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[64] = "", p[8] = "";
	out[0] = host[0] = '\0';
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) != 0)
		return;
	if (ss.ss_family == AF_UNIX) {
		put_field(out, len, "PATH=%s", ((struct sockaddr_un *)&ss)->sun_path);
		put_field(host, hlen, "%s", ((struct sockaddr_un *)&ss)->sun_path);
		return;
	}
	if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
	                NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return;
	char hp[80];
	if (ss.ss_family == AF_INET6)
		put_field(hp, sizeof(hp), "[%s]:%s", h, p);
	else
		put_field(hp, sizeof(hp), "%s:%s", h, p);
	put_field(out, len, "IP=%s", hp);
	put_field(host, hlen, "%s", hp);
}

/* wall - mono: the wall clock time of a clock_seconds() reading (conn.h keeps those). */
static void copy_one(const struct conn *c, struct conn_info *ci, time_t wall_minus_mono)
{
	static const char *const scheme[] = {
	    [LISTEN_LDAP] = "ldap", [LISTEN_LDAPS] = "ldaps", [LISTEN_LDAPI] = "ldapi"};
	char host[112];
	ci->id = c->id;
	ci->ops_taken = __atomic_load_n(&CI(c)->ops_taken, __ATOMIC_RELAXED);
	ci->ops_answered = __atomic_load_n(&CI(c)->ops_answered, __ATOMIC_RELAXED);
	ci->accepted = CI(c)->accepted + wall_minus_mono;
	ci->active = __atomic_load_n(&CI(c)->last_request, __ATOMIC_RELAXED) + wall_minus_mono;
	local_address(c, ci->local, sizeof(ci->local), host, sizeof(host));
	if (c->local)
		put_field(ci->peer, sizeof(ci->peer), "%s", ci->local);
	else
		put_field(ci->peer, sizeof(ci->peer), "IP=%s", c->peer);
	const char *s = CI(c)->scheme <= LISTEN_LDAPI ? scheme[CI(c)->scheme] : "ldap";
	put_field(ci->listener, sizeof(ci->listener), "%s://%s/", s, c->local ? "" : host);
	size_t n = c->auth == AUTH_ANONYMOUS ? 0 : c->bound_dn.len;
	if (n >= sizeof(ci->authz))
		n = sizeof(ci->authz) - 1;
	if (n)
		memcpy(ci->authz, c->bound_dn.data, n);
	ci->authz[n] = '\0';
}

size_t conn_list(struct server *srv, struct conn_info *out, size_t max)
{
	size_t n = 0;
	time_t delta = time(NULL) - clock_seconds();
	for (int i = 0; i < srv->nworkers && n < max; i++) {
		struct net_worker *nw = net_worker(srv->workers[i]);
		pthread_mutex_lock(&nw->conns_lock);
		for (struct conn_impl *ci = nw->conns; ci && n < max; ci = ci->next)
			copy_one(&ci->pub, &out[n++], delta);
		pthread_mutex_unlock(&nw->conns_lock);
	}
	return n;
}
