/*
 * The page faults of minidir-import's new file taken off the writer (ldif/ldif_import.c).
 * The file is written through LMDB's writable map (storage/db.h), sparse: the first store
 * into each new page faults, and the kernel reads the hole in, zeroing it, before the page
 * is the writer's. On 1,000,000 entries of bench/gen-ldif.sh that zeroing (filemap_fault,
 * zero_user_segments) was 17% of the import's CPU samples, all of it on the writer, the
 * thread the others wait on (bench/results/import-2026-12-05.md). A thread of its own
 * takes those faults ahead of it: madvise(MADV_POPULATE_WRITE) on the pages past where
 * the writer is, up to IMPORT_PREFAULT_AHEAD bytes ahead; it never reads or writes a byte
 * of the map.
 *
 * Where the writer is: LMDB hands out a new file's pages in order from its start, and the
 * writer tells (import_prefault_note) the end of the record it stored last, which sits
 * on one of the newest pages. The thread waits while it is far enough ahead of that.
 * When it cannot populate (a kernel before 5.14: madvise fails; a full disk or a quota:
 * madvise fails where the writer's own store gets a SIGBUS) or the file system has less
 * than IMPORT_PREFAULT_MIN_FREE bytes free (populating takes blocks, and an import that
 * just fits must not fail sooner for it), it stops, and the writer faults its pages
 * itself, as without it. A quota has no such margin: there the import can fail up to
 * IMPORT_PREFAULT_AHEAD + IMPORT_PREFAULT_CHUNK bytes sooner.
 *
 * Memory: the populated pages are the file's page cache (dirty), not the process's own
 * (RssAnon); at most IMPORT_PREFAULT_AHEAD + IMPORT_PREFAULT_CHUNK bytes of them past the
 * writer, which the importer drops by cutting the file to its pages in use before it
 * syncs it (ldif_import.c, finish_file).
 *
 * Thread rules: start, note and stop on the writer's thread.
 */
#ifndef MINIDIR_LDIF_IMPORT_PREFAULT_H
#define MINIDIR_LDIF_IMPORT_PREFAULT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* How far past the writer the thread populates, and how much one madvise does. */
#define IMPORT_PREFAULT_AHEAD (8u << 20)
#define IMPORT_PREFAULT_CHUNK (1u << 20)
/* Free bytes of the file system below which the thread stops. */
#define IMPORT_PREFAULT_MIN_FREE (64ull << 20)

struct import_prefault {
	pthread_t thread;
	bool running;       /* thread started and not yet joined */
	unsigned char *map; /* the file's map (borrowed) */
	size_t mapsize;
	int fd; /* the file's descriptor (borrowed): its file system's free space */
	atomic_bool stop;
	atomic_size_t writer_at; /* bytes of the map the writer has reached */
	atomic_size_t done;      /* bytes of the map from its start populated (by the thread) */
};

/* Starts pf's thread on the map [map, map + mapsize) of the new file fd (both borrowed:
 * stop before either is closed). A failure is no error: the writer then takes its faults
 * itself (pf->running false). */
void import_prefault_start(struct import_prefault *pf, void *map, size_t mapsize, int fd);

/* The writer has stored up to at (an address in the map; one outside it is ignored). */
void import_prefault_note(struct import_prefault *pf, const void *at);

/* Stops and joins the thread, if running. Returns the bytes of the map it populated. */
size_t import_prefault_stop(struct import_prefault *pf);

#endif
