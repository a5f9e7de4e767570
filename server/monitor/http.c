/* The operators' HTTP endpoint: see http.h. */
#include "server/monitor/http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/clock.h"
#include "server/copy_digest.h"
#include "server/log.h"
#include "server/net/tls_socket.h"
#include "server/monitor/http_link.h"
#include "server/monitor/metrics.h"
#include "server/monitor/snapshot.h"
#include "server/server.h"

struct http_conn {
	struct http_link link; /* link.fd -1: free */
	short events;          /* what poll waits for: POLLIN, POLLOUT during a TLS handshake */
	bool shaken;           /* the TLS handshake is done (plain HTTP: at once) */
	struct sockaddr_storage peer;
	int64_t deadline_ms;
	size_t len;
	char req[HTTP_MAX_REQUEST];
};

struct http_server {
	struct server *srv;
	struct tls_server *tls; /* metrics_tls: the server's context (srv->tls), else NULL */
	int lfd, wakefd;
	pthread_t thread;
	struct http_counts counts; /* the thread's own */
	const char *not_ready;     /* the code /readyz last answered, NULL: ready (logged) */
	/* Out of descriptors (EMFILE, ENFILE), a pending connection would make the listener
	 * readable for ever: spare (a descriptor kept for it, -1 once lost to another thread)
	 * is closed to accept it and answer 503; without one the listener rests until
	 * rest_until_ms. at_limit: the condition was logged, once until an accept succeeds. */
	int spare;
	int64_t rest_until_ms;
	bool at_limit;
	struct http_conn conns[HTTP_MAX_CONNS];
	struct snapshot_streams *snapshots; /* /snapshot's copies (snapshot.h), or NULL */
};

static int64_t now_ms(void)
{
	return (int64_t)(clock_ns() / 1000000);
}

static void answer(struct http_server *h, struct http_link *l, int code, const char *reason,
                   const char *type, const char *body, size_t len, bool head_only,
                   const char *extra)
{
	char hdr[512];
	int n = snprintf(hdr, sizeof(hdr),
	                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
	                 "Connection: close\r\n\r\n",
	                 code, reason, type, len, extra ? extra : "");
	/* The answer (a few KiB, which the socket's buffer takes at once) is sent with a
	 * bound all the same; the client gets what went out by then. */
	http_link_blocking(l, HTTP_WRITE_TIMEOUT_MS);
	if (http_link_send(l, hdr, (size_t)n) == 0 && !head_only)
		http_link_send(l, body, len);
	h->counts.requests++;
}

static void text_answer(struct http_server *h, struct http_link *l, int code, const char *reason,
                        const char *body, bool head_only, const char *extra)
{
	answer(h, l, code, reason, "text/plain; charset=utf-8", body, strlen(body), head_only,
	       extra);
}

static void http_conn_close(struct http_conn *c)
{
	http_link_close(&c->link);
	c->len = 0;
}

/* The value of c's request header name (case aside) into value[0..cap), without the spaces
 * around it: true, or false when the request has none (or a longer one). The first wins. */
static bool request_header(const struct http_conn *c, const char *name, char *value, size_t cap)
{
	size_t nlen = strlen(name);
	const char *p = memchr(c->req, '\n', c->len), *end = c->req + c->len;
	while (p && ++p < end && *p != '\r' && *p != '\n') {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			return false;
		if ((size_t)(eol - p) > nlen && p[nlen] == ':' && strncasecmp(p, name, nlen) == 0) {
			const char *v = p + nlen + 1, *ve = eol;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if ((size_t)(ve - v) >= cap)
				return false;
			memcpy(value, v, (size_t)(ve - v));
			value[ve - v] = '\0';
			return true;
		}
		p = eol;
	}
	return false;
}

/* /snapshot (snapshot.h): a stream's thread takes c's socket, or the answer is made here.
 * The checksum is the one the request asks for by COPY_DIGEST_ASK, if known; else SHA-256. */
static void serve_snapshot(struct http_server *h, struct http_conn *c, bool head)
{
	enum copy_digest_kind digest = COPY_DIGEST_SHA256;
	char asked[32];
	if (request_header(c, COPY_DIGEST_ASK, asked, sizeof(asked)))
		(void)copy_digest_by_name(asked, &digest);
	switch (snapshot_serve(h->srv, &h->snapshots, &c->link, &c->peer, head, digest)) {
	case SNAPSHOT_STREAMING:
		h->counts.requests++; /* c->link is the stream's now */
		break;
	case SNAPSHOT_FORBIDDEN:
		text_answer(h, &c->link, 403, "Forbidden",
		            "/snapshot: this address is not in snapshot_allow\n", head, NULL);
		break;
	case SNAPSHOT_BUSY:
		h->counts.busy++;
		text_answer(h, &c->link, 503, "Service Unavailable",
		            "/snapshot: as many copies as allowed are under way; try again\n", head,
		            "Retry-After: 10\r\n");
		break;
	case SNAPSHOT_HEAD:
		answer(h, &c->link, 200, "OK", "application/octet-stream", "", 0, true, NULL);
		break;
	case SNAPSHOT_FAILED:
		text_answer(h, &c->link, 500, "Internal Server Error",
		            "/snapshot failed (logged)\n", head, NULL);
		break;
	}
}

/* A whole request is in c: its line read, its headers skipped (no body is read). */
static void serve(struct http_server *h, struct http_conn *c)
{
	char method[16], target[1024], version[16];
	char *eol = memchr(c->req, '\n', c->len);
	size_t linelen = (size_t)(eol - c->req);
	char line[HTTP_MAX_REQUEST];
	memcpy(line, c->req, linelen);
	line[linelen] = '\0';
	if (linelen && line[linelen - 1] == '\r')
		line[linelen - 1] = '\0';
	char extra;
	if (sscanf(line, "%15s %1023s %15s %c", method, target, version, &extra) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0 || target[0] != '/') {
		text_answer(h, &c->link, 400, "Bad Request", "bad request line\n", false, NULL);
		return;
	}
	bool head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0) {
		text_answer(h, &c->link, 405, "Method Not Allowed", "only GET and HEAD\n", false,
		            "Allow: GET, HEAD\r\n");
		return;
	}
	char *q = strchr(target, '?');
	if (q)
		*q = '\0';
	if (strcmp(target, "/healthz") == 0) {
		text_answer(h, &c->link, 200, "OK", "ok\n", head, NULL);
	} else if (strcmp(target, "/readyz") == 0) {
		/* A code only: the reason in words may name the replication bind DN or an
		 * entry, which cn=monitor and the log tell the operators. */
		struct readiness ready;
		char body[80];
		bool is_ready = metrics_ready(h->srv, &ready);
		/* The reason in words goes to the log, once a change (health checks ask often). */
		if (!is_ready && h->not_ready != ready.code)
			log_warning("/readyz: not ready (%s): %s", ready.code, ready.why);
		else if (is_ready && h->not_ready)
			log_info("/readyz: ready again");
		h->not_ready = is_ready ? NULL : ready.code;
		if (is_ready) {
			text_answer(h, &c->link, 200, "OK", "ready\n", head, NULL);
		} else {
			snprintf(body, sizeof(body), "not ready: %s\n", ready.code);
			text_answer(h, &c->link, 503, "Service Unavailable", body, head, NULL);
		}
	} else if (strcmp(target, "/metrics") == 0) {
		struct buf out = {0};
		h->counts.requests++; /* this one counts in its own text */
		if (metrics_text(h->srv, &h->counts, &out) < 0)
			text_answer(h, &c->link, 500, "Internal Server Error", "out of memory\n",
			            head, NULL);
		else
			answer(h, &c->link, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
			       (const char *)out.data, out.len, head, NULL);
		h->counts.requests--;
		buf_free(&out);
	} else if (strcmp(target, "/snapshot") == 0) {
		serve_snapshot(h, c, head);
	} else {
		text_answer(h, &c->link, 404, "Not Found",
		            "not found: /metrics, /healthz, /readyz, /snapshot\n", head, NULL);
	}
}

/* Whether c holds the end of the headers: an empty line (CRLF CRLF, or bare LFs as curl
 * never sends but a hand-typed request may). */
static bool headers_whole(const struct http_conn *c)
{
	for (size_t i = 0; i + 1 < c->len; i++)
		if (c->req[i] == '\n' &&
		    (c->req[i + 1] == '\n' ||
		     (c->req[i + 1] == '\r' && i + 2 < c->len && c->req[i + 2] == '\n')))
			return true;
	return false;
}

/* Reads what c's client sent, all that waits (a TLS session may hold more than the socket
 * shows); answers once the headers are whole. */
static void conn_read(struct http_server *h, struct http_conn *c)
{
	for (;;) {
		ssize_t n = http_link_recv(&c->link, c->req + c->len, sizeof(c->req) - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			http_conn_close(c);
			return;
		}
		c->len += (size_t)n;
		if (headers_whole(c)) {
			serve(h, c);
			http_conn_close(c); /* nothing when a /snapshot stream took the link */
			return;
		}
		if (c->len == sizeof(c->req)) {
			h->counts.too_large++;
			text_answer(h, &c->link, 431, "Request Header Fields Too Large",
			            "request line and headers over 8192 bytes\n", false, NULL);
			http_conn_close(c);
			return;
		}
	}
}

/* Poll found c's socket ready: its TLS handshake goes on as far as the socket allows
 * (never waiting: one slow client holds no other), then its request is read. */
static void conn_ready(struct http_server *h, struct http_conn *c)
{
	if (!c->shaken) {
		char peer[64] = "?";
		getnameinfo((const struct sockaddr *)&c->peer, sizeof(c->peer), peer, sizeof(peer),
		            NULL, 0, NI_NUMERICHOST);
		int want = http_link_handshake(&c->link, peer);
		if (want < 0) {
			http_conn_close(c);
			return;
		}
		c->events = want ? (short)want : POLLIN;
		if (want)
			return;
		c->shaken = true;
	}
	conn_read(h, c);
}

/* A connection accepted but not kept (fd): answered 503 with body over plain HTTP, closed
 * without a word over TLS (a handshake here could wait on the client). */
static void refuse(struct http_server *h, int fd, const char *body)
{
	h->counts.busy++;
	struct http_link l = {.fd = fd};
	if (!h->tls)
		text_answer(h, &l, 503, "Service Unavailable", body, false, NULL);
	http_link_close(&l);
}

/* accept failed with err (EMFILE or ENFILE): the pending connection is refused with the
 * spare descriptor, or, the spare lost, the listener rests HTTP_FD_REST_MS. */
static void at_fd_limit(struct http_server *h, int err)
{
	if (!h->at_limit)
		log_error("metrics_listen: accept: %s; answering 503 until a descriptor is free",
		          strerror(err));
	h->at_limit = true;
	int fd = -1;
	if (h->spare >= 0) {
		close(h->spare);
		fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC);
	}
	if (fd >= 0)
		refuse(h, fd, "out of file descriptors\n");
	h->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (h->spare < 0 || fd < 0)
		h->rest_until_ms = now_ms() + HTTP_FD_REST_MS;
}

static void accept_one(struct http_server *h)
{
	struct sockaddr_storage peer = {0};
	socklen_t peerlen = sizeof(peer);
	int fd = accept4(h->lfd, (struct sockaddr *)&peer, &peerlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE))
		at_fd_limit(h, errno);
	if (fd < 0)
		return;
	if (h->at_limit && h->spare >= 0) {
		h->at_limit = false;
		log_info("metrics_listen: accepting again");
	}
	for (int i = 0; i < HTTP_MAX_CONNS; i++) {
		struct http_conn *c = &h->conns[i];
		if (c->link.fd >= 0)
			continue;
		c->link = (struct http_link){.fd = fd};
		if (h->tls && !(c->link.tls = tls_socket_new(h->tls, fd))) {
			http_conn_close(c); /* logged */
			return;
		}
		c->shaken = !h->tls;
		c->events = POLLIN; /* a TLS client speaks first too (ClientHello) */
		c->peer = peer;
		c->len = 0;
		c->deadline_ms = now_ms() + HTTP_READ_TIMEOUT_MS;
		return;
	}
	refuse(h, fd, "too many connections\n");
}

static void *http_main(void *arg)
{
	struct http_server *h = arg;
	struct pollfd p[2 + HTTP_MAX_CONNS];
	for (;;) {
		int n = 0, idx[HTTP_MAX_CONNS];
		p[n++] = (struct pollfd){.fd = h->wakefd, .events = POLLIN};
		int64_t now = now_ms(), wait = -1;
		/* A resting listener is left out (poll skips a negative fd) until its time. */
		bool rest = h->rest_until_ms > now;
		p[n++] = (struct pollfd){.fd = rest ? -1 : h->lfd, .events = POLLIN};
		if (rest)
			wait = h->rest_until_ms - now;
		for (int i = 0; i < HTTP_MAX_CONNS; i++) {
			struct http_conn *c = &h->conns[i];
			if (c->link.fd < 0)
				continue;
			if (c->deadline_ms <= now) {
				h->counts.timeouts++;
				if (c->shaken) /* else closed without a word: no session to say it
				                */
					text_answer(h, &c->link, 408, "Request Timeout",
					            "the request did not arrive within 5 seconds\n",
					            false, NULL);
				http_conn_close(c);
				continue;
			}
			if (wait < 0 || c->deadline_ms - now < wait)
				wait = c->deadline_ms - now;
			idx[n - 2] = i;
			p[n++] = (struct pollfd){.fd = c->link.fd, .events = c->events};
		}
		if (poll(p, (nfds_t)n, (int)wait) < 0 && errno != EINTR) {
			log_error("metrics_listen: poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			break; /* http_stop */
		for (int j = 2; j < n; j++)
			if (p[j].revents)
				conn_ready(h, &h->conns[idx[j - 2]]);
		if (p[1].revents & POLLIN)
			accept_one(h);
	}
	return NULL;
}

int http_start(struct server *srv)
{
	const struct metrics_addr *a = &srv->cfg.metrics_listen;
	if (!a->set)
		return 0;
	if (srv->cfg.metrics_tls && !srv->tls) { /* config.c refuses it: tls_setup was not run */
		log_error("metrics_tls = yes but TLS is not set up (tls_cert_file)");
		return -1;
	}
	struct http_server *h = calloc(1, sizeof(*h));
	if (!h) {
		log_error("metrics_listen: out of memory");
		return -1;
	}
	h->srv = srv;
	h->tls = srv->cfg.metrics_tls ? srv->tls : NULL;
	for (int i = 0; i < HTTP_MAX_CONNS; i++)
		h->conns[i].link.fd = -1;
	h->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int one = 1;
	h->wakefd = eventfd(0, EFD_CLOEXEC);
	h->lfd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd >= 0 && a->sa.ss_family == AF_INET6)
		setsockopt(h->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (h->lfd >= 0)
		setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	const char *step = h->wakefd < 0 ? "eventfd" : h->lfd < 0 ? "socket" : NULL;
	if (!step && bind(h->lfd, (const struct sockaddr *)&a->sa, a->salen) < 0)
		step = "bind";
	if (!step && listen(h->lfd, 16) < 0)
		step = "listen";
	int rc = step ? errno : pthread_create(&h->thread, NULL, http_main, h);
	if (!step && rc)
		step = "starting its thread";
	if (step) {
		log_error("metrics_listen %s: %s: %s", a->text, step, strerror(rc));
		if (h->lfd >= 0)
			close(h->lfd);
		if (h->wakefd >= 0)
			close(h->wakefd);
		if (h->spare >= 0)
			close(h->spare);
		free(h);
		return -1;
	}
	srv->http = h;
	log_info("metrics_listen: serving /metrics, /healthz, /readyz%s on %s://%s",
	         srv->cfg.nsnapshot_allow ? ", /snapshot" : "", h->tls ? "https" : "http", a->text);
	return 0;
}

void http_stop(struct server *srv)
{
	struct http_server *h = srv->http;
	if (!h)
		return;
	uint64_t one = 1;
	if (write(h->wakefd, &one, sizeof(one)) < 0)
		log_error("metrics_listen: waking its thread: %s", strerror(errno));
	pthread_join(h->thread, NULL);
	snapshot_stop(h->snapshots);
	for (int i = 0; i < HTTP_MAX_CONNS; i++)
		http_link_close(&h->conns[i].link);
	close(h->lfd);
	close(h->wakefd);
	if (h->spare >= 0)
		close(h->spare);
	free(h);
	srv->http = NULL;
}
