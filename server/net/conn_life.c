/*
 * Connections: their life cycle. Accept (who the peer is, the send policy, TLS for
 * ldaps://), the events the engine reports and the ready list's turn (handed to
 * conn_input.c and conn_output.c), the timeouts, idle buffers given back, and close;
 * and the hooks the worker's event loop calls (worker.h). Input and output are
 * conn_input.c's and conn_output.c's, TLS conn_tls.c's, the waking queue and the ready
 * list conn_wake.c's: this file calls them, none calls back.
 *
 * The socket is read, written and watched through the worker's engine
 * (engine.h: epoll or io_uring), level-triggered. A read that fills less than
 * the free buffer space means the socket was drained, so a request costs one
 * recv and (with most policies) one send: no extra recv to see EAGAIN, and no
 * change of the watched events unless the socket fills up.
 */
#include "server/net/conn.h"
#include "server/net/conn_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <ldap.h>
#include <stdio.h>
#include <string.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/clock.h"
#include "server/dlist.h"
#include "server/log.h"
#include "server/mem_trim.h"
#include "server/net/engine.h"
#include "server/net/policy.h"
#include "server/net/tls_session.h"
#include "server/net/worker.h"

/* What a TLS session is taken to give back to malloc when its connection closes. */
#define CONN_TLS_SESSION_BYTES (16 * 1024)

/* Who is at the other end: "HOST:PORT" ("[HOST]:PORT" for IPv6, RFC 3986's form, so that the
 * port is told from the address), or for ldapi:// the peer's uid and gid (c->local). */
static void identify_peer(struct conn *c)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (c->local) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
			c->peer_uid = cred.uid;
			c->peer_gid = cred.gid;
			c->peer_cred = true;
			snprintf(c->peer, sizeof(c->peer), "ldapi uid=%u gid=%u",
			         (unsigned)cred.uid, (unsigned)cred.gid);
		} else {
			snprintf(c->peer, sizeof(c->peer), "ldapi");
		}
		return;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
		char host[48] = "?", port[8] = "?";
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
		            NI_NUMERICHOST | NI_NUMERICSERV);
		snprintf(c->peer, sizeof(c->peer), ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		         host, port);
		ip_addr_from_sockaddr(&c->peer_ip, &ss);
	}
}

int conn_accept(struct worker *w, int fd, const struct listen_addr *la)
{
	enum listen_scheme scheme = la->scheme;
	struct net_worker *nw = net_worker(w);
	struct conn *c = slab_get(&nw->conn_slab);
	if (!c) {
		close(fd);
		return -1;
	}
	c->fd = fd;
	c->w = w;
	CI(c)->last_request = clock_seconds();
	c->local = scheme == LISTEN_LDAPI;
	c->listen = la;
	CI(c)->proxy_wait = la->proxy; /* TLS, if any, begins after the header (conn_proxy.c) */
	/* TCP options mean nothing on a Unix socket: ldapi:// gathers responses (batch). */
	CI(c)->policy = c->local ? w->srv->local_policy : server_policy(w->srv);
	CI(c)->stats = &w->stats.send[CI(c)->policy->id];
	identify_peer(c);
	/* max_conns_per_ip counts the client: on pldap(s):// once its PROXY header names it
	 * (conn_proxy.c), here for the others. */
	if (!la->proxy && !conn_admit_peer(c)) {
		close(fd);
		slab_put(&nw->conn_slab, c);
		return -1;
	}
	if ((la->proxy && !conn_proxy_allowed(c)) ||
	    (!c->local && CI(c)->policy->accept && CI(c)->policy->accept(c) < 0) ||
	    (scheme == LISTEN_LDAPS && !la->proxy && conn_tls_begin(c) < 0)) {
		tls_session_free(c->tls);
		conn_release_peer(c);
		close(fd);
		slab_put(&nw->conn_slab, c);
		return -1;
	}
	if (engine_add(w, fd, c, EPOLLIN) < 0) {
		log_error("%s: adding a connection: %s", nw->engine->name, strerror(errno));
		conn_release_peer(c);
		close(fd);
		slab_put(&nw->conn_slab, c);
		return -1;
	}
	CI(c)->events = EPOLLIN;
	c->id = __atomic_add_fetch(&w->srv->next_conn_id, 1, __ATOMIC_RELAXED);
	CI(c)->accepted = CI(c)->last_request;
	CI(c)->scheme = (uint8_t)scheme;
	pthread_mutex_lock(&nw->conns_lock);
	DLIST_PUSH(nw->conns, CI(c));
	pthread_mutex_unlock(&nw->conns_lock);
	STAT_ADD(w->stats.connections_total, 1);
	STAT_ADD(w->stats.connections_by_policy[CI(c)->policy->id], 1);
	STAT_ADD(w->stats.connections_current, 1);
	log_debug("conn fd=%d from %s accepted by worker %d%s%s", fd, c->peer, w->id,
	          scheme == LISTEN_LDAPS ? " (ldaps)" : "",
	          la->proxy ? " (PROXY header next)" : "");
	/* On pldap(s):// the ACCEPT line names the client: it waits for the header. */
	if (!la->proxy)
		conn_log_accept(c);
	return 0;
}

void conn_start_tls(struct conn *c)
{
	CI(c)->tls_starting = true;
	if (!c->blocked && buf_pending(&CI(c)->out) == 0 && buf_pending(&CI(c)->tls_out) == 0)
		conn_switch_to_tls(c); /* the answer went out already (its policy flushed it) */
}

const size_t conn_size = sizeof(struct conn_impl);

int conn_worker_init(struct worker *w)
{
	struct net_worker *nw = net_worker(w);
	nw->conn_slab.size = conn_size;
	nw->ident_slab.size = CONN_IDENT_BYTES;
	pthread_mutex_init(&nw->conns_lock, NULL);
	nw->hooks = &conn_worker_hooks;
	nw->reservefd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	nw->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (nw->wakefd < 0) {
		log_error("worker %d: %s", w->id, strerror(errno));
		return -1;
	}
	return 0;
}

void conn_worker_free(struct worker *w)
{
	struct net_worker *nw = net_worker(w);
	for (int j = 0; j < nw->nlisten; j++)
		close(nw->listenfd[j]);
	slab_free(&nw->conn_slab);
	slab_free(&nw->ident_slab);
	pthread_mutex_destroy(&nw->conns_lock);
	buf_free(&nw->tls_in);
	buf_free(&nw->sasl_scratch);
	if (nw->engine)
		nw->engine->teardown(w); /* the thread's did, unless it never ran */
	if (nw->wakefd > 0)
		close(nw->wakefd);
	if (nw->reservefd >= 0)
		close(nw->reservefd);
}

void conn_op_begin(struct conn *c, unsigned kind)
{
	STAT_ADD(CI(c)->ops_taken, 1);
	CI(c)->op_kind = (uint8_t)(kind + 1);
}

void conn_op_done(struct conn *c)
{
	STAT_ADD(CI(c)->ops_answered, 1);
	CI(c)->op_kind = 0;
}

void conn_close_after(struct conn *c, const char *why)
{
	CI(c)->closing = true;
	if (why)
		CI(c)->close_why = why;
}

bool conn_closing(const struct conn *c)
{
	return CI(c)->closing;
}

bool conn_tls_active(const struct conn *c)
{
	return c->tls || CI(c)->tls_starting;
}

void conn_task_drop(struct conn_task **slot)
{
	struct conn_task *t = *slot;
	*slot = NULL;
	if (t)
		t->free(t);
}

bool conn_task_cancel(struct conn *c, int32_t msgid)
{
	struct conn_task **slots[] = {&c->task, &c->parked};
	for (size_t i = 0; i < 2; i++)
		if (*slots[i] && (*slots[i])->msgid == msgid) {
			conn_task_drop(slots[i]);
			return true;
		}
	return false;
}

void conn_close(struct conn *c, const char *why)
{
	struct worker *w = c->w;
	struct net_worker *nw = net_worker(w);
	log_debug("conn fd=%d from %s closed: %s", c->fd, c->peer, why);
	if (CI(c)->proxy_wait)
		conn_log_accept(c); /* closed before its header: from= is who connected */
	conn_log_close(c, why);
	conn_task_drop(&c->task);
	conn_task_drop(&c->parked);
	if (CI(c)->in_ready) {
		for (struct conn_impl **p = &nw->ready; *p; p = &(*p)->ready_next)
			if (*p == CI(c)) {
				*p = CI(c)->ready_next;
				break;
			}
	}
	pthread_mutex_lock(&nw->conns_lock);
	DLIST_UNLINK(nw->conns, CI(c)); /* before its descriptor and identity go: conn_list */
	pthread_mutex_unlock(&nw->conns_lock);
	nw->input_bytes -= CI(c)->in_counted;
	/* What goes back to malloc, for the sweep's malloc_trim: the buffers, and an estimate of
	 * a TLS session (OpenSSL's state: 8-15 KB idle, about 50 KB in a handshake; bench/idle.sh).
	 */
	nw->trim_bytes += CI(c)->in.cap + CI(c)->out.cap + CI(c)->tls_out.cap + c->trace.text.cap +
	                  (c->tls ? CONN_TLS_SESSION_BYTES : 0);
	conn_tls_end(c);
	conn_sasl_free(c);
	engine_close(w, c->fd);
	worker_fd_freed(w);
	buf_free(&CI(c)->in);
	buf_free(&CI(c)->out);
	conn_clear_identity(c);
	buf_free(&c->trace.text);
	conn_release_peer(c);
	STAT_ADD(w->stats.connections_current, (uint64_t)-1);
	slab_put(&nw->conn_slab, c);
}

size_t conn_release_buffers(struct conn *c)
{
	if (c->task || c->blocked || buf_pending(&CI(c)->in) || buf_pending(&CI(c)->out))
		return 0;
	if (buf_pending(&CI(c)->tls_out))
		return 0;
	size_t freed = CI(c)->in.cap + CI(c)->out.cap + CI(c)->tls_out.cap;
	if (c->tls)
		tls_session_idle(c->tls);
	buf_free(&CI(c)->in);
	buf_free(&CI(c)->out);
	buf_free(&CI(c)->tls_out);
	return freed;
}

bool conn_check_timeouts(struct conn *c, time_t now)
{
	if (CI(c)->proxy_wait && conn_proxy_timed_out(c, now)) {
		conn_close(c, "PROXY header timeout");
		return true;
	}
	int hs = server_tls_handshake_timeout(c->w->srv);
	/* The clock counts whole seconds: "more than N" is at least N seconds of real time,
	 * where ">= N" is already true a moment after a second begins (idle_timeout = 1
	 * closed a client between its bind's answer and its search). */
	if (c->tls && !tls_handshake_done(c->tls) && now - CI(c)->tls_since > hs) {
		STAT_ADD(c->w->stats.tls.failures, 1);
		log_info("conn fd=%d from %s: TLS handshake not done in %d s "
		         "(tls_handshake_timeout); closing",
		         c->fd, c->peer, hs);
		conn_close(c, "TLS handshake timeout");
		return true;
	}
	/* A request must arrive whole within pdu_timeout of its first byte; while a task runs or
	 * the socket is full the server is the one waiting, and the clock stops. */
	int pt = server_pdu_timeout(c->w->srv);
	if (CI(c)->in_since && (c->task || c->blocked))
		CI(c)->in_since = now;
	else if (pt && CI(c)->in_since && now - CI(c)->in_since > pt) {
		STAT_ADD(c->w->stats.pdu_timeouts, 1);
		log_info("conn fd=%d from %s: %zu bytes of a request not completed in %d s "
		         "(pdu_timeout)",
		         c->fd, c->peer, buf_pending(&CI(c)->in), pt);
		conn_disconnect(c, LDAP_PROTOCOL_ERROR, "request not completed within pdu_timeout");
		conn_close(c, "request timeout");
		return true;
	}
	int idle = server_idle_timeout(c->w->srv);
	if (idle && !c->task && !c->blocked && buf_pending(&CI(c)->out) == 0 &&
	    now - CI(c)->last_request > idle) {
		log_debug("conn fd=%d from %s: no request for %d s (idle_timeout)", c->fd, c->peer,
		          idle);
		conn_close(c, "idle timeout");
		return true;
	}
	int timeout = server_write_timeout(c->w->srv);
	if (!c->blocked || timeout == 0)
		return false;
	/* EPOLLOUT comes only once a good part of the kernel's send queue drained; a
	 * client that reads slowly still shrinks the queue, and that is progress. */
	int queued;
	if (ioctl(c->fd, SIOCOUTQ, &queued) == 0) {
		if (queued < CI(c)->outq_last)
			CI(c)->blocked_since = now;
		CI(c)->outq_last = queued;
	}
	if (now - CI(c)->blocked_since < timeout)
		return false;
	log_info("conn fd=%d from %s: client has not read for %d s (write_timeout); closing", c->fd,
	         c->peer, timeout);
	conn_close(c, "write timeout");
	return true;
}

void conn_event(struct conn *c, uint32_t events)
{
	if (events & EPOLLOUT) {
		c->blocked = false;
		conn_flush(c, CI(c)->out_more ? MSG_MORE : 0);
		if (!c->blocked && !CI(c)->closing) {
			if (c->task)
				c->task->resume(c);
			if (!c->task && !c->blocked)
				conn_process_input(c);
		}
		conn_update_events(c);
	}
	if ((events & (EPOLLHUP | EPOLLERR)) && !conn_may_read(c)) {
		conn_close(c, "client hung up"); /* nothing more can be read or answered */
		return;
	}
	if (!CI(c)->closing && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && conn_may_read(c)) {
		ssize_t n = conn_read_some(c);
		if (n == 0 || n == -1) {
			conn_close(c, n == 0 ? "client closed" : "read error");
			return;
		}
		if (n > 0 && (!CI(c)->proxy_wait || conn_proxy_input(c) > 0))
			conn_process_input(c);
		conn_update_events(c);
	}
	conn_account_input(c);
	if (net_worker(c->w)->input_bytes > conn_input_limit(c->w))
		conn_shed_input(c->w);
	if (CI(c)->closing)
		conn_close(c, CI(c)->close_why ? CI(c)->close_why : "closed by server");
}

void conn_resume(struct conn *c)
{
	CI(c)->in_ready = false;
	if (c->task && !c->blocked && !CI(c)->closing)
		c->task->resume(c);
	if (!c->task && !c->blocked && !CI(c)->closing)
		conn_process_input(c);
	conn_update_events(c);
	conn_account_input(c);
	if (CI(c)->closing)
		conn_close(c, CI(c)->close_why ? CI(c)->close_why : "closed by server");
}

/* --- the hooks the event loop calls (worker.h) ---------------------------------------- */

static void hook_event(void *handler, uint32_t events)
{
	conn_event(handler, events);
}

static void hook_run_ready(struct worker *w)
{
	conn_wake_due(w); /* those whose time has come join the ready list */
	struct conn_impl *list = net_worker(w)->ready;
	net_worker(w)->ready = NULL;
	while (list) {
		struct conn_impl *ci = list;
		list = ci->ready_next;
		conn_resume(&ci->pub);
	}
}

/* Heap bytes given back to malloc (buffers of idle connections, closed connections) that
 * make it worth returning memory to the system. */
#define CONN_TRIM_BYTES (1024 * 1024)
#define CONN_TRIM_SETTLED_BYTES (64 * 1024)

static void hook_sweep(struct worker *w, time_t now)
{
	struct net_worker *nw = net_worker(w);
	size_t freed = 0;
	for (struct conn_impl *ci = nw->conns, *next; ci; ci = next) {
		next = ci->next;
		struct conn *c = &ci->pub;
		if (conn_check_timeouts(c, now))
			continue;
		conn_log_sweep(c, now);
		/* TLS 1.3 tickets held for a first response that did not come: send them now. */
		if (c->tls && !c->blocked && !CI(c)->closing && tls_has_output(c->tls) &&
		    conn_flush(c, 0) < 0) {
			conn_close(c, "send error");
			continue;
		}
		freed += conn_release_buffers(c);
	}
	/* Hand what idle and closed connections gave back to the system, not just to malloc
	 * (free returns only the top of a heap; malloc_trim also the free pages inside it). */
	nw->trim_bytes += freed;
	/* Also once a burst of closes has ended (nothing more given back in a second), so that
	 * the tail of the burst, which came after a trim, is returned too. */
	bool settled = nw->trim_bytes >= CONN_TRIM_SETTLED_BYTES && nw->trim_bytes == nw->trim_last;
	if (nw->trim_bytes >= CONN_TRIM_BYTES || settled) {
		mem_trim();
		nw->trim_bytes = 0;
	}
	nw->trim_last = nw->trim_bytes;
}

static void hook_stop(struct worker *w)
{
	while (net_worker(w)->conns)
		conn_close(&net_worker(w)->conns->pub, "server stopping");
}

const struct worker_hooks conn_worker_hooks = {
    .accepted = conn_accept,
    .event = hook_event,
    .run_ready = hook_run_ready,
    .sweep = hook_sweep,
    .stop = hook_stop,
};
