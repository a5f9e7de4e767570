/*
 * The io_uring engine's tables (engine_uring.h): socket states by descriptor in
 * mmap'd blocks (unmapped when all of a block's sockets are gone, so memory goes
 * back after many connections close), the pool of send buffers, and the ring with
 * its provided receive buffers (liburing 2.3 has no io_uring_setup_buf_ring: the
 * buffer ring is mapped and registered by hand).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "server/net/engine_uring.h"

struct usock *uring_sock(struct uring_state *s, int fd)
{
	if (fd < 0 || fd / URING_BLOCK >= s->nblocks || !s->blocks[fd / URING_BLOCK])
		return NULL;
	return &s->blocks[fd / URING_BLOCK][fd % URING_BLOCK];
}

/* An empty buffer goes back to the pool (or is freed): idle sockets hold no memory. */
void pool_put(struct uring_state *s, struct buf *b)
{
	if (b->cap && b->cap <= ENGINE_SEND_HELD && s->npool < URING_POOL &&
	    s->pool_bytes + b->cap <= URING_POOL_BYTES) {
		b->off = b->len = 0;
		s->pool_bytes += b->cap;
		s->pool[s->npool++] = *b;
		memset(b, 0, sizeof(*b));
	} else {
		buf_free(b);
	}
}

/* Gives an empty buffer without capacity one from the pool: the last put, of any size. */
void pool_get(struct uring_state *s, struct buf *b)
{
	pool_get_within(s, b, SIZE_MAX);
}

void pool_get_within(struct uring_state *s, struct buf *b, size_t max_cap)
{
	if (b->cap)
		return;
	for (int i = s->npool - 1; i >= 0; i--) {
		if (s->pool[i].cap > max_cap)
			continue;
		*b = s->pool[i];
		s->pool[i] = s->pool[--s->npool];
		s->pool_bytes -= b->cap;
		return;
	}
}

struct usock *uring_sock_new(struct uring_state *s, int fd)
{
	int b = fd / URING_BLOCK;
	if (b >= s->nblocks) {
		int n = s->nblocks ? s->nblocks : 16;
		while (n <= b)
			n *= 2;
		struct usock **t = realloc(s->blocks, (size_t)n * sizeof(*t));
		int *l = t ? realloc(s->nlive, (size_t)n * sizeof(*l)) : NULL;
		if (!l) {
			if (t)
				s->blocks = t;
			return NULL;
		}
		memset(t + s->nblocks, 0, (size_t)(n - s->nblocks) * sizeof(*t));
		s->blocks = t;
		s->nlive = l;
		s->nblocks = n;
	}
	if (!s->blocks[b]) {
		void *m = mmap(NULL, URING_BLOCK_BYTES, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		s->blocks[b] = m;
		s->nlive[b] = 0;
	}
	s->nlive[b]++;
	return uring_sock(s, fd);
}

void uring_sock_dead(struct uring_state *s, struct usock *u)
{
	int b = u->fd / URING_BLOCK;
	if (--s->nlive[b] > 0)
		return;
	for (int i = 0; i < URING_BLOCK; i++)
		if (s->blocks[b][i].on_dirty || s->blocks[b][i].on_pending)
			return;                  /* still listed: unmapped when it next empties */
	munmap(s->blocks[b], URING_BLOCK_BYTES); /* many connections closed: memory back */
	s->blocks[b] = NULL;
	malloc_trim(0);
}

void uring_recycle(struct uring_state *s, unsigned bid)
{
	io_uring_buf_ring_add(s->br, s->bufs + (size_t)bid * URING_BUF_SIZE, URING_BUF_SIZE, bid,
	                      io_uring_buf_ring_mask(URING_BUFS), 0);
	io_uring_buf_ring_advance(s->br, 1);
}

int uring_ring_init(struct uring_state *s, char *why, size_t whylen)
{
	struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN,
	                            .cq_entries = 4 * URING_ENTRIES};
	int rc = io_uring_queue_init_params(URING_ENTRIES, &s->ring, &p);
	if (rc == -EINVAL) { /* a kernel before 5.19 knows no COOP_TASKRUN */
		memset(&p, 0, sizeof(p));
		rc = io_uring_queue_init_params(URING_ENTRIES, &s->ring, &p);
	}
	if (rc < 0) {
		snprintf(why, whylen, "io_uring_setup: %s", strerror(-rc));
		return -1;
	}
	const char *fail = NULL;
	if (!(p.features & IORING_FEAT_EXT_ARG))
		fail = "kernel without IORING_FEAT_EXT_ARG (5.11)";
	size_t ringsz = URING_BUFS * sizeof(struct io_uring_buf);
	if (!fail) {
		s->br =
		    mmap(NULL, ringsz, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
		s->bufs = malloc((size_t)URING_BUFS * URING_BUF_SIZE);
		if (s->br == MAP_FAILED || !s->bufs)
			fail = "out of memory for the receive buffers";
	}
	if (!fail) {
		/* liburing 2.3 has no io_uring_setup_buf_ring: registered by hand. */
		struct io_uring_buf_reg reg = {
		    .ring_addr = (uintptr_t)s->br, .ring_entries = URING_BUFS, .bgid = URING_BGID};
		io_uring_buf_ring_init(s->br);
		if ((rc = io_uring_register_buf_ring(&s->ring, &reg, 0)) < 0) {
			snprintf(why, whylen, "io_uring_register_buf_ring: %s", strerror(-rc));
			fail = why;
		}
	}
	if (fail) {
		if (fail != why)
			snprintf(why, whylen, "%s", fail);
		io_uring_queue_exit(&s->ring);
		if (s->br && s->br != MAP_FAILED)
			munmap(s->br, ringsz);
		free(s->bufs);
		return -1;
	}
	for (unsigned i = 0; i < URING_BUFS; i++)
		io_uring_buf_ring_add(s->br, s->bufs + (size_t)i * URING_BUF_SIZE, URING_BUF_SIZE,
		                      i, io_uring_buf_ring_mask(URING_BUFS), (int)i);
	io_uring_buf_ring_advance(s->br, URING_BUFS);
	return 0;
}

void uring_ring_exit(struct uring_state *s)
{
	io_uring_queue_exit(&s->ring); /* ends what is still in the kernel */
	for (int b = 0; b < s->nblocks; b++) {
		for (int i = 0; s->blocks[b] && i < URING_BLOCK; i++) {
			struct usock *u = &s->blocks[b][i];
			if (u->live)
				close(u->fd);
			buf_free(&u->spill);
			buf_free(&u->staged);
			buf_free(&u->flight);
		}
		if (s->blocks[b])
			munmap(s->blocks[b], URING_BLOCK_BYTES);
	}
	free(s->blocks);
	free(s->nlive);
	while (s->npool > 0)
		buf_free(&s->pool[--s->npool]);
	munmap(s->br, URING_BUFS * sizeof(struct io_uring_buf));
	free(s->bufs);
}
