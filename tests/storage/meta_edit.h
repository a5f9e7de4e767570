/*
 * Changes one key of a database file's meta (storage/db.h) with LMDB directly, as an
 * older minidir-import wrote it: the storage tests make files of earlier formats or
 * without a newer key this way.
 */
#ifndef MINIDIR_TESTS_STORAGE_META_EDIT_H
#define MINIDIR_TESTS_STORAGE_META_EDIT_H

#include <check.h>
#include "storage/db_impl.h"
#include <string.h>

/* Sets meta's key to value in the file at path (closed by everyone else); value NULL
 * deletes the key. */
static inline void meta_edit(const char *path, const char *key, const char *value)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi meta;
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(env, 64), 0);
	ck_assert_int_eq(mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "meta", 0, &meta), 0);
	MDB_val k = {strlen(key), (void *)key}, v = {value ? strlen(value) : 0, (void *)value};
	ck_assert_int_eq(value ? mdb_put(txn, meta, &k, &v, 0) : mdb_del(txn, meta, &k, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

#endif
