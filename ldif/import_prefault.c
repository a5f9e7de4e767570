#include "ldif/import_prefault.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

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
		 * disk): the writer's own stores take it from here. */
		if (madvise(pf->map + done, n, MADV_POPULATE_WRITE) != 0)
			break;
		done += n;
		atomic_store_explicit(&pf->done, done, memory_order_relaxed);
	}
	return NULL;
}

void import_prefault_start(struct import_prefault *pf, void *map, size_t mapsize)
{
	memset(pf, 0, sizeof(*pf));
	atomic_init(&pf->stop, false);
	atomic_init(&pf->writer_at, 0);
	atomic_init(&pf->done, 0);
	pf->map = map;
	pf->mapsize = mapsize;
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

void import_prefault_end(const struct import_prefault *pf, int fd, size_t used)
{
	size_t done = atomic_load(&pf->done);
	if (done > used)
		(void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)used,
		                (off_t)(done - used));
}
