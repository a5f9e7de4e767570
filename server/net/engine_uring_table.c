/*
 * The io_uring engine's tables (engine_uring.h): socket states in slots of mmap'd
 * blocks, found by descriptor through slot_of (a block is unmapped when all of its
 * sockets are gone, so memory goes back after many connections close), the pool of send
 * buffers, and the ring with its provided receive buffers (liburing 2.3 has no
 * io_uring_setup_buf_ring: the buffer ring is mapped and registered by hand).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "protocol/array.h"
#include "protocol/buf.h"
#include "server/mem_trim.h"
#include "server/net/engine_uring.h"

struct usock *uring_slot(struct uring_state *s, int slot)
{
	if (slot < 0 || slot / URING_BLOCK >= s->nblocks || !s->blocks[slot / URING_BLOCK].socks)
		return NULL;
	return &s->blocks[slot / URING_BLOCK].socks[slot % URING_BLOCK];
}

struct usock *uring_sock(struct uring_state *s, int fd)
{
	if (fd < 0 || fd >= s->nslot_of || !s->slot_of[fd])
		return NULL;
	return uring_slot(s, s->slot_of[fd] - 1);
}

/* An empty buffer goes back to the pool (or is freed): idle sockets hold no memory. */
void uring_pool_put(struct uring_state *s, struct buf *b)
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
void uring_pool_get(struct uring_state *s, struct buf *b)
{
	uring_pool_get_within(s, b, SIZE_MAX);
}

void uring_pool_get_within(struct uring_state *s, struct buf *b, size_t max_cap)
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

/* Grows *a (of *n ints, the new ones 0) to hold index i. Returns 0 or -1. */
static int grow_ints(int **a, int *n, int i)
{
	if (i < *n)
		return 0;
	int m = *n ? *n : 64;
	while (m <= i)
		m *= 2;
	int *t = realloc(*a, (size_t)m * sizeof(*t));
	if (!t)
		return -1;
	memset(t + *n, 0, (size_t)(m - *n) * sizeof(*t));
	*a = t;
	*n = m;
	return 0;
}

/* The lowest free slot, its block's table entry made if need be; -1: out of memory. */
static int free_slot(struct uring_state *s)
{
	int b = 0;
	while (b < s->nblocks && s->blocks[b].used == UINT64_MAX)
		b++;
	int had = s->nblocks;
	if (!ARRAY_ROOM_FOR(s->blocks, s->nblocks, b, 16))
		return -1;
	memset(s->blocks + had, 0, (size_t)(s->nblocks - had) * sizeof(*s->blocks));
	return b * URING_BLOCK + __builtin_ctzll(~s->blocks[b].used);
}

struct usock *uring_sock_new(struct uring_state *s, int fd)
{
	struct usock *u = uring_sock(s, fd);
	if (u)
		return u;
	int slot;
	if (fd < 0 || grow_ints(&s->slot_of, &s->nslot_of, fd) < 0 || (slot = free_slot(s)) < 0)
		return NULL;
	int b = slot / URING_BLOCK;
	if (!s->blocks[b].socks) {
		void *m = mmap(NULL, URING_BLOCK_BYTES, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		s->blocks[b].socks = m;
	}
	s->blocks[b].used |= UINT64_C(1) << (slot % URING_BLOCK);
	s->slot_of[fd] = slot + 1;
	u = uring_slot(s, slot);
	u->slot = slot;
	u->fd = fd;
	return u;
}

void uring_sock_dead(struct uring_state *s, struct usock *u)
{
	int b = u->slot / URING_BLOCK;
	s->slot_of[u->fd] = 0;
	s->blocks[b].used &= ~(UINT64_C(1) << (u->slot % URING_BLOCK));
	if (s->blocks[b].used)
		return;
	for (int i = 0; i < URING_BLOCK; i++)
		if (s->blocks[b].socks[i].on_dirty || s->blocks[b].socks[i].on_pending)
			return; /* still listed: unmapped when it next empties */
	munmap(s->blocks[b].socks, URING_BLOCK_BYTES); /* many connections closed: memory back */
	s->blocks[b].socks = NULL;
	mem_trim();
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
		for (int i = 0; s->blocks[b].socks && i < URING_BLOCK; i++) {
			struct usock *u = &s->blocks[b].socks[i];
			if (u->live)
				close(u->fd);
			buf_free(&u->spill);
			buf_free(&u->staged);
			buf_free(&u->flight);
		}
		if (s->blocks[b].socks)
			munmap(s->blocks[b].socks, URING_BLOCK_BYTES);
	}
	free(s->blocks);
	free(s->slot_of);
	while (s->npool > 0)
		buf_free(&s->pool[--s->npool]);
	munmap(s->br, URING_BUFS * sizeof(struct io_uring_buf));
	free(s->bufs);
}
