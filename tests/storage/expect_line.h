/*
 * The bad-input files of tests/data/bad and tests/data/bad-schema start with "# expect: N: words":
 * the line the error must name and words it must contain. Shared by the storage tests.
 */
#ifndef MINIDIR_TESTS_STORAGE_EXPECT_LINE_H
#define MINIDIR_TESTS_STORAGE_EXPECT_LINE_H

#include <check.h>
#include <stdio.h>
#include <string.h>

/* Reads path's header into *line and words[0..n) (the rest of the line, without
 * its newline). A byte order mark before it (bom.ldif's own error) is skipped. */
static inline void expect_line_read(const char *path, unsigned long *line, char *words, size_t n)
{
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	char first[256];
	ck_assert_ptr_nonnull(fgets(first, sizeof(first), fp));
	fclose(fp);
	const char *head = strncmp(first, "\xEF\xBB\xBF", 3) == 0 ? first + 3 : first;
	int at = 0;
	ck_assert_msg(sscanf(head, "# expect: %lu: %n", line, &at) == 1 && at > 0,
	              "%s: no \"# expect: N: words\" line", path);
	snprintf(words, n, "%.*s", (int)strcspn(head + at, "\n"), head + at);
}

#endif
