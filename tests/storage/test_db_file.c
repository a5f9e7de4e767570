/*
 * Unit tests for storage/db_file.c on real LMDB files: a whole file passes, a copy cut
 * anywhere short of the last page LMDB says it uses (mdb_env_info's me_last_pgno, after
 * each of several commits, so that either meta page is the newer) is refused with the
 * length it needs, and a file that is not LMDB's is left to LMDB.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include "storage/db_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/db_file.h"
#include "tests/check_run.h"

static char dir[64];
static char live[96], copy[96];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-dbfile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(live, sizeof(live), "%s/live.mdb", dir);
	snprintf(copy, sizeof(copy), "%s/copy.mdb", dir);
}

static void teardown(void)
{
	char lock[128];
	snprintf(lock, sizeof(lock), "%s-lock", live);
	unlink(live);
	unlink(lock);
	unlink(copy);
	rmdir(dir);
}

/* Copies live to copy, cut to n bytes (or whole when n is larger). */
static void copy_cut(off_t n)
{
	int in = open(live, O_RDONLY), out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert(in >= 0 && out >= 0);
	char buf[65536];
	ssize_t r;
	while ((r = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)r), r);
	ck_assert_int_eq(ftruncate(out, n), 0);
	close(in);
	close(out);
}

/* db_file_check on copy: its return, with the need and message it gave. */
static int check_copy(uint64_t *need, char *err, size_t errlen)
{
	int fd = open(copy, O_RDONLY);
	ck_assert(fd >= 0);
	err[0] = '\0';
	int rc = db_file_check(fd, copy, "copy it again", need, err, errlen);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0); /* pread only */
	close(fd);
	return rc;
}

/* Asserts that copy cut to n bytes is refused, needing want, in one line. */
static void assert_cut(off_t n, uint64_t want)
{
	copy_cut(n);
	uint64_t need = 0;
	char err[512], line[512];
	ck_assert_msg(check_copy(&need, err, sizeof(err)) == -1, "%lld bytes passed", (long long)n);
	ck_assert_uint_eq(need, want);
	snprintf(line, sizeof(line), "%s: the file is cut short (%lld bytes, LMDB's ", copy,
	         (long long)n);
	ck_assert_msg(strncmp(err, line, strlen(line)) == 0, "message: %s", err);
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_msg(strstr(err, "): copy it again") != NULL, "message: %s", err);
}

static void put_records(MDB_env *env, int from, int to)
{
	MDB_txn *txn;
	MDB_dbi dbi;
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
	char key[16], val[300];
	memset(val, 'v', sizeof(val));
	for (int i = from; i < to; i++) {
		snprintf(key, sizeof(key), "k%08d", i);
		MDB_val k = {strlen(key), key}, v = {sizeof(val), val};
		ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
	}
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
}

/* What LMDB says the file needs: pages 0 to its last page. */
static uint64_t lmdb_need(MDB_env *env, unsigned *psize)
{
	MDB_envinfo info;
	MDB_stat st;
	ck_assert_int_eq(mdb_env_info(env, &info), 0);
	ck_assert_int_eq(mdb_env_stat(env, &st), 0);
	*psize = st.ms_psize;
	return ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
}

START_TEST(cut_anywhere_is_refused)
{
	MDB_env *env;
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_open(env, live, MDB_NOSUBDIR, 0600), 0);
	uint64_t older = 0;
	/* Three commits, each growing the file: the newer meta is page 1, 0, then 1. */
	for (int round = 1; round <= 3; round++) {
		put_records(env, (round - 1) * 400, round * 400);
		unsigned psize;
		uint64_t need = lmdb_need(env, &psize), got = 1;
		ck_assert_uint_gt(need, older);
		char err[512];
		copy_cut((off_t)need);
		ck_assert_int_eq(check_copy(&got, err, sizeof(err)), 0);
		ck_assert_uint_eq(got, 0);
		/* More than the file needs (an import's file is never cut below it; a copy may
		 * be longer) is whole too. */
		copy_cut((off_t)need + psize);
		ck_assert_int_eq(check_copy(&got, err, sizeof(err)), 0);
		assert_cut((off_t)need - 1, need);         /* a byte off the last page */
		assert_cut((off_t)need - psize / 2, need); /* inside the last page */
		assert_cut((off_t)need - psize, need);     /* the last page gone */
		assert_cut((off_t)need / 2, need);         /* half */
		assert_cut(2 * (off_t)psize, need);        /* the two meta pages only */
		assert_cut((off_t)psize + 200, need);      /* the second meta page cut */
		if (older)
			assert_cut((off_t)older, need); /* what the older meta needed */
		/* Shorter than both meta pages: what they need (which meta is the newer is not
		 * known), from the first one's page size. */
		assert_cut((off_t)psize + 100, 2 * (uint64_t)psize);
		assert_cut((off_t)psize, 2 * (uint64_t)psize);
		assert_cut(100, 2 * (uint64_t)psize);
		assert_cut(0, 2 * (uint64_t)psize);
		older = need;
	}
	mdb_env_close(env);
}
END_TEST

START_TEST(padded_to_what_the_meta_needs)
{
	/* A commit that took pages past the file's end and freed them again does not write
	 * them (db_file.h): db_write_commit pads the file with zeros to what its meta needs.
	 * Here a copy short of its last pages stands for such a file. */
	MDB_env *env;
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_open(env, live, MDB_NOSUBDIR, 0600), 0);
	put_records(env, 0, 400);
	unsigned psize;
	uint64_t need = lmdb_need(env, &psize), got = 1;
	mdb_env_close(env);
	copy_cut((off_t)(need - 3 * psize));
	char err[512];
	ck_assert_int_eq(check_copy(&got, err, sizeof(err)), -1);
	int fd = open(copy, O_RDWR);
	ck_assert(fd >= 0);
	ck_assert_int_eq(db_file_pad(fd, need), 0);
	ck_assert_int_eq(db_file_pad(fd, need - psize), 0); /* never shortened */
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, need);
	unsigned char tail[64], zero[64] = {0};
	ck_assert_int_eq(pread(fd, tail, sizeof(tail), (off_t)need - 64), 64);
	ck_assert_int_eq(memcmp(tail, zero, sizeof(zero)), 0);
	close(fd);
	ck_assert_msg(check_copy(&got, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(got, 0);
	/* A file opened read-only cannot be padded: the errno says so. */
	fd = open(copy, O_RDONLY);
	ck_assert_int_eq(db_file_pad(fd, need + psize), EINVAL);
	close(fd);
}
END_TEST

START_TEST(not_lmdb_is_left_to_lmdb)
{
	/* Bytes that are no LMDB file, at several lengths: 0, and LMDB's open says why. */
	static const size_t lengths[] = {1, 10, 100, 4096, 100000};
	char *bytes = malloc(100000);
	ck_assert_ptr_nonnull(bytes);
	for (size_t i = 0; i < 100000; i++)
		bytes[i] = (char)(i * 131 + 7);
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		int fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ck_assert(fd >= 0);
		ck_assert_int_eq(write(fd, bytes, lengths[i]), (ssize_t)lengths[i]);
		close(fd);
		uint64_t need = 1;
		char err[512];
		ck_assert_int_eq(check_copy(&need, err, sizeof(err)), 0);
		ck_assert_uint_eq(need, 0);
	}
	free(bytes);
	/* A directory is LMDB's to refuse too. */
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert(fd >= 0);
	char err[512];
	ck_assert_int_eq(db_file_check(fd, dir, "x", NULL, err, sizeof(err)), 0);
	close(fd);
}
END_TEST

START_TEST(first_meta_cut_uses_its_page_size)
{
	/* A file cut inside its first meta page, after the page size: the meta pages of
	 * that size; before it, of the system's page size. */
	MDB_env *env;
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_open(env, live, MDB_NOSUBDIR, 0600), 0);
	put_records(env, 0, 10);
	unsigned psize;
	lmdb_need(env, &psize);
	mdb_env_close(env);
	assert_cut(60, 2 * (uint64_t)psize);
	assert_cut(24, 2 * (uint64_t)sysconf(_SC_PAGESIZE));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("db_file");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, cut_anywhere_is_refused);
	tcase_add_test(tc, not_lmdb_is_left_to_lmdb);
	tcase_add_test(tc, first_meta_cut_uses_its_page_size);
	tcase_add_test(tc, padded_to_what_the_meta_needs);
	suite_add_tcase(s, tc);
	return check_run(s);
}
