/*
 * bench/memlat.c: what one load from a random place in memory costs on this machine, the
 * figure under lookups on a directory larger than the CPU's caches (bench/scale.sh; issue
 * 28's 10 million entries). A lookup there finds its key memo slot, then its record's
 * place, then the record in the file's map, each from the one before: loads that depend on
 * each other, at random places in regions far larger than the caches. This program makes
 * such a chain and times it.
 *
 *   memlat [FILE]
 *
 * For anonymous regions of 4 MiB, 64 MiB, 256 MiB and 1 GiB (4 KiB pages, as the memos'
 * maps; the first one fits the caches of most CPUs), and 1 GiB again with MADV_HUGEPAGE
 * (2 MiB pages where the kernel's transparent huge pages allow them): a cycle through every cache
 * line of the region in a random order (Sattolo's shuffle), each line holding the place of the
 * next, walked for LOADS loads. With FILE (the database, say), the file mapped read-only
 * too, as the server maps it, its pages read in first (MADV_POPULATE_READ): each load
 * reads 8 bytes at a random page, the next page chosen from those bytes, so that each
 * load waits for the one before (choosing it, a multiply and a division, adds some
 * nanoseconds to each of these loads that the anonymous walk does not have). Prints nanoseconds per
 * load, one row per region, with how much of the process's anonymous memory was in huge pages while
 * it was mapped. Exits 1 with a message when a map or the file fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE 64
#define LOADS (4u << 20)

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* xorshift64*: random enough for an order of cache lines, and the same in every run. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1du;
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The process's anonymous memory in huge pages now, in MiB (/proc/self/smaps_rollup; 0
 * where it cannot be read). */
static long huge_mib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / 1024;
}

static long region_huge_mib; /* huge_mib() while the last region was mapped */

/* ns per load of a dependent walk through every cache line of an anonymous region of
 * bytes, in a random cycle, on 4 KiB pages or (huge) transparent huge pages where the
 * kernel gives them; -1 when the region cannot be mapped. */
static double anonymous_region(size_t bytes, bool huge)
{
	size_t lines = bytes / LINE;
	unsigned char *at =
	    mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (at == MAP_FAILED)
		return -1;
	madvise(at, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); /* the memos: 4 KiB pages */
	/* Sattolo's shuffle of 0..lines-1 builds one cycle: line i holds the next line */
	uint32_t *next = malloc(lines * sizeof(*next));
	if (!next) {
		munmap(at, bytes);
		return -1;
	}
	for (size_t i = 0; i < lines; i++)
		next[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = rng() % i;
		uint32_t t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		memcpy(at + i * LINE, &next[i], sizeof(uint32_t));
	free(next);
	uint32_t p = 0;
	for (size_t i = 0; i < lines && i < LOADS; i++) /* warms the caches and the TLB */
		memcpy(&p, at + (size_t)p * LINE, sizeof(p));
	double t0 = now_ns();
	for (unsigned i = 0; i < LOADS; i++)
		memcpy(&p, at + (size_t)p * LINE, sizeof(p));
	double ns = (now_ns() - t0) / LOADS;
	if (p == UINT32_MAX) /* keeps the walk from being optimized away */
		puts("");
	region_huge_mib = huge_mib();
	munmap(at, bytes);
	return ns;
}

/* ns per load of a dependent walk over random pages of path mapped read-only, or -1
 * (errno set) when it cannot be opened or mapped. *size: the file's bytes. */
static double file_region(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	int err = fstat(fd, &st) < 0  ? errno
	          : st.st_size < 4096 ? EINVAL
	                              : 0; /* one page at least */
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	*size = (size_t)st.st_size;
	size_t pages = *size / 4096;
	const unsigned char *at = mmap(NULL, *size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (at == MAP_FAILED)
		return -1;
	if (madvise((void *)at, *size, MADV_POPULATE_READ) < 0) /* before 5.14: touch each */
		for (size_t i = 0; i < pages; i++)
			(void)*(volatile const unsigned char *)(at + i * 4096);
	uint64_t v = 0;
	double t0 = now_ns();
	for (unsigned i = 0; i < LOADS; i++) {
		uint64_t h = (v ^ i) * 0x9e3779b97f4a7c15u; /* the next page depends on v */
		size_t page = (size_t)(h >> 17) % pages, off = (size_t)(h % 4096u) & ~(size_t)7;
		uint64_t w;
		memcpy(&w, at + page * 4096 + off, sizeof(w));
		v += w;
	}
	double ns = (now_ns() - t0) / LOADS;
	if (v == 42) /* keeps the walk from being optimized away */
		puts("");
	munmap((void *)at, *size);
	return ns;
}

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: memlat [FILE]\n");
		return 2;
	}
	if (argc == 2 && access(argv[1], R_OK) < 0) { /* before a minute of anonymous rows */
		fprintf(stderr, "memlat: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("| region | bytes | huge pages MiB | ns per dependent load |\n|---|---|---|---|\n");
	static const struct {
		size_t bytes;
		bool huge;
	} regions[] = {{4u << 20, false},
	               {64u << 20, false},
	               {256u << 20, false},
	               {1u << 30, false},
	               {1u << 30, true}};
	for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		double ns = anonymous_region(regions[i].bytes, regions[i].huge);
		if (ns < 0) {
			fprintf(stderr, "memlat: %zu bytes: %s\n", regions[i].bytes,
			        strerror(errno));
			return 1;
		}
		printf("| anonymous, %s | %zu | %ld | %.1f |\n",
		       regions[i].huge ? "MADV_HUGEPAGE" : "4 KiB pages", regions[i].bytes,
		       region_huge_mib, ns);
	}
	if (argc == 2) {
		size_t size = 0;
		double ns = file_region(argv[1], &size);
		if (ns < 0) {
			fprintf(stderr, "memlat: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		printf("| %s, mapped read-only | %zu | 0 | %.1f |\n", argv[1], size, ns);
	}
	return 0;
}
