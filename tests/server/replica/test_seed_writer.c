/* server/replica/seed_writer.c: bytes handed in pieces of any size reach the file whole
 * and in order, O_DIRECT or not, a tail short of a block included; a failed write is
 * told to the caller, not lost. Files in a temp directory under /tmp. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/replica/seed_writer.h"
#include "tests/check_run.h"

/* Byte i of the test stream: not periodic within a buffer, so that a block written twice
 * or out of order shows. */
static char byte_at(size_t i)
{
	return (char)((i * 2654435761u) >> 13);
}

/* Writes total bytes through a writer on path (flags added to the open), handed in pieces
 * of 1, 4095, 70000 and 1 MiB bytes in turn; then checks the file holds them. */
static void write_and_check(const char *path, int flags, size_t total)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | flags, 0600);
	if (fd < 0 && errno == EINVAL && (flags & O_DIRECT))
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	struct seed_writer *w = seed_writer_start(fd);
	ck_assert_ptr_nonnull(w);
	static const size_t pieces[] = {1, 4095, 70000, 1024 * 1024};
	char *chunk = malloc(1024 * 1024);
	size_t at = 0;
	for (int k = 0; at < total; k = (k + 1) % 4) {
		size_t n = pieces[k] < total - at ? pieces[k] : total - at;
		for (size_t i = 0; i < n; i++)
			chunk[i] = byte_at(at + i);
		ck_assert_int_eq(seed_writer_put(w, chunk, n), 0);
		at += n;
	}
	ck_assert_int_eq(seed_writer_end(w), 0);
	close(fd);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((size_t)st.st_size, total);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	size_t bad = total;
	for (size_t i = 0; i < total && bad == total; i++)
		if ((char)fgetc(f) != byte_at(i))
			bad = i;
	fclose(f);
	free(chunk);
	ck_assert_msg(bad == total, "byte %zu of %zu differs", bad, total);
}

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-seed-writer.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(const char *file)
{
	unlink(file);
	rmdir(dir);
}

START_TEST(whole_and_in_order)
{
	char path[128];
	make_dir();
	snprintf(path, sizeof(path), "%s/copy", dir);
	/* Whole pages, as a copy is: more than two buffers, so both are reused. */
	write_and_check(path, O_DIRECT, 3 * SEED_WRITER_BUFFER + 5 * SEED_WRITER_ALIGN);
	/* A tail short of a block (a copy cut short), O_DIRECT and through the page cache. */
	write_and_check(path, O_DIRECT, 2 * SEED_WRITER_BUFFER + 12345);
	write_and_check(path, 0, SEED_WRITER_BUFFER + 777);
	write_and_check(path, O_DIRECT, 100); /* less than a block: all of it the tail */
	write_and_check(path, O_DIRECT, 0);
	remove_dir(path);
}
END_TEST

START_TEST(a_failed_write_is_told)
{
	char path[128];
	make_dir();
	snprintf(path, sizeof(path), "%s/ro", dir);
	int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600); /* write(2) fails: EBADF */
	ck_assert_int_ge(fd, 0);
	struct seed_writer *w = seed_writer_start(fd);
	ck_assert_ptr_nonnull(w);
	char *chunk = calloc(1, SEED_WRITER_BUFFER);
	int rc = 0;
	/* The first full buffer goes to the thread, its failure is seen by a later put. */
	for (int i = 0; i < 4 && rc == 0; i++)
		rc = seed_writer_put(w, chunk, SEED_WRITER_BUFFER);
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(seed_writer_end(w), -1);
	ck_assert_int_eq(errno, EBADF);
	close(fd);
	free(chunk);
	remove_dir(path);
}
END_TEST

START_TEST(a_failure_at_the_end_is_told)
{
	char path[128];
	make_dir();
	snprintf(path, sizeof(path), "%s/ro", dir);
	int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	struct seed_writer *w = seed_writer_start(fd);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(seed_writer_put(w, "abc", 3), 0); /* gathered, not yet written */
	ck_assert_int_eq(seed_writer_end(w), -1);
	ck_assert_int_eq(errno, EBADF);
	close(fd);
	remove_dir(path);
}
END_TEST

static Suite *seed_writer_suite(void)
{
	Suite *s = suite_create("seed_writer");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, whole_and_in_order);
	tcase_add_test(tc, a_failed_write_is_told);
	tcase_add_test(tc, a_failure_at_the_end_is_told);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(seed_writer_suite());
}
