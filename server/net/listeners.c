/* The listening sockets, the engine each worker gets, and a replica's hold on them: see
 * listeners.h. */
#include "server/net/listeners.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/net/addr_served.h"
#include "conf/key_line.h"
#include "server/clock.h"
#include "server/net/engine.h"
#include "server/log.h"
#include "server/net/policy.h"
#include "server/replica/replica.h"

/* The address of a TCP listener, port given as a string ("0": any). Returns 0, or -1
 * after logging why. */
static int resolve_tcp(const struct listen_addr *a, const char *port, struct addrinfo **res)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
	                         .ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	int rc = getaddrinfo(a->host, port, &hints, res);
	if (rc)
		log_error("listen %s:%s: %s", a->host, port, gai_strerror(rc));
	return rc ? -1 : 0;
}

/* Whether another process serves or holds the TCP address a (logged: refusing it). Asked
 * before any socket of ours is bound, which would look like another server's held one. */
static bool tcp_served(const struct listen_addr *a)
{
	struct addrinfo *res;
	if (strcmp(a->port, "0") == 0 || resolve_tcp(a, a->port, &res) < 0)
		return false; /* an error in the address is bind_tcp's to report */
	bool served = addr_tcp_served(res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (served)
		log_error("listen %s:%s: the address is already served by another process (a "
		          "second minidir?); refusing to share it",
		          a->host, a->port);
	return served;
}

/* Binds one socket on addr (not listening yet); port is updated with the port bound. */
static int bind_tcp(const struct listen_addr *a, char *port, size_t portlen)
{
	struct addrinfo *res;
	if (resolve_tcp(a, port, &res) < 0)
		return -1;
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    (res->ai_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
		log_error("listen %s:%s: %s", a->host, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, port, (socklen_t)portlen,
		            NI_NUMERICSERV);
	return fd;
}

/*
 * The Unix socket of an ldapi:// listener (bound, not listening yet). A socket file no live
 * process answers on or holds (left by a server that was killed) is replaced; one that a live
 * process answers on, or that a held replica has bound, is another server's, and refused.
 * Mode 0666: any local user may connect, and SASL EXTERNAL tells them apart by their uid
 * and gid.
 */
static int bind_unix(const struct listen_addr *a)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", a->path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_error("listen ldapi %s: %s", a->path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(a->path, &st) == 0) {
		bool served = S_ISSOCK(st.st_mode) && addr_unix_served(a->path);
		if (served || !S_ISSOCK(st.st_mode)) {
			log_error("listen ldapi %s: %s; refusing to replace it", a->path,
			          served ? "another process serves this socket"
			                 : "the path exists and is not a socket");
			close(fd);
			return -1;
		}
		unlink(a->path); /* left behind by a server that did not stop cleanly */
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(a->path, 0666) < 0) {
		log_error("listen ldapi %s: %s", a->path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* A listener as a URL, for the log: ldap://HOST:PORT/, ldaps://, pldap://, pldaps://...,
 * ldapi://%2F.../ */
static void listen_url(const struct listen_addr *a, const char *port, char *out, size_t cap)
{
	if (a->scheme == LISTEN_LDAPI) {
		size_t n = (size_t)snprintf(out, cap, "ldapi://");
		for (const char *p = a->path; *p && n + 4 < cap; p++)
			n += (size_t)snprintf(out + n, cap - n, *p == '/' ? "%%2F" : "%c", *p);
		snprintf(out + n, cap - n, "/");
		return;
	}
	bool v6 = strchr(a->host, ':') != NULL;
	snprintf(out, cap, "%s%s://%s%s%s:%s/", a->proxy ? "p" : "",
	         a->scheme == LISTEN_LDAPS ? "ldaps" : "ldap", v6 ? "[" : "", a->host,
	         v6 ? "]" : "", port);
}

/* Why io_uring may not be used, from the kernel's switch (0: allowed), into why. */
static bool uring_forbidden(char *why, size_t whylen)
{
	const char *path = getenv("MINIDIR_IO_URING_DISABLED_FILE");
	if (!path || !*path)
		path = "/proc/sys/kernel/io_uring_disabled";
	FILE *f = fopen(path, "re");
	if (!f)
		return false; /* an older kernel has no switch: setup tells */
	int v = 0;
	/* 2: nobody may; 1: only root and io_uring_group, which setup finds out. */
	bool forbidden = fscanf(f, "%d", &v) == 1 && v >= 2;
	fclose(f);
	if (forbidden)
		snprintf(why, whylen, "%s is %d", path, v);
	return forbidden;
}

/* Gives w the engine asked for (want), falling back to epoll with a log line when io_uring
 * is forbidden (/proc/sys/kernel/io_uring_disabled, or the file the environment variable
 * MINIDIR_IO_URING_DISABLED_FILE names) or its setup fails (ENOSYS, EPERM, ENOMEM...).
 * Returns 0, or -1 when even epoll failed (logged). */
static int engine_setup(struct worker *w, enum io_engine want)
{
	char why[256] = "";
	if (want == IO_ENGINE_IO_URING) {
		if (!uring_forbidden(why, sizeof(why)) &&
		    engine_uring.setup(w, why, sizeof(why)) == 0) {
			net_worker(w)->engine = &engine_uring;
			return 0;
		}
		log_info("worker %d: io_engine io_uring unavailable (%s); using epoll", w->id, why);
	}
	if (engine_epoll.setup(w, why, sizeof(why)) < 0) {
		log_error("worker %d: %s", w->id, why);
		return -1;
	}
	net_worker(w)->engine = &engine_epoll;
	return 0;
}

/* Each worker's event loop engine: io_engine, or MINIDIR_IO_ENGINE where set (tests run
 * every suite on both); io_uring falls back to epoll with a log line (engine_setup). */
static int start_engines(struct server *srv)
{
	enum io_engine engine = srv->cfg.io_engine;
	const char *env = getenv("MINIDIR_IO_ENGINE");
	if (env && *env) {
		if (strcmp(env, "epoll") == 0)
			engine = IO_ENGINE_EPOLL;
		else if (strcmp(env, "io_uring") == 0)
			engine = IO_ENGINE_IO_URING;
		else {
			log_error("MINIDIR_IO_ENGINE=%s: expected epoll or io_uring", env);
			return -1;
		}
	}
	for (int i = 0; i < srv->nworkers; i++)
		if (engine_setup(srv->workers[i], engine) < 0)
			return -1;
	log_info("io_engine %s", net_worker(srv->workers[0])->engine->name);
	return 0;
}

int listeners_bind(struct server *srv)
{
	struct config *cfg = &srv->cfg;
	bool hold = cfg->syncrepl.set && cfg->listen_after_refresh > 0;
	for (int a = 0; a < cfg->nlisten; a++)
		if (cfg->listen[a].scheme != LISTEN_LDAPI && tcp_served(&cfg->listen[a]))
			return -1;
	/* One socket per address per worker; port 0 resolves once, then is shared. */
	for (int a = 0; a < cfg->nlisten; a++) {
		const struct listen_addr *la = &cfg->listen[a];
		char port[16];
		snprintf(port, sizeof(port), "%s", la->port);
		/* TCP: one SO_REUSEPORT socket per worker. A Unix socket: one, which every
		 * worker watches through its own descriptor (dup), accepting under the lock. */
		int shared = la->scheme == LISTEN_LDAPI ? bind_unix(la) : -1;
		if (la->scheme == LISTEN_LDAPI && shared < 0)
			return -1;
		srv->unix_bound[a] = shared >= 0;
		for (int i = 0; i < srv->nworkers; i++) {
			struct worker *w = srv->workers[i];
			struct net_worker *nw = net_worker(w);
			int fd = shared >= 0 ? (i == 0 ? shared : fcntl(shared, F_DUPFD_CLOEXEC, 0))
			                     : bind_tcp(la, port, sizeof(port));
			if (fd < 0)
				return -1;
			nw->listen_addr[nw->nlisten] = la;
			nw->listenfd[nw->nlisten++] = fd;
		}
		listen_url(la, port, srv->listen_urls[a], sizeof(srv->listen_urls[a]));
	}
	/* Listening before the engines start: io_uring arms its accepts at once. */
	if (!hold && listeners_open(srv, NULL) < 0)
		return -1;
	for (int i = 0; i < srv->nworkers; i++) /* held: not watched until listeners_open */
		net_worker(srv->workers[i])->listen_held =
		    net_worker(srv->workers[i])->listen_paused = hold;
	if (start_engines(srv) < 0)
		return -1;
	if (!hold)
		return 0;
	srv->listen_hold_until = clock_seconds() + cfg->listen_after_refresh;
	for (int a = 0; a < cfg->nlisten; a++)
		log_info("holding %s closed until the first refresh has committed "
		         "(listen_after_refresh: at most %d s)",
		         srv->listen_urls[a], cfg->listen_after_refresh);
	return 0;
}

int listeners_open(struct server *srv, const char *why)
{
	if (__atomic_exchange_n(&srv->listening, true, __ATOMIC_ACQ_REL))
		return 0;
	const struct config *cfg = &srv->cfg;
	for (int i = 0; i < srv->nworkers; i++) {
		struct net_worker *nw = net_worker(srv->workers[i]);
		for (int j = 0; j < nw->nlisten; j++)
			if (listen(nw->listenfd[j], 1024) < 0) {
				log_error("listen %s: %s", srv->listen_urls[j], strerror(errno));
				return -1;
			}
	}
	/* Held: each worker starts watching its listeners itself (an io_uring submission
	 * belongs to its ring's thread), told through its wake-up descriptor. */
	for (int i = 0; i < srv->nworkers; i++) {
		struct net_worker *nw = net_worker(srv->workers[i]);
		if (!__atomic_load_n(&nw->listen_held, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&nw->listen_held, false, __ATOMIC_RELEASE);
		__atomic_store_n(&nw->listen_release, true, __ATOMIC_RELEASE);
		uint64_t one = 1;
		if (write(nw->wakefd, &one, sizeof(one)) < 0)
			log_error("worker %d: waking it to listen: %s", nw->db.base.id,
			          strerror(errno));
	}
	for (int a = 0; a < cfg->nlisten; a++) {
		const struct listen_addr *la = &cfg->listen[a];
		log_info("listening on %s (%d workers, send_policy %s%s)", srv->listen_urls[a],
		         srv->nworkers,
		         config_policy_name(la->scheme == LISTEN_LDAPI ? SEND_BATCH
		                                                       : srv->runtime.policy->id),
		         la->scheme == LISTEN_LDAP && srv->tls ? ", StartTLS" : "");
	}
	if (why)
		log_info("%s", why);
	return 0;
}

void listeners_hold_tick(struct server *srv)
{
	if (__atomic_load_n(&srv->listening, __ATOMIC_ACQUIRE) ||
	    clock_seconds() < srv->listen_hold_until)
		return;
	struct replica_status st = {.state = "?"};
	replica_status(srv, &st);
	char why[600];
	snprintf(why, sizeof(why),
	         "listen_after_refresh: %d s passed and the first refresh has not committed "
	         "(syncrepl state %s%s%.300s): serving anyway, the data as it is",
	         srv->cfg.listen_after_refresh, st.state, st.last_error[0] ? ", last error: " : "",
	         st.last_error);
	listeners_open(srv, why); /* a failure is logged; the address stays closed */
}

bool listeners_proxy_from_open(const struct config *cfg)
{
	for (int i = 0; i < cfg->nproxy_from; i++) {
		const struct ip_net *n = &cfg->proxy_from[i];
		if (n->prefix != 0)
			continue;
		char where[CONFIG_KEY_WHERE];
		log_warning(
		    "%s: proxy_from %s trusts a PROXY header from every %s address: "
		    "anyone who reaches a pldap:// or pldaps:// listener can claim to be any "
		    "client, in the log and in access rules; name the load balancers' "
		    "addresses instead",
		    config_key_where(cfg->path, "proxy_from", where),
		    n->addr.family == 4 ? "0.0.0.0/0" : "::/0",
		    n->addr.family == 4 ? "IPv4" : "IPv6");
		return true;
	}
	return false;
}
