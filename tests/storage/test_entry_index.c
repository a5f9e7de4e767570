/*
 * Unit tests for storage/entry_index.h's memo (entry_index_keys_memo: an entry's
 * objectClass keys replayed from the last entry's) and protocol/schema.c's per-thread
 * memory of look-ups across a schema_free and schema_load. Run from the repository root.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/schema.h"
#include "tests/tree_schema.h"
#include "storage/entry.h"
#include "storage/entry_index.h"
#include "tests/check_run.h"

static char dir[64], db_path[128];
static struct db db;

static void setup(void)
{
	char err[256];
	snprintf(dir, sizeof(dir), "/tmp/minidir-index-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/test.mdb", dir);
	ck_assert_int_eq(schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err)), 0);
	char *index[] = {"cn", "objectClass", "uid"};
	ck_assert_msg(db_open(&db, db_path, true, "dc=test,dc=org", index, 3, err, sizeof(err)) ==
	                  0,
	              "%s", err);
}

static void teardown(void)
{
	db_close(&db);
	schema_free();
	unlink(db_path);
	char lock[160];
	snprintf(lock, sizeof(lock), "%s-lock", db_path);
	unlink(lock);
	rmdir(dir);
}

/* An entry_index_fn listing each key as "INDEX=KEY\n" in a buf. */
static int list(void *arg, const struct db_index *ix, const void *key, size_t len)
{
	struct buf *b = arg;
	ck_assert_int_eq(buf_append(b, ix->attr, strlen(ix->attr)), 0);
	ck_assert_int_eq(buf_append(b, "=", 1), 0);
	ck_assert_int_eq(buf_append(b, key, len), 0);
	ck_assert_int_eq(buf_append(b, "\n", 2), 0);
	b->len--; /* keep it a string */
	return 0;
}

/* The keys of an entry with these classes (comma-separated) and cn, with and without
 * memo: they must be the same; returns entry_index_keys_memo's result. */
static int keys_of(const char *classes, const char *cn, struct entry_index_memo *memo)
{
	char cls[256], err[256];
	snprintf(cls, sizeof(cls), "%s", classes);
	struct berval vals[8], *oc[9], cnv = {strlen(cn), (char *)cn}, *cnp[] = {&cnv, NULL};
	int n = 0;
	for (char *save, *c = strtok_r(cls, ",", &save); c && n < 8;
	     c = strtok_r(NULL, ",", &save)) {
		vals[n] = (struct berval){strcmp(c, "-") == 0 ? 0 : strlen(c), c}; /* "-": empty */
		oc[n] = &vals[n];
		n++;
	}
	oc[n] = NULL;
	LDAPMod m_cn = {LDAP_MOD_ADD | LDAP_MOD_BVALUES, "cn", {.modv_bvals = cnp}};
	LDAPMod m_oc = {LDAP_MOD_ADD | LDAP_MOD_BVALUES, "objectClass", {.modv_bvals = oc}};
	LDAPMod *mods[] = {&m_cn, &m_oc, NULL};
	struct berval dn = {14, "dc=test,dc=org"};
	struct buf rec = {0}, plain = {0}, memod = {0}, scratch = {0};
	ck_assert_int_eq(entry_encode(&rec, 0, (const unsigned char *)"k", 1, &dn, mods), 0);
	struct entry_view e;
	ck_assert_int_eq(entry_parse(rec.data, rec.len, &e), 0);
	int want = entry_index_keys(&db, &e, list, &plain, &scratch, err, sizeof(err));
	int got = entry_index_keys_memo(&db, &e, list, &memod, memo, &scratch, err, sizeof(err));
	ck_assert_int_eq(got, want);
	ck_assert_uint_eq(memod.len, plain.len);
	if (plain.len)
		ck_assert_str_eq((char *)memod.data, (char *)plain.data);
	buf_free(&rec);
	buf_free(&plain);
	buf_free(&memod);
	buf_free(&scratch);
	return got;
}

START_TEST(memo_same_keys)
{
	struct entry_index_memo memo = {0};
	ck_assert_int_eq(keys_of("top,person,organizationalPerson", "a", &memo), 0);
	ck_assert_ptr_nonnull(memo.ix); /* remembered */
	ck_assert_int_eq(keys_of("top,person,organizationalPerson", "b", &memo), 0);
	ck_assert_int_eq(keys_of("top,organizationalUnit", "c", &memo), 0);
	ck_assert_int_eq(keys_of("Top,organizationalUnit", "d", &memo), 0);
	ck_assert_int_eq(keys_of("top,organizationalUnit", "e", &memo), 0);
	ck_assert_int_eq(keys_of("top,no such class", "f", &memo), 0);
	/* A value the rule cannot normalize (empty): an error, and nothing kept. */
	ck_assert_int_eq(keys_of("top,-", "g", &memo), ENTRY_INDEX_BAD_VALUE);
	ck_assert_ptr_null(memo.ix);
	ck_assert_int_eq(keys_of("top,-", "g", &memo), ENTRY_INDEX_BAD_VALUE);
	ck_assert_int_eq(keys_of("top,person", "h", &memo), 0);
	entry_index_memo_free(&memo);
}
END_TEST

/* A name looked up under one schema (and not found) is found under the next. */
START_TEST(schema_lookup_after_reload)
{
	char err[256];
	ck_assert_ptr_null(schema_oc_find("OpenLDAPperson", 14));
	ck_assert_ptr_nonnull(schema_attr_find("cn", 2));
	schema_free();
	ck_assert_ptr_null(schema_attr_find("cn", 2));
	ck_assert_int_eq(
	    schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES " openldap", err, sizeof(err)), 0);
	const struct schema_oc *oc = schema_oc_find("OpenLDAPperson", 14);
	ck_assert_ptr_nonnull(oc);
	ck_assert_str_eq(oc->name, "OpenLDAPperson");
	ck_assert_ptr_eq(schema_oc_find("openldapPERSON", 14), oc);
	ck_assert_str_eq(schema_attr_find("commonName", 10)->name, "cn");
}
END_TEST

static Suite *entry_index_suite(void)
{
	Suite *s = suite_create("entry_index");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, memo_same_keys);
	tcase_add_test(tc, schema_lookup_after_reload);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(entry_index_suite());
}
