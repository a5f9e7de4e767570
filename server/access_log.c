/* The access log: per-worker buffers written a few times a second (access_log.h). */
#include "server/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "server/clock.h"
#include "server/log.h"

/* Bytes waiting in a worker's buffer that make it write at once... */
#define ACCESS_LOG_FLUSH_BYTES (32 * 1024)
/* ...else the lines wait at most this long (a write per event-loop round cost as much as
 * the operations themselves under load). */
#define ACCESS_LOG_FLUSH_NS (200 * 1000 * 1000ULL)
/* The longest line kept whole; a longer one (a huge filter) is cut there. */
#define ACCESS_LOG_LINE_MAX 4096

/* The destination of srv->access_log: ACCESS_LOG_SYSLOG or a descriptor (-1: off). */
#define ACCESS_LOG_SYSLOG (-2)

static int open_spec(const char *spec, int *fd)
{
	if (strcmp(spec, "none") == 0 || spec[0] == '\0') {
		*fd = -1;
	} else if (strcmp(spec, "stderr") == 0) {
		*fd = STDERR_FILENO;
	} else if (strcmp(spec, "syslog") == 0) {
		openlog("minidir", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		*fd = ACCESS_LOG_SYSLOG;
	} else {
		*fd = open(spec, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (*fd < 0) {
			log_error("access_log %s: %s", spec, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int access_log_open(struct server *srv, const char *spec)
{
	int fd;
	srv->access_log_old = -1;
	if (open_spec(spec, &fd) < 0)
		return -1;
	__atomic_store_n(&srv->access_log, fd, __ATOMIC_RELEASE);
	if (fd != -1)
		log_info("access log: %s", spec);
	return 0;
}

/* Closes a destination no worker uses any more. */
static void close_dest(int fd)
{
	if (fd >= 0 && fd != STDERR_FILENO)
		close(fd);
}

/* Whether every running worker has noted generation gen: none still holds a descriptor
 * gen replaced, and its writes to one happened before (acquire, against its release). */
static bool workers_at(struct server *srv, unsigned gen)
{
	for (int i = 0; i < srv->nworkers; i++)
		if (srv->workers[i]->thread &&
		    __atomic_load_n(&srv->workers[i]->access_log_gen, __ATOMIC_ACQUIRE) != gen)
			return false;
	return true;
}

void access_log_reopen(struct server *srv, const char *spec)
{
	int fd;
	if (open_spec(spec, &fd) < 0) {
		log_error("SIGHUP: the access log keeps its destination");
		return;
	}
	/* The previous SIGHUP's: out of use once every worker has had a round since (each
	 * wakes at least once a second). */
	unsigned gen = __atomic_load_n(&srv->access_log_gen, __ATOMIC_RELAXED);
	if (srv->access_log_old >= 0 && srv->access_log_old != STDERR_FILENO) {
		for (int i = 0; i < 200 && !workers_at(srv, gen); i++)
			nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
		if (workers_at(srv, gen))
			close_dest(srv->access_log_old);
		else
			log_error("SIGHUP: a worker may still write to the access log's previous "
			          "descriptor: left open");
	}
	srv->access_log_old = __atomic_exchange_n(&srv->access_log, fd, __ATOMIC_ACQ_REL);
	__atomic_store_n(&srv->access_log_gen, gen + 1, __ATOMIC_RELEASE);
	log_info("SIGHUP: access log %s opened", spec);
}

void access_log_close(struct server *srv)
{
	close_dest(srv->access_log_old);
	close_dest(__atomic_exchange_n(&srv->access_log, -1, __ATOMIC_ACQ_REL));
	srv->access_log_old = -1;
}

bool access_log_on(struct server *srv)
{
	return __atomic_load_n(&srv->access_log, __ATOMIC_RELAXED) != -1;
}

/* "2026-11-30T13:51:14.123+00:00 ", the second's part formatted once per second per worker. */
static size_t stamp(struct worker *w, char *out, size_t cap)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != w->access_log_second) {
		log_stamp_parts(ts.tv_sec, w->access_log_stamp, w->access_log_zone);
		w->access_log_second = ts.tv_sec;
	}
	int n = snprintf(out, cap, "%s.%03ld%s ", w->access_log_stamp, ts.tv_nsec / 1000000,
	                 w->access_log_zone);
	return n < 0 ? 0 : (size_t)n;
}

void access_log_add(struct worker *w, const char *fmt, ...)
{
	if (!access_log_on(w->srv))
		return;
	char line[ACCESS_LOG_LINE_MAX];
	size_t n = stamp(w, line, sizeof(line));
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += (size_t)m < sizeof(line) - n - 1 ? (size_t)m : sizeof(line) - n - 2;
	line[n++] = '\n';
	if (buf_append(&w->access_log, line, n) == 0 &&
	    buf_pending(&w->access_log) >= ACCESS_LOG_FLUSH_BYTES)
		access_log_flush(w);
}

void access_log_tick(struct worker *w)
{
	/* From here on this worker loads the destination of generation gen or a later one,
	 * and what it wrote before is done: access_log_reopen may close the one gen replaced. */
	unsigned gen = __atomic_load_n(&w->srv->access_log_gen, __ATOMIC_ACQUIRE);
	if (gen != w->access_log_gen)
		__atomic_store_n(&w->access_log_gen, gen, __ATOMIC_RELEASE);
	if (buf_pending(&w->access_log) == 0)
		return;
	uint64_t now = clock_ns();
	if (now - w->access_log_flushed >= ACCESS_LOG_FLUSH_NS)
		access_log_flush(w);
}

void access_log_flush(struct worker *w)
{
	struct buf *b = &w->access_log;
	w->access_log_flushed = clock_ns();
	if (buf_pending(b) == 0)
		return;
	int fd = __atomic_load_n(&w->srv->access_log, __ATOMIC_ACQUIRE);
	const char *p = (const char *)b->data + b->off;
	size_t len = buf_pending(b);
	if (fd == ACCESS_LOG_SYSLOG) {
		for (const char *end = p + len, *nl; p < end; p = nl + 1) {
			nl = memchr(p, '\n', (size_t)(end - p));
			/* The timestamp stays out: syslog has its own. */
			const char *text = memchr(p, ' ', (size_t)(nl - p));
			syslog(LOG_INFO, "%.*s", (int)(nl - text - 1), text + 1);
		}
	} else if (fd >= 0) {
		while (len > 0) {
			ssize_t wr = write(fd, p, len);
			if (wr < 0 && errno == EINTR)
				continue;
			if (wr <= 0) {
				log_error("access log: write: %s",
				          wr < 0 ? strerror(errno) : "nothing written");
				break;
			}
			p += wr;
			len -= (size_t)wr;
		}
	}
	b->off = b->len = 0;
}
