/*
 * Allocation of struct conn, packed into slabs of one worker.
 *
 * An idle connection should cost little memory, and all of it should go back
 * to the system when connections close. Allocated one by one, connection
 * structs end up between the buffers of other connections, and each pins a
 * heap page that malloc_trim cannot return even once the buffers around it are
 * freed. Slabs keep them together: a slab is one mmap of CONN_SLAB_BYTES, and
 * is unmapped as soon as its last connection is freed.
 *
 * A pool belongs to one worker thread; nothing here locks.
 */
#ifndef MINIDIR_SERVER_CONN_POOL_H
#define MINIDIR_SERVER_CONN_POOL_H

#include <stddef.h>

#define CONN_SLAB_BYTES (128 * 1024)

struct conn;
struct conn_slab;

struct conn_pool {
	struct conn_slab *slabs; /* every slab, those with free slots first */
	size_t slabs_n;
};

/* A zeroed struct conn, or NULL (errno ENOMEM). */
struct conn *conn_pool_get(struct conn_pool *p);
/* Gives c (from conn_pool_get on p) back; its slab is unmapped when empty. */
void conn_pool_put(struct conn_pool *p, struct conn *c);
/* Unmaps every slab; every connection must have been put back. */
void conn_pool_free(struct conn_pool *p);

#endif
