/*
 * The page faults of minidir-import's new file taken off the writer (ldif/ldif_import.c).
 * The file is written through LMDB's writable map (storage/db.h), sparse: the first store
 * into each new page faults, and the kernel reads the hole in, zeroing it, before the page
 * is the writer's. That was about half of the writer's CPU (1,000,000 entries of
 * bench/gen-ldif.sh: 2.3 s of system time of its 5.0 s, most of it zeroing in
 * filemap_fault), and the writer was the one thread the others waited on. A thread of its
 * own takes those faults ahead of it instead: madvise(MADV_POPULATE_WRITE) on the pages
 * past the ones in use, up to IMPORT_PREFAULT_AHEAD bytes ahead, the contents untouched.
 *
 * LMDB hands out a new file's pages in order from its start, so the pages in use are
 * those up to the last one whose header (its first 8 bytes: its page number) is set; the
 * thread looks at a few headers IMPORT_PREFAULT_AHEAD behind what it populated to know
 * when the writer has come near. It only ever helps: when it cannot populate (an older
 * kernel, a full disk: madvise fails instead of the SIGBUS the writer's own store gets),
 * it stops, and the writer faults its pages itself, as without it; a page the writer
 * reaches first is one the thread's madvise finds present. It never writes a byte.
 *
 * Memory: the populated pages are the file's page cache (dirty), not the process's own
 * (RssAnon); at most IMPORT_PREFAULT_AHEAD bytes of them past the writer, which the
 * importer gives back (import_prefault_end, a hole punched) before it syncs the file.
 *
 * Thread rules: start and stop on the writer's thread; the thread only reads the map.
 */
#ifndef MINIDIR_LDIF_IMPORT_PREFAULT_H
#define MINIDIR_LDIF_IMPORT_PREFAULT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* How far past the pages in use the thread populates, and how much one madvise does. */
#define IMPORT_PREFAULT_AHEAD (8u << 20)
#define IMPORT_PREFAULT_CHUNK (1u << 20)

struct import_prefault {
	pthread_t thread;
	bool running;       /* thread started and not yet joined */
	unsigned char *map; /* the environment's map (borrowed) */
	size_t mapsize, psize;
	atomic_bool stop;
	size_t done; /* bytes of the map from its start populated (the thread's until joined) */
};

/* Starts pf's thread on env's map (env borrowed: stop before closing it). A failure is no
 * error: the writer then takes its faults itself (pf->running false). */
void import_prefault_start(struct import_prefault *pf, MDB_env *env);

/* Stops and joins the thread, if running. Returns the bytes of the map it populated. */
size_t import_prefault_stop(struct import_prefault *pf);

/* Gives back the pages populated past used bytes of the file fd (a punched hole; the
 * file keeps its size): so that syncing the file writes none of them. Call after
 * import_prefault_stop. A file system that cannot punch holes costs only that write. */
void import_prefault_end(const struct import_prefault *pf, int fd, size_t used);

#endif
