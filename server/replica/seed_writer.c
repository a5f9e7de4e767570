/* A seed's copy written behind the transfer (seed_writer.h). */
#include "server/replica/seed_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct seed_writer {
	int fd;
	bool direct; /* fd is O_DIRECT: whole blocks only, from the aligned buffers */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf[2];
	size_t used[2];  /* used[fill]: gathered; used[1 - fill]: handed to the thread */
	int fill;        /* the buffer the caller gathers into */
	bool handed;     /* buf[1 - fill] is the thread's until it is written (under mu) */
	bool stop;       /* the caller has ended (under mu) */
	int err;         /* the first failed write's errno (under mu) */
	size_t unsynced; /* the thread's: bytes written since its last fdatasync */
};

/* Writes len bytes of p to fd; 0, or -1 with errno set. */
static int write_all(int fd, const char *p, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t k = write(fd, p + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct seed_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->handed && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->handed)
			break; /* stopped, nothing handed */
		int b = 1 - w->fill;
		pthread_mutex_unlock(&w->mu);
		int rc = write_all(w->fd, w->buf[b], w->used[b]);
		int err = rc < 0 ? errno : 0;
		w->unsynced += w->used[b];
		if (rc == 0 && w->unsynced >= SEED_WRITER_SYNC_BYTES) {
			/* Early, not for safety: the caller's fsync decides. */
			(void)fdatasync(w->fd);
			w->unsynced = 0;
		}
		pthread_mutex_lock(&w->mu);
		if (err && !w->err)
			w->err = err;
		w->used[b] = 0;
		w->handed = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Hands the gathered buffer's whole blocks (a file not O_DIRECT: all of it) to the thread,
 * once it is done with the other; the rest is carried to the other buffer. 0, or -1 with
 * errno set when a write has failed. */
static int hand_over(struct seed_writer *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->handed)
		pthread_cond_wait(&w->cv, &w->mu);
	int err = w->err;
	if (!err) {
		int f = w->fill;
		size_t whole = w->direct ? w->used[f] - w->used[f] % SEED_WRITER_ALIGN : w->used[f];
		memcpy(w->buf[1 - f], w->buf[f] + whole, w->used[f] - whole);
		w->used[1 - f] = w->used[f] - whole;
		w->used[f] = whole;
		w->fill = 1 - f;
		w->handed = whole > 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	if (err)
		errno = err;
	return err ? -1 : 0;
}

struct seed_writer *seed_writer_start(int fd)
{
	struct seed_writer *w = calloc(1, sizeof(*w));
	int fl = fcntl(fd, F_GETFL), err = ENOMEM;
	if (!w)
		return NULL;
	w->fd = fd;
	w->direct = fl >= 0 && (fl & O_DIRECT);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (posix_memalign((void **)&w->buf[0], SEED_WRITER_ALIGN, SEED_WRITER_BUFFER) != 0 ||
	    posix_memalign((void **)&w->buf[1], SEED_WRITER_ALIGN, SEED_WRITER_BUFFER) != 0 ||
	    (err = pthread_create(&w->thread, NULL, writer_main, w)) != 0) {
		free(w->buf[0]);
		free(w->buf[1]);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

int seed_writer_put(struct seed_writer *w, const char *p, size_t len)
{
	while (len > 0) {
		int f = w->fill;
		size_t k = SEED_WRITER_BUFFER - w->used[f];
		if (k > len)
			k = len;
		memcpy(w->buf[f] + w->used[f], p, k);
		w->used[f] += k;
		p += k, len -= k;
		if (w->used[f] == SEED_WRITER_BUFFER && hand_over(w) < 0)
			return -1;
	}
	return 0;
}

int seed_writer_end(struct seed_writer *w)
{
	int rc = hand_over(w);
	pthread_mutex_lock(&w->mu);
	while (w->handed)
		pthread_cond_wait(&w->cv, &w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	int err = w->err;
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	/* The tail short of a block (only a copy cut short has one: LMDB's are whole pages),
	 * through the page cache. */
	size_t tail = w->used[w->fill];
	if (rc == 0 && !err && tail) {
		int fl = fcntl(w->fd, F_GETFL);
		if (fl < 0 || fcntl(w->fd, F_SETFL, fl & ~O_DIRECT) < 0 ||
		    write_all(w->fd, w->buf[w->fill], tail) < 0)
			err = errno;
	}
	if (rc < 0 && !err)
		err = errno;
	free(w->buf[0]);
	free(w->buf[1]);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	if (err)
		errno = err;
	return err ? -1 : 0;
}
