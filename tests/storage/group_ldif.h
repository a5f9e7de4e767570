/*
 * What the unit tests of groups share (test_memberof.c, test_memberof_nested.c,
 * test_memberof_chain.c, test_dyngroup.c): a chain of groups below dc=example,dc=com
 * written as LDIF, the import of such a file, and an entry's ID by its DN.
 */
#ifndef MINIDIR_TESTS_STORAGE_GROUP_LDIF_H
#define MINIDIR_TESTS_STORAGE_GROUP_LDIF_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ldif/ldif_import.h"
#include "storage/db_impl.h"

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "storage/db.h"

/* Writes to f cn=chain1..cn=chainN (groupOfNames): chain1 holds uid=bob, chainI holds
 * chain(I-1), so bob is n groups deep. */
static inline void group_ldif_chain(FILE *f, int n)
{
	for (int i = 1; i <= n; i++) {
		fprintf(
		    f, "dn: cn=chain%d,dc=example,dc=com\nobjectClass: groupOfNames\ncn: chain%d\n",
		    i, i);
		if (i == 1)
			fprintf(f, "member: uid=bob,dc=example,dc=com\n\n");
		else
			fprintf(f, "member: cn=chain%d,dc=example,dc=com\n\n", i - 1);
	}
}

/* The ID of the entry dn in txn (the test fails if there is none). */
static inline entry_id group_dn_id(const struct db *db, MDB_txn *txn, const char *dn)
{
	struct buf key = {0};
	ck_assert_int_eq(dn_normalize(dn, strlen(dn), NULL, &key), 0);
	entry_id id;
	ck_assert_msg(db_dn2id(db, db_read_of(txn), key.data, key.len, &id) == 0, "%s", dn);
	buf_free(&key);
	return id;
}

/* The ID of the entry rdn,dc=example,dc=com. */
static inline entry_id group_id_of(const struct db *db, MDB_txn *txn, const char *rdn)
{
	char dn[128];
	snprintf(dn, sizeof(dn), "%s,dc=example,dc=com", rdn);
	return group_dn_id(db, txn, dn);
}

/* Imports ldif into a new db_path below dc=example,dc=com (an objectClass index) with
 * memberof_nested as nested, its messages into the file err_path (the test fails if it
 * does not import). */
static inline void group_import(const char *ldif, const char *db_path, bool nested,
                                const char *err_path)
{
	FILE *err = fopen(err_path, "w");
	ck_assert_ptr_nonnull(err);
	char *const index[] = {"objectClass"};
	struct import_opts opts = {.suffix = "dc=example,dc=com",
	                           .index = index,
	                           .nindex = 1,
	                           .err = err,
	                           .memberof_nested = nested};
	size_t count;
	ck_assert_int_eq(ldif_import(ldif, db_path, &opts, &count), 0);
	fclose(err);
}

#endif
