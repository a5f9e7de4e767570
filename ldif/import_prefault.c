#include "ldif/import_prefault.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

/* Page headers looked at for the writer's progress: a page of an overflow value after its
 * first has no header, and may begin with zeros. */
#define PREFAULT_PROBES 16

/* Whether the writer has used a page of [off, off + PREFAULT_PROBES pages): all populated,
 * so reading them faults nothing in; read as the writer may be storing into them. */
static bool in_use(const struct import_prefault *pf, size_t off)
{
	for (int i = 0; i < PREFAULT_PROBES && off + pf->psize <= pf->done; i++, off += pf->psize)
		if (__atomic_load_n((const uint64_t *)(const void *)(pf->map + off),
		                    __ATOMIC_RELAXED))
			return true;
	return false;
}

static void *prefault_thread(void *arg)
{
	struct import_prefault *pf = arg;
	const struct timespec pause = {0, 1000000}; /* 1 ms: the writer fills ~200 KB in one */
	while (!atomic_load_explicit(&pf->stop, memory_order_relaxed) && pf->done < pf->mapsize) {
		if (pf->done >= IMPORT_PREFAULT_AHEAD &&
		    !in_use(pf, pf->done - IMPORT_PREFAULT_AHEAD)) {
			nanosleep(&pause, NULL);
			continue;
		}
		size_t n = pf->mapsize - pf->done;
		if (n > IMPORT_PREFAULT_CHUNK)
			n = IMPORT_PREFAULT_CHUNK;
		/* EINVAL before Linux 5.14, EFAULT where a store would be a SIGBUS (a full
		 * disk): the writer's own stores take it from here. */
		if (madvise(pf->map + pf->done, n, MADV_POPULATE_WRITE) != 0)
			break;
		pf->done += n;
	}
	return NULL;
}

/*
 * Where env's file is mapped: LMDB does not say (mdb_env_info's me_mapaddr is the address
 * asked for with MDB_FIXEDMAP, else NULL), so the process's own map list does: the shared
 * writable mapping of that file (device and inode), at offset 0, size bytes long.
 */
static unsigned char *find_map(int fd, size_t size)
{
	struct stat st;
	FILE *f;
	if (fstat(fd, &st) < 0 || !(f = fopen("/proc/self/maps", "re")))
		return NULL;
	char line[4096], perms[8];
	unsigned long long lo, hi, off, ino;
	unsigned maj, mnr;
	unsigned char *at = NULL;
	while (!at && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perms, &off, &maj, &mnr,
		           &ino) == 7 &&
		    ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
		    mnr == minor(st.st_dev) && off == 0 && hi - lo == size && perms[1] == 'w' &&
		    perms[3] == 's')
			at = (unsigned char *)(uintptr_t)lo;
	fclose(f);
	return at;
}

void import_prefault_start(struct import_prefault *pf, MDB_env *env)
{
	memset(pf, 0, sizeof(*pf));
	atomic_init(&pf->stop, false);
	MDB_envinfo info;
	MDB_stat st;
	int fd;
	if (mdb_env_info(env, &info) != 0 || mdb_env_stat(env, &st) != 0 ||
	    mdb_env_get_fd(env, &fd) != 0 || !(pf->map = find_map(fd, info.me_mapsize)))
		return;
	pf->mapsize = info.me_mapsize;
	pf->psize = st.ms_psize;
	pf->running = pthread_create(&pf->thread, NULL, prefault_thread, pf) == 0;
}

size_t import_prefault_stop(struct import_prefault *pf)
{
	if (pf->running) {
		atomic_store(&pf->stop, true);
		pthread_join(pf->thread, NULL);
		pf->running = false;
	}
	return pf->done;
}

void import_prefault_end(const struct import_prefault *pf, int fd, size_t used)
{
	if (pf->done > used)
		(void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)used,
		                (off_t)(pf->done - used));
}
