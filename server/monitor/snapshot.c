/* /snapshot: a consistent copy of the database file for a new replica (snapshot.h). */
#include "server/monitor/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conf/ip_net.h"
#include "server/clock.h"
#include "server/copy_digest.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/monitor/http_link.h"
#include "server/server.h"

/* What a stream reads from the copy at a time and sends as one chunk, and the pipe the
 * copier writes into (Linux's default pipe holds 64 KiB: each of LMDB's 1 MiB writes of a
 * compacted copy would wake the stream sixteen times, for a 64 KiB chunk each). */
#define SNAPSHOT_CHUNK (1024 * 1024)
#define SNAPSHOT_PIPE_BYTES (1024 * 1024)

struct stream {
	struct server *srv;
	pthread_t thread;
	bool started;          /* thread is to be joined, then its link closed (the joiner's) */
	atomic_bool done;      /* the thread has finished (release): its slot may be reused */
	struct http_link link; /* the client's: the thread writes, the joiner closes */
	char peer[64];         /* for the log */
	int pipe_wr;           /* the copier's end of the pipe */
	int copy_rc;           /* db_copy_to_fd's result (read after joining the copier) */
	struct db_gen *gen;    /* the generation copied, one reference */
	enum copy_digest_kind digest; /* the checksum the client asked for */
};

struct snapshot_streams {
	struct stream s[SNAPSHOT_MAX_STREAMS];
};

static bool allowed(const struct config *cfg, const struct sockaddr_storage *peer)
{
	struct ip_addr a;
	ip_addr_from_sockaddr(&a, peer);
	for (int i = 0; i < cfg->nsnapshot_allow; i++)
		if (ip_net_holds(&cfg->snapshot_allow[i], &a))
			return true;
	return false;
}

static void *copier(void *arg)
{
	struct stream *st = arg;
	st->copy_rc = db_copy_to_fd(&st->gen->db, st->pipe_wr);
	close(st->pipe_wr);
	return NULL;
}

/* The copy's bytes from rd, sent as chunks; their checksum (st->digest) into hex. 0 at the
 * copy's end, -1 when the client went (or stalled) or memory ran out. */
static int pump(struct stream *st, int rd, uint64_t *bytes, char hex[COPY_DIGEST_HEX_MAX + 1])
{
	char *buf = malloc(SNAPSHOT_CHUNK);
	struct copy_digest md = {0};
	int rc = buf && copy_digest_start(&md, st->digest) == 0 ? 0 : -1;
	for (ssize_t n = 1; rc == 0 && n > 0;) {
		n = read(rd, buf, SNAPSHOT_CHUNK);
		if (n < 0 && errno == EINTR)
			n = 1;
		else if (n < 0)
			rc = -1;
		else if (n > 0) {
			char head[24];
			int hl = snprintf(head, sizeof(head), "%zx\r\n", (size_t)n);
			struct iovec v[3] = {{head, (size_t)hl}, {buf, (size_t)n}, {"\r\n", 2}};
			copy_digest_add(&md, buf, (size_t)n);
			*bytes += (uint64_t)n;
			rc = http_link_sendv(&st->link, v, 3);
		}
	}
	if (rc == 0)
		rc = copy_digest_hex(&md, hex);
	free(buf);
	copy_digest_free(&md);
	return rc;
}

/* Streams the copy: the headers, the chunks, and the trailers only if the copy ended
 * well (a reader sees a failed one cut short). */
static void stream_copy(struct stream *st)
{
	uint64_t start = clock_ns(), bytes = 0;
	char hex[COPY_DIGEST_HEX_MAX + 1] = "", head[256], trailer[200];
	int p[2];
	pthread_t cp;
	if (pipe2(p, O_CLOEXEC) < 0) {
		log_error("/snapshot for %s: pipe: %s", st->peer, strerror(errno));
		return;
	}
	st->pipe_wr = p[1];
	/* Refused (fs.pipe-max-size lowered, or pipe-user-pages-soft reached): the default
	 * pipe works, in smaller steps. */
	(void)fcntl(p[1], F_SETPIPE_SZ, SNAPSHOT_PIPE_BYTES);
	if (pthread_create(&cp, NULL, copier, st) != 0) {
		log_error("/snapshot for %s: starting the copy failed", st->peer);
		close(p[0]);
		close(p[1]);
		return;
	}
	snprintf(head, sizeof(head),
	         "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
	         "Transfer-Encoding: chunked\r\nTrailer: X-Snapshot-Bytes, %s\r\n"
	         "Connection: close\r\n\r\n",
	         copy_digest_trailer(st->digest));
	int rc = http_link_send(&st->link, head, strlen(head));
	if (rc == 0)
		rc = pump(st, p[0], &bytes, hex);
	close(p[0]); /* a copier still writing gets EPIPE and ends */
	pthread_join(cp, NULL);
	double secs = (double)(clock_ns() - start) / 1e9;
	if (st->copy_rc != 0) {
		log_error("/snapshot for %s: copying the database failed after %llu bytes: %s",
		          st->peer, (unsigned long long)bytes, db_error_text(st->copy_rc));
		return;
	}
	if (rc == 0) {
		snprintf(trailer, sizeof(trailer), "0\r\nX-Snapshot-Bytes: %llu\r\n%s: %s\r\n\r\n",
		         (unsigned long long)bytes, copy_digest_trailer(st->digest), hex);
		rc = http_link_send(&st->link, trailer, strlen(trailer));
	}
	if (rc == 0)
		log_info("/snapshot for %s: %llu bytes in %.1f s, %s %s", st->peer,
		         (unsigned long long)bytes, secs, copy_digest_name(st->digest), hex);
	else
		log_info("/snapshot for %s: the client went (or took nothing for %d s) after %llu "
		         "bytes, %.1f s",
		         st->peer, SNAPSHOT_STALL_MS / 1000, (unsigned long long)bytes, secs);
}

static void *stream_main(void *arg)
{
	struct stream *st = arg;
	stream_copy(st);
	http_link_end(&st->link); /* the end, for the client; the joiner closes the socket */
	db_gen_release(st->gen);
	st->gen = NULL;
	atomic_store_explicit(&st->done, true, memory_order_release);
	return NULL;
}

/* Joins a finished stream of slot s and closes its socket: the slot is free again. */
static void stream_reap(struct stream *s)
{
	pthread_join(s->thread, NULL);
	http_link_close(&s->link);
	s->started = false;
}

enum snapshot_answer snapshot_serve(struct server *srv, struct snapshot_streams **streams,
                                    struct http_link *link, const struct sockaddr_storage *peer,
                                    bool head, enum copy_digest_kind digest)
{
	if (!allowed(&srv->cfg, peer))
		return SNAPSHOT_FORBIDDEN;
	if (head)
		return SNAPSHOT_HEAD;
	if (!*streams && !(*streams = calloc(1, sizeof(**streams)))) {
		log_error("/snapshot: out of memory");
		return SNAPSHOT_FAILED;
	}
	struct stream *st = NULL;
	for (int i = 0; i < SNAPSHOT_MAX_STREAMS && !st; i++) {
		struct stream *s = &(*streams)->s[i];
		if (s->started && atomic_load_explicit(&s->done, memory_order_acquire))
			stream_reap(s);
		if (!s->started)
			st = s;
	}
	if (!st)
		return SNAPSHOT_BUSY;
	*st = (struct stream){
	    .srv = srv, .link = *link, .gen = db_gen_current(srv), .digest = digest};
	char host[64] = "?";
	getnameinfo((const struct sockaddr *)peer, sizeof(*peer), host, sizeof(host), NULL, 0,
	            NI_NUMERICHOST);
	snprintf(st->peer, sizeof(st->peer), "%s", host);
	http_link_blocking(&st->link, SNAPSHOT_STALL_MS);
	if (pthread_create(&st->thread, NULL, stream_main, st) != 0) {
		log_error("/snapshot for %s: starting its thread failed", st->peer);
		db_gen_release(st->gen);
		return SNAPSHOT_FAILED;
	}
	st->started = true;
	*link = (struct http_link){.fd = -1}; /* the stream's now */
	log_info("/snapshot: a copy of the database for %s", st->peer);
	return SNAPSHOT_STREAMING;
}

void snapshot_stop(struct snapshot_streams *streams)
{
	if (!streams)
		return;
	for (int i = 0; i < SNAPSHOT_MAX_STREAMS; i++) {
		struct stream *s = &streams->s[i];
		if (!s->started)
			continue;
		shutdown(s->link.fd, SHUT_RDWR); /* a send under way fails: the stream ends */
		stream_reap(s);
	}
	free(streams);
}
