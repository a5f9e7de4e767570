/* A test's database: LDIF text written to a directory of its own under /tmp and
 * imported there (the test fails if it does not import), then removed. */
#ifndef TESTS_STORAGE_TMP_IMPORT_H
#define TESTS_STORAGE_TMP_IMPORT_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldif/ldif_import.h"

struct tmp_import {
	char dir[64], db_path[128], ldif_path[128];
};

/* Imports text into t->db_path with opts (a directory named after tag); its entries must
 * number count. */
static inline void tmp_import(struct tmp_import *t, const char *tag, const char *text,
                              const struct import_opts *opts, size_t count)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/minidir-%s-XXXXXX", tag);
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	snprintf(t->db_path, sizeof(t->db_path), "%s/test.mdb", t->dir);
	snprintf(t->ldif_path, sizeof(t->ldif_path), "%s/test.ldif", t->dir);
	FILE *f = fopen(t->ldif_path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	fclose(f);
	size_t n;
	ck_assert_int_eq(ldif_import(t->ldif_path, t->db_path, opts, &n), 0);
	ck_assert_uint_eq(n, count);
}

static inline void tmp_import_remove(struct tmp_import *t)
{
	unlink(t->db_path);
	unlink(t->ldif_path);
	rmdir(t->dir);
}

#endif
