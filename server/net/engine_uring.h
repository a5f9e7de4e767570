/*
 * The io_uring engine's own state (engine_uring.c), shared with its listeners'
 * accepts (engine_uring_listen.c) and its table and ring set-up
 * (engine_uring_table.c). Private to those three files.
 */
#ifndef MINIDIR_SERVER_NET_ENGINE_URING_H
#define MINIDIR_SERVER_NET_ENGINE_URING_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "server/net/engine.h"

#define URING_ENTRIES 512 /* submission queue; completions 4x */
/* Provided receive buffers per worker, and their size: a fixed 64 KiB that a burst of
 * requests on many connections touches once (a round with more data than that waits for
 * the next: the receives that found no buffer are armed again). A request or a TLS record
 * larger than a buffer arrives in several completions. */
#define URING_BUFS 16
#define URING_BUF_SIZE 4096
#define URING_BGID 0 /* their group */
#define URING_CQE_BATCH 256
#define URING_POOL 64 /* spare send buffers kept per worker */
/* What they may hold together, each at most ENGINE_SEND_HELD (a staged buffer's most):
 * a large response's 64 KiB sends (batch_bytes) grow staged buffers to 256 KiB, and
 * freeing those after each send had the next response fault their pages in again (a
 * fifth of the server's CPU on a 1000-entry search, bench/results/history.md). */
#define URING_POOL_BYTES (8 * ENGINE_SEND_HELD)
#define URING_BLOCK 64 /* socket states allocated together: one bit each in a uint64_t */
_Static_assert(URING_BLOCK == 64, "a block's slots in use are the bits of one uint64_t");
#define URING_BLOCK_BYTES (URING_BLOCK * sizeof(struct usock))

enum ud_kind {
	UD_WAKE = 1,
	UD_ACCEPT,
	UD_RECV,
	UD_SEND,
	UD_CANCEL,
	UD_LISTEN_POLL,
	UD_SHED,
	UD_SHED_CLOSE
};
#define UD(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))

struct usock {
	int fd;
	bool live;     /* between add and the real close */
	void *handler; /* NULL once the connection closed it */
	uint32_t want; /* EPOLLIN, EPOLLOUT */
	bool recv_armed, recv_cancelling, eof;
	bool resend;  /* the rest of a short send waits for a submission slot (flush; in padding) */
	int err;      /* errno of a failed recv or send (0: none) */
	bool sending; /* flight is in the kernel, or to go again (resend) */
	bool send_cancelling;
	bool on_dirty, on_pending;
	const unsigned char *chunk; /* a completion's bytes being handed up now */
	size_t chunk_len;
	struct buf spill;  /* received, not yet taken by the connection */
	struct buf staged; /* to send, not yet submitted */
	int staged_flags;  /* MSG_MORE when the staged bytes end inside a response */
	struct buf flight; /* the send in the kernel */
	int flight_flags;  /* its flags */
	int slot;          /* its place in the table: the tag of its completions (in padding) */
	struct usock *dirty_next, *pending_next;
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct usock) == 176,
               "a socket's state is 176 bytes (docs/reliability.md): a new field goes in padding");

struct uring_state {
	struct io_uring ring;
	struct worker_stats *stats; /* the worker's */
	struct io_uring_buf_ring *br;
	unsigned char *bufs;
	/* Socket states, URING_BLOCK to a block (mmap), each new socket in the lowest free
	 * slot: a worker's sockets fill its blocks densely, whatever their descriptors (a
	 * table by descriptor had each worker map pages for the others' descriptors too). */
	struct uring_block {
		struct usock *socks; /* URING_BLOCK of them (mmap), or NULL */
		uint64_t used;       /* a bit per slot in use; the block is unmapped when none is
		                      * and none of its sockets is listed */
	} * blocks;
	int nblocks;
	int *slot_of; /* by descriptor: its socket's slot + 1 (0: none), 4 bytes per descriptor
	               * number up to the highest this worker was given (rounded up to a power
	               * of two; the workers share one descriptor space, so each map may reach
	               * the process's highest descriptor) */
	int nslot_of;
	struct buf pool[URING_POOL]; /* spare send buffers: an idle socket holds none */
	int npool;
	size_t pool_bytes;     /* their capacity, at most URING_POOL_BYTES */
	struct usock *dirty;   /* to arm, cancel or send before the next wait */
	struct usock *pending; /* may have input or output room to report */
	bool listening;
	bool accept_armed[CONFIG_MAX_LISTEN];
	/* Out of descriptors: the listener rests, polled for a pending connection, instead of
	 * an accept that would fail at once (engine_uring_listen.c, rest_listener). */
	bool poll_armed[CONFIG_MAX_LISTEN];
	/* Out of descriptors, a pending connection is shed through fixed file slot li (an
	 * accept into it linked to its close): no descriptor of the process is freed for
	 * it, so no other worker's accept in the kernel can take one (engine_uring_listen.c,
	 * shed_one). direct: the slots are registered (else the spare descriptor sheds). */
	bool shed_armed[CONFIG_MAX_LISTEN];
	bool direct;
	bool wake_armed;
	/* A submission slot was wanted and none could be had, even after a submit (the kernel
	 * refused it: out of memory, say). What wanted it is done again before the next wait:
	 * sockets stay on the dirty list, the wake read and the listeners' accepts are armed
	 * again, and the wait does not block until then. */
	bool starved;
	uint64_t wake_value;
};

/* A free submission slot, submitting what is queued when the ring is full; NULL (and
 * s->starved set) when the kernel took none of it: the caller leaves its state as it was,
 * to be done again before the next wait. */
static inline struct io_uring_sqe *uring_sqe_get(struct uring_state *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
	if (!sqe) {
		STAT_ADD(s->stats->io_waits, 1);
		io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
		if (!sqe)
			s->starved = true;
	}
	return sqe;
}

/* Cancels what is in the kernel under tag target (idx: the index in the tag of the
 * cancel's own completion, which nothing waits for). Returns false when no submission
 * slot could be had (uring_sqe_get): nothing was cancelled. */
static inline bool uring_cancel(struct uring_state *s, uint64_t target, int idx)
{
	struct io_uring_sqe *sqe = uring_sqe_get(s);
	if (!sqe)
		return false;
	io_uring_prep_cancel64(sqe, target, 0);
	io_uring_sqe_set_data64(sqe, UD(UD_CANCEL, idx));
	return true;
}

/* engine_uring_listen.c: the listeners' accepts */

/* Arms (on) or cancels (off) what each listener of w has in the kernel. */
void uring_listen(struct uring_state *s, struct worker *w, bool on);
/* A completion of a listener (tag ud: UD_ACCEPT, UD_LISTEN_POLL, UD_SHED, UD_SHED_CLOSE),
 * with its result and flags: accepted sockets go up (up->accepted), and what the listener
 * waits on next is armed. */
void uring_listener_done(struct uring_state *s, struct worker *w, const struct engine_upcalls *up,
                         uint64_t ud, int res, unsigned flags);

/* engine_uring_table.c */

/* The state of socket fd, or NULL when it has none (never added, or its close finished). */
struct usock *uring_sock(struct uring_state *s, int fd);
/* The state in slot (a completion's tag), or NULL when its block is not mapped; a free
 * slot of a mapped block is returned too, not live (callers check live). */
struct usock *uring_slot(struct uring_state *s, int slot);
/* The state of socket fd: the one it has, or a new one in the lowest free slot (its block
 * mapped if need be; fields as last left, slot and fd set), or NULL (out of memory). */
struct usock *uring_sock_new(struct uring_state *s, int fd);
/* u's descriptor was closed: its slot is free, and its block is unmapped once none of it
 * is in use or listed. */
void uring_sock_dead(struct uring_state *s, struct usock *u);
/* An empty buffer goes back to the worker's pool (or is freed): idle sockets hold none. */
void uring_pool_put(struct uring_state *s, struct buf *b);
/* Gives b, empty and without capacity, a buffer from the pool if there is one. */
void uring_pool_get(struct uring_state *s, struct buf *b);
/* As uring_pool_get, but only a buffer of at most max_cap bytes (the last such one put); b is
 * left without capacity when the pool has none. */
void uring_pool_get_within(struct uring_state *s, struct buf *b, size_t max_cap);
/* Hands buffer bid back to the kernel's ring. */
void uring_recycle(struct uring_state *s, unsigned bid);
/* The ring, its completion queue and the provided buffers registered. Returns 0, or -1
 * with why (nothing left to free but s). */
int uring_ring_init(struct uring_state *s, char *why, size_t whylen);
/* Ends what is still in the kernel, closes the sockets still held, frees it all but s. */
void uring_ring_exit(struct uring_state *s);

#endif
