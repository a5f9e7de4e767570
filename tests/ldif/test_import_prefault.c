/*
 * ldif/import_prefault.c on a real file mapped shared, as LMDB maps minidir-import's new
 * file: the thread populates the pages up to IMPORT_PREFAULT_AHEAD past where the writer
 * said it is (resident, as mincore tells), no further while the writer stays there, more
 * once it moves on, and never changes a byte. (Near a full disk it stops: core_test's
 * import into a 512 KiB file system.)
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ldif/import_prefault.h"
#include "tests/check_run.h"

#define MAP_BYTES ((size_t)64 << 20)

/* Waits up to 5 s for the thread to have populated at least want bytes; returns how many
 * it has. */
static size_t wait_done(struct import_prefault *pf, size_t want)
{
	for (int i = 0; i < 500 && atomic_load(&pf->done) < want; i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	return atomic_load(&pf->done);
}

/* Resident pages of [map + from, map + to). */
static size_t resident(unsigned char *map, size_t from, size_t to)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (to - from) / (size_t)page, in = 0;
	unsigned char *vec = malloc(n);
	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(map + from, to - from, vec), 0);
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	free(vec);
	return in * (size_t)page;
}

START_TEST(populates_ahead_of_the_writer)
{
	char path[] = "/tmp/minidir-prefault.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, (off_t)MAP_BYTES), 0);
	unsigned char *map = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);

	struct import_prefault pf;
	import_prefault_start(&pf, map, MAP_BYTES, fd);
	ck_assert(pf.running);
	/* The writer at the start: the thread stops IMPORT_PREFAULT_AHEAD on. */
	size_t done = wait_done(&pf, IMPORT_PREFAULT_AHEAD);
	if (done == 0) { /* madvise refused at once: a kernel before 5.14 */
		import_prefault_stop(&pf);
		fprintf(stderr, "import_prefault: MADV_POPULATE_WRITE not supported here\n");
		ck_abort_msg("this kernel has no MADV_POPULATE_WRITE (Linux 5.14)");
	}
	nanosleep(&(struct timespec){0, 50000000}, NULL); /* time to overrun, if it would */
	done = atomic_load(&pf.done);
	ck_assert_uint_ge(done, IMPORT_PREFAULT_AHEAD);
	ck_assert_uint_le(done, IMPORT_PREFAULT_AHEAD + IMPORT_PREFAULT_CHUNK);
	ck_assert_uint_eq(resident(map, 0, IMPORT_PREFAULT_AHEAD), IMPORT_PREFAULT_AHEAD);

	/* The writer moves on to 20 MB: the thread follows, to 28 MB. */
	size_t at = (size_t)20 << 20;
	map[at - 1] = 'x';
	import_prefault_note(&pf, map + at);
	import_prefault_note(&pf, map + MAP_BYTES + 4096); /* outside the map: ignored */
	ck_assert_uint_ge(wait_done(&pf, at + IMPORT_PREFAULT_AHEAD), at + IMPORT_PREFAULT_AHEAD);
	done = import_prefault_stop(&pf);
	ck_assert(!pf.running);
	ck_assert_uint_le(done, at + IMPORT_PREFAULT_AHEAD + IMPORT_PREFAULT_CHUNK);
	ck_assert_uint_eq(resident(map, 0, done), done);
	ck_assert_uint_eq(map[at - 1], 'x'); /* the writer's bytes as it left them */
	ck_assert_uint_eq(map[at], 0);

	munmap(map, MAP_BYTES);
	close(fd);
}
END_TEST

START_TEST(without_a_map_nothing_runs)
{
	struct import_prefault pf;
	import_prefault_start(&pf, NULL, 0, -1);
	ck_assert(!pf.running);
	import_prefault_note(&pf, &pf);
	ck_assert_uint_eq(import_prefault_stop(&pf), 0);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("import_prefault");
	TCase *tc = tcase_create("prefault");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, populates_ahead_of_the_writer);
	tcase_add_test(tc, without_a_map_nothing_runs);
	suite_add_tcase(suite, tc);
	return check_run(suite);
}
