/* server/db/memo_auto.c: the memory limit read from cgroup trees made in a temp dir (v2,
 * v1's memory controller, a limit on an ancestor, "max", none) against the machine's. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/db/memo_auto.h"
#include "tests/check_run.h"

static char root[64];

/* root/rel made (with its parents), holding text. */
static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static size_t limit_of(const char *proc_text, size_t machine, char *from, size_t cap)
{
	char proc[128], sys[128];
	put("proc-cgroup", proc_text);
	snprintf(proc, sizeof(proc), "%s/proc-cgroup", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	return memo_auto_limit(proc, sys, machine, from, cap);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/memo-auto-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(v2_lowest_of_the_cgroup_and_its_ancestors)
{
	char from[600];
	put("sys/a/memory.max", "1073741824\n");
	put("sys/a/b/memory.max", "max\n");
	ck_assert_uint_eq(limit_of("0::/a/b\n", (size_t)8 << 30, from, sizeof(from)),
	                  (size_t)1 << 30);
	ck_assert_msg(strstr(from, "the cgroup limit of ") && strstr(from, "/sys/a/memory.max"),
	              "%s", from);
	put("sys/a/b/memory.max", "536870912\n"); /* lower below: that one */
	ck_assert_uint_eq(limit_of("0::/a/b\n", (size_t)8 << 30, from, sizeof(from)),
	                  (size_t)512 << 20);
	/* The machine's memory when lower. */
	ck_assert_uint_eq(limit_of("0::/a/b\n", (size_t)256 << 20, from, sizeof(from)),
	                  (size_t)256 << 20);
	ck_assert_str_eq(from, "the machine's memory");
}
END_TEST

START_TEST(v2_under_unified)
{
	char from[600];
	put("sys/unified/svc/memory.max", "268435456\n");
	ck_assert_uint_eq(limit_of("0::/svc\n", (size_t)8 << 30, from, sizeof(from)),
	                  (size_t)256 << 20);
}
END_TEST

START_TEST(v1_memory_controller)
{
	char from[600];
	put("sys/memory/job/memory.limit_in_bytes", "2147483648\n");
	put("sys/memory/memory.limit_in_bytes", "9223372036854771712\n"); /* none */
	put("sys/cpu/job/memory.limit_in_bytes", "1024\n");               /* not memory's */
	ck_assert_uint_eq(limit_of("5:cpu,cpuacct:/job\n4:memory:/job\n0::/\n", (size_t)8 << 30,
	                           from, sizeof(from)),
	                  (size_t)2 << 30);
	ck_assert_msg(strstr(from, "/sys/memory/job/memory.limit_in_bytes"), "%s", from);
}
END_TEST

START_TEST(no_cgroup_says)
{
	char from[600];
	ck_assert_uint_eq(limit_of("0::/nowhere\nbad line\n", (size_t)3 << 30, from, sizeof(from)),
	                  (size_t)3 << 30);
	ck_assert_str_eq(from, "the machine's memory");
	ck_assert_uint_eq(
	    memo_auto_limit("/nonexistent/cgroup", root, SIZE_MAX, from, sizeof(from)), SIZE_MAX);
	char why[5000];
	size_t b = memo_auto_bytes(why, sizeof(why)); /* this machine: a quarter of something */
	ck_assert_uint_gt(b, 0);
	ck_assert_msg(strstr(why, "a quarter of the ") || strstr(why, "64 MiB"), "%s", why);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("memo_auto");
	TCase *tc = tcase_create("memo_auto");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, v2_lowest_of_the_cgroup_and_its_ancestors);
	tcase_add_test(tc, v2_under_unified);
	tcase_add_test(tc, v1_memory_controller);
	tcase_add_test(tc, no_cgroup_says);
	suite_add_tcase(su, tc);
	return check_run(su);
}
