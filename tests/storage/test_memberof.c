/*
 * Unit tests for what minidir-import derives from the schema and the groups:
 * memberOf (storage/memberof.h), the objectClass index holding every
 * superclass, and the refusal of a database made by an older format.
 * Run from the repository root; reads the tree's schemas (schema/, tests/tree_schema.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "storage/db_impl.h"
#include "tests/tree_schema.h"
#include "storage/db.h"
#include "ldif/ldif_import.h"
#include "tests/check_run.h"
#include "tests/storage/group_ldif.h"
#include "tests/storage/meta_edit.h"
#include "tests/storage/tmp_import.h"

static struct tmp_import tmp;

/* Groups come before their members; bob's memberOf in the LDIF is stale. */
static const char ldif[] =
    "dn: dc=example,dc=com\n"
    "objectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n"
    "dn: ou=groups,dc=example,dc=com\nobjectClass: organizationalUnit\nou: groups\n\n"
    "dn: cn=admins,ou=groups,dc=example,dc=com\nobjectClass: groupOfNames\ncn: admins\n"
    "member: uid=alice,ou=people,dc=example,dc=com\n"
    "member: UID=Alice, OU=People, DC=Example, DC=Com\n"
    "member: uid=ghost,ou=people,dc=example,dc=com\n"
    "member: cn=leads,ou=groups,dc=example,dc=com\n\n"
    "dn: cn=Leads,ou=groups,dc=example,dc=com\nobjectClass: groupOfNames\ncn: leads\n"
    "member: uid=bob,ou=people,dc=example,dc=com\n\n"
    "dn: cn=uniq,ou=groups,dc=example,dc=com\nobjectClass: groupOfUniqueNames\ncn: uniq\n"
    "uniqueMember: uid=alice,ou=people,dc=example,dc=com#'0101'B\n"
    "uniqueMember: uid=bob,ou=people,dc=example,dc=com\n\n"
    "dn: ou=people,dc=example,dc=com\nobjectClass: organizationalUnit\nou: people\n\n"
    "dn: uid=alice,ou=people,dc=example,dc=com\nobjectClass: OpenLDAPperson\nuid: alice\n"
    "cn: Alice\nsn: A\n\n"
    "dn: uid=bob,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: bob\n"
    "cn: Bob\nsn: B\nmemberOf: cn=stale,ou=groups,dc=example,dc=com\n\n"
    "dn: uid=carol,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: carol\n"
    "cn: Carol\nsn: C\n";

static void setup(void)
{
	char *const index[] = {"objectClass", "uid"};
	struct import_opts opts = {
	    .suffix = "dc=example,dc=com", .index = index, .nindex = 2, .err = stderr};
	tmp_import(&tmp, "memberof", ldif, &opts, 9);
}

static void teardown(void)
{
	tmp_import_remove(&tmp);
}

static entry_id id_of(const struct db *db, MDB_txn *txn, const char *dn)
{
	return group_dn_id(db, txn, dn);
}

struct seen {
	entry_id ids[8];
	size_t n;
};

static int collect(entry_id group, void *arg)
{
	struct seen *s = arg;
	ck_assert_uint_lt(s->n, 8);
	s->ids[s->n++] = group;
	return 0;
}

/* The groups of dn, as IDs in ID order. */
static struct seen groups_of(const struct db *db, MDB_txn *txn, const char *dn)
{
	struct seen s = {.n = 0};
	ck_assert_int_eq(db_foreach_group(db, db_read_of(txn), id_of(db, txn, dn), collect, &s), 0);
	return s;
}

/* IDs under value in index attr. */
static size_t index_count(const struct db *db, MDB_txn *txn, const char *attr, const char *value)
{
	const struct db_index *ix = db_index_find(db, attr, strlen(attr));
	ck_assert_ptr_nonnull(ix);
	MDB_val k = {strlen(value), (void *)value}, v;
	MDB_cursor *cur;
	size_t n = 0;
	ck_assert_int_eq(mdb_cursor_open(txn, ix->dbi, &cur), 0);
	if (mdb_cursor_get(cur, &k, &v, MDB_SET) == 0)
		ck_assert_int_eq(mdb_cursor_count(cur, &n), 0);
	mdb_cursor_close(cur);
	return n;
}

START_TEST(member_of_direct_groups)
{
	struct db db;
	char err[512];
	ck_assert_msg(db_open(&db, tmp.db_path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "%s",
	              err);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	entry_id admins = id_of(&db, txn, "cn=admins,ou=groups,dc=example,dc=com");
	entry_id leads = id_of(&db, txn, "cn=leads,ou=groups,dc=example,dc=com");
	entry_id uniq = id_of(&db, txn, "cn=uniq,ou=groups,dc=example,dc=com");

	/* Listed twice in admins (two spellings), once in uniq with a UID part. */
	struct seen s = groups_of(&db, txn, "uid=alice,ou=people,dc=example,dc=com");
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.ids[0], admins);
	ck_assert_uint_eq(s.ids[1], uniq);
	/* Direct only: bob is in leads, leads in admins; bob is not in admins. */
	s = groups_of(&db, txn, "uid=bob,ou=people,dc=example,dc=com");
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.ids[0], leads);
	ck_assert_uint_eq(s.ids[1], uniq);
	s = groups_of(&db, txn, "cn=leads,ou=groups,dc=example,dc=com");
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.ids[0], admins);
	ck_assert_uint_eq(groups_of(&db, txn, "uid=carol,ou=people,dc=example,dc=com").n, 0);

	/* The stale memberOf from the LDIF is not stored. */
	struct entry_view e;
	const unsigned char *vals;
	size_t vlen;
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn),
	                              id_of(&db, txn, "uid=bob,ou=people,dc=example,dc=com"), &e),
	                 0);
	ck_assert(!entry_find_attr(&e, "memberOf", 8, &vals, &vlen));

	/* eq.memberof: members by the group's normalized DN (the DN's case folded). */
	ck_assert_uint_eq(
	    index_count(&db, txn, "memberOf", "cn=admins,ou=groups,dc=example,dc=com"),
	    2); /* alice and leads */
	ck_assert_uint_eq(index_count(&db, txn, "memberOf", "cn=leads,ou=groups,dc=example,dc=com"),
	                  1);
	ck_assert_uint_eq(index_count(&db, txn, "memberOf", "cn=stale,ou=groups,dc=example,dc=com"),
	                  0);
	mdb_txn_abort(txn);
	db_close(&db);
}
END_TEST

START_TEST(objectclass_index_holds_superclasses)
{
	struct db db;
	char err[512];
	ck_assert_int_eq(db_open(&db, tmp.db_path, false, NULL, NULL, 0, err, sizeof(err)), 0);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	/* Keys are OIDs. person 2.5.6.6: alice (OpenLDAPperson), bob, carol (inetOrgPerson). */
	ck_assert_uint_eq(index_count(&db, txn, "objectClass", "2.5.6.6"), 3);
	/* pilotPerson 0.9.2342.19200300.100.4.4: alice only. */
	ck_assert_uint_eq(index_count(&db, txn, "objectClass", "0.9.2342.19200300.100.4.4"), 1);
	/* top 2.5.6.0: every entry. */
	ck_assert_uint_eq(index_count(&db, txn, "objectClass", "2.5.6.0"), 9);
	mdb_txn_abort(txn);
	db_close(&db);
}
END_TEST

START_TEST(older_format_refused_with_advice)
{
	/* Rewrite the format mark as an older minidir-import wrote it. */
	meta_edit(tmp.db_path, "format", "minidir-2");

	struct db db;
	char err[512];
	ck_assert_int_eq(db_open(&db, tmp.db_path, false, NULL, NULL, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "format minidir-2") && strstr(err, "import the LDIF again"), "%s",
	              err);
}
END_TEST

static Suite *memberof_suite(void)
{
	Suite *s = suite_create("memberof");
	TCase *tc = tcase_create("import");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, member_of_direct_groups);
	tcase_add_test(tc, objectclass_index_holds_superclasses);
	tcase_add_test(tc, older_format_refused_with_advice);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_schema(memberof_suite(), "core cosine inetorgperson nis openldap");
}
