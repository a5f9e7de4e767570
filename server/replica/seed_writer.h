/*
 * A seed's copy written to its file behind the transfer: the bytes handed in are gathered
 * into one of two aligned buffers, and a thread of the writer's own writes each full one
 * while the next fills, so that the disk's time overlaps the network's and the checksum's.
 * A file opened O_DIRECT (seed.c) is written in whole blocks of SEED_WRITER_ALIGN from the
 * buffers, its last partial block through the page cache; another file is written as it
 * is. Every SEED_WRITER_SYNC_BYTES the thread also syncs what it wrote (fdatasync), so the
 * caller's final fsync has little left to wait for.
 *
 * Thread rules: one caller thread uses a writer (seed_writer_put, then seed_writer_end);
 * the writer's thread touches only the buffer handed to it.
 */
#ifndef MINIDIR_SERVER_REPLICA_SEED_WRITER_H
#define MINIDIR_SERVER_REPLICA_SEED_WRITER_H

#include <stddef.h>

#define SEED_WRITER_BUFFER (4 * 1024 * 1024)
#define SEED_WRITER_ALIGN 4096
#define SEED_WRITER_SYNC_BYTES (256 * 1024 * 1024)

struct seed_writer;

/* A writer for fd (borrowed: the caller closes it after seed_writer_end); NULL with errno
 * set (ENOMEM, or pthread_create's error). */
struct seed_writer *seed_writer_start(int fd);

/* Hands len bytes of p (copied) to w. 0, or -1 with errno set: a write failed (the
 * first failure, from the writer's thread; every later call fails too). */
int seed_writer_put(struct seed_writer *w, const char *p, size_t len);

/* Writes what is left, stops w's thread and frees w. 0, or -1 with errno set when any
 * write failed (then nothing is said about what the file holds). */
int seed_writer_end(struct seed_writer *w);

#endif
