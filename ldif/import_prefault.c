#include "ldif/import_prefault.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>

/* Whether the file system has room for the pages about to be populated, with a margin:
 * populating takes its blocks (ext4, xfs, btrfs), so near a full disk the thread stops and
 * the writer's own stores find the end where they would have without it. */
static bool room_ahead(int fd)
{
	struct statvfs st;
	return fstatvfs(fd, &st) == 0 &&
	       (unsigned long long)st.f_bavail * st.f_frsize >= IMPORT_PREFAULT_MIN_FREE;
}

static void *prefault_thread(void *arg)
{
	struct import_prefault *pf = arg;
	const struct timespec pause = {0, 1000000}; /* 1 ms: the writer fills ~200 KB in one */
	size_t done = 0;
	while (!atomic_load_explicit(&pf->stop, memory_order_relaxed) && done < pf->mapsize) {
		size_t at = atomic_load_explicit(&pf->writer_at, memory_order_relaxed);
		if (done >= at + IMPORT_PREFAULT_AHEAD) {
			nanosleep(&pause, NULL);
			continue;
		}
		size_t n = pf->mapsize - done;
		if (n > IMPORT_PREFAULT_CHUNK)
			n = IMPORT_PREFAULT_CHUNK;
		/* EINVAL before Linux 5.14, EFAULT where a store would be a SIGBUS (a full
		 * disk, a quota): the writer's own stores take it from here. */
		if (!room_ahead(pf->fd) || madvise(pf->map + done, n, MADV_POPULATE_WRITE) != 0)
			break;
		done += n;
		atomic_store_explicit(&pf->done, done, memory_order_relaxed);
	}
	return NULL;
}

void import_prefault_start(struct import_prefault *pf, void *map, size_t mapsize, int fd)
{
	memset(pf, 0, sizeof(*pf));
	atomic_init(&pf->stop, false);
	atomic_init(&pf->writer_at, 0);
	atomic_init(&pf->done, 0);
	pf->map = map;
	pf->mapsize = mapsize;
	pf->fd = fd;
	pf->running = map && pthread_create(&pf->thread, NULL, prefault_thread, pf) == 0;
}

void import_prefault_note(struct import_prefault *pf, const void *at)
{
	uintptr_t a = (uintptr_t)at, base = (uintptr_t)pf->map;
	if (pf->running && a >= base && a - base <= pf->mapsize)
		atomic_store_explicit(&pf->writer_at, (size_t)(a - base), memory_order_relaxed);
}

size_t import_prefault_stop(struct import_prefault *pf)
{
	if (pf->running) {
		atomic_store(&pf->stop, true);
		pthread_join(pf->thread, NULL);
		pf->running = false;
	}
	return atomic_load(&pf->done);
}
