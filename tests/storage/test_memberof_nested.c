/*
 * Unit tests for nested memberOf at import (storage/memberof_nested.h): the closure
 * through groups in groups and uniqueMember, a cycle, and the depth bound cutting a
 * chain deeper than MEMBEROF_NESTED_DEPTH with a warning naming the group.
 * Run from the repository root; reads the tree's schemas (schema/, tests/tree_schema.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldif/ldif_import.h"
#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "storage/db.h"
#include "storage/db_impl.h"
#include "storage/memberof_nested.h"
#include "tests/check_run.h"
#include "tests/storage/group_ldif.h"
#include "tests/tree_schema.h"

#define CHAIN (MEMBEROF_NESTED_DEPTH + 5)

static char dir[64], db_path[128], ldif_path[128], err_path[128];

static void write_ldif(void)
{
	FILE *f = fopen(ldif_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "dn: dc=example,dc=com\nobjectClass: dcObject\nobjectClass: organization\n"
	           "dc: example\no: Example\n\n");
	/* a in b, b in c (uniqueMember), c in a: a cycle; alice in a. */
	fprintf(f, "dn: cn=a,dc=example,dc=com\nobjectClass: groupOfNames\ncn: a\n"
	           "member: uid=alice,dc=example,dc=com\nmember: cn=c,dc=example,dc=com\n\n");
	fprintf(f, "dn: cn=b,dc=example,dc=com\nobjectClass: groupOfNames\ncn: b\n"
	           "member: cn=a,dc=example,dc=com\n\n");
	fprintf(f, "dn: cn=c,dc=example,dc=com\nobjectClass: groupOfUniqueNames\ncn: c\n"
	           "uniqueMember: cn=b,dc=example,dc=com#'01'B\n\n");
	fprintf(f, "dn: cn=d,dc=example,dc=com\nobjectClass: groupOfNames\ncn: d\n"
	           "member: cn=c,dc=example,dc=com\n\n");
	/* bob's one group outside the chain. */
	fprintf(f, "dn: cn=e,dc=example,dc=com\nobjectClass: groupOfNames\ncn: e\n"
	           "member: uid=bob,dc=example,dc=com\n\n");
	/* bob in chain1, chain(i) in chain(i+1): deeper than the bound. */
	group_ldif_chain(f, CHAIN);
	fprintf(f, "dn: uid=alice,dc=example,dc=com\nobjectClass: account\nuid: alice\n\n");
	fprintf(f, "dn: uid=bob,dc=example,dc=com\nobjectClass: account\nuid: bob\n\n");
	fclose(f);
}

/* Imports with memberof_nested as nested; the warnings go to err_path. */
static void import(bool nested)
{
	group_import(ldif_path, db_path, nested, err_path);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-nested-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/test.mdb", dir);
	snprintf(ldif_path, sizeof(ldif_path), "%s/test.ldif", dir);
	snprintf(err_path, sizeof(err_path), "%s/err.txt", dir);
	write_ldif();
}

static void teardown(void)
{
	unlink(db_path);
	unlink(ldif_path);
	unlink(err_path);
	rmdir(dir);
}

static entry_id id_of(const struct db *db, MDB_txn *txn, const char *rdn)
{
	return group_id_of(db, txn, rdn);
}

struct seen {
	entry_id ids[64];
	size_t n;
};

static int collect(entry_id group, void *arg)
{
	struct seen *s = arg;
	ck_assert_uint_lt(s->n, 64);
	s->ids[s->n++] = group;
	return 0;
}

static bool has(const struct seen *s, entry_id id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ids[i] == id)
			return true;
	return false;
}

static struct seen groups_of(const struct db *db, MDB_txn *txn, const char *rdn)
{
	struct seen s = {.n = 0};
	ck_assert_int_eq(db_foreach_group(db, db_read_of(txn), id_of(db, txn, rdn), collect, &s),
	                 0);
	return s;
}

/* Members eq.memberof holds for the group rdn. */
static size_t members_of(const struct db *db, MDB_txn *txn, const char *rdn)
{
	char dn[128];
	snprintf(dn, sizeof(dn), "%s,dc=example,dc=com", rdn);
	const struct db_index *ix = db_index_find(db, "memberOf", 8);
	ck_assert_ptr_nonnull(ix);
	MDB_val k = {strlen(dn), dn}, v;
	MDB_cursor *cur;
	size_t n = 0;
	ck_assert_int_eq(mdb_cursor_open(txn, ix->dbi, &cur), 0);
	if (mdb_cursor_get(cur, &k, &v, MDB_SET) == 0)
		ck_assert_int_eq(mdb_cursor_count(cur, &n), 0);
	mdb_cursor_close(cur);
	return n;
}

static void open_db(struct db *db, MDB_txn **txn)
{
	char err[512];
	ck_assert_msg(db_open(db, db_path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(mdb_txn_begin(db->env, NULL, MDB_RDONLY, txn), 0);
}

START_TEST(closure_through_a_cycle)
{
	import(true);
	struct db db;
	MDB_txn *txn;
	open_db(&db, &txn);
	bool on = false;
	ck_assert_int_eq(memberof_nested_get(&db, db_read_of(txn), &on), 0);
	ck_assert(on);
	entry_id a = id_of(&db, txn, "cn=a"), b = id_of(&db, txn, "cn=b"),
	         c = id_of(&db, txn, "cn=c"), d = id_of(&db, txn, "cn=d");
	struct seen s = groups_of(&db, txn, "uid=alice");
	ck_assert_uint_eq(s.n, 4);
	ck_assert(has(&s, a) && has(&s, b) && has(&s, c) && has(&s, d));
	/* b is in c, c in a and d: b reaches itself through the cycle, so is its own group
	 * (as slapd's dynlist answers); d, in no cycle, is not. */
	s = groups_of(&db, txn, "cn=b");
	ck_assert_uint_eq(s.n, 4);
	ck_assert(has(&s, a) && has(&s, c) && has(&s, d) && has(&s, b));
	ck_assert_uint_eq(groups_of(&db, txn, "cn=d").n, 0);
	/* eq.memberof matches: d holds a, b, c, alice; a holds alice, c, b and a. */
	ck_assert_uint_eq(members_of(&db, txn, "cn=d"), 4);
	ck_assert_uint_eq(members_of(&db, txn, "cn=a"), 4);
	mdb_txn_abort(txn);
	db_close(&db);
}
END_TEST

START_TEST(depth_bound_cuts_with_a_warning)
{
	import(true);
	struct db db;
	MDB_txn *txn;
	open_db(&db, &txn);
	struct seen s = groups_of(&db, txn, "uid=bob");
	/* e and chain1..chainDEPTH: levels 1 to MEMBEROF_NESTED_DEPTH. */
	ck_assert_uint_eq(s.n, 1 + MEMBEROF_NESTED_DEPTH);
	char rdn[32];
	snprintf(rdn, sizeof(rdn), "cn=chain%d", MEMBEROF_NESTED_DEPTH);
	ck_assert(has(&s, id_of(&db, txn, rdn)));
	snprintf(rdn, sizeof(rdn), "cn=chain%d", MEMBEROF_NESTED_DEPTH + 1);
	ck_assert(!has(&s, id_of(&db, txn, rdn)));
	ck_assert_uint_eq(members_of(&db, txn, rdn), MEMBEROF_NESTED_DEPTH); /* bob cut */
	mdb_txn_abort(txn);
	db_close(&db);
	FILE *f = fopen(err_path, "r");
	ck_assert_ptr_nonnull(f);
	char text[4096] = "";
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	char want[128];
	snprintf(want, sizeof(want),
	         "deeper than %d levels above cn=chain%d,dc=example,dc=com: cut",
	         MEMBEROF_NESTED_DEPTH, MEMBEROF_NESTED_DEPTH);
	ck_assert_msg(strstr(text, want), "warnings: %s", text);
}
END_TEST

START_TEST(off_keeps_direct_membership)
{
	import(false);
	struct db db;
	MDB_txn *txn;
	open_db(&db, &txn);
	bool on = true;
	ck_assert_int_eq(memberof_nested_get(&db, db_read_of(txn), &on), 0);
	ck_assert(!on);
	struct seen s = groups_of(&db, txn, "uid=alice");
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(members_of(&db, txn, "cn=d"), 1);
	mdb_txn_abort(txn);
	db_close(&db);
}
END_TEST

static Suite *nested_suite(void)
{
	Suite *s = suite_create("memberof_nested");
	TCase *tc = tcase_create("import");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, closure_through_a_cycle);
	tcase_add_test(tc, depth_bound_cuts_with_a_warning);
	tcase_add_test(tc, off_keeps_direct_membership);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_schema(nested_suite(), "core cosine inetorgperson nis openldap");
}
