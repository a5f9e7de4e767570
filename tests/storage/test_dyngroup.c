/*
 * Unit tests for dynamic groups at import (storage/dyngroup.h): each scope of a memberURL,
 * a group's several URLs finding one entry (a member once), static member values kept
 * beside the found ones, bad URLs ignored with a warning, memberOf of the found entries,
 * the member index, and the dynamic_groups_max bound.
 * Run from the repository root; reads the tree's schemas (schema/, with dyngroup).
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
#include "tests/check_run.h"
#include "tests/storage/group_ldif.h"
#include "tests/tree_schema.h"

static char dir[64], db_path[128], ldif_path[128], warn_path[128];

#define S "dc=example,dc=com"
#define P "ou=people," S
static const char ldif[] =
    "dn: " S "\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n\n"
    "dn: ou=groups," S "\nobjectClass: organizationalUnit\nou: groups\n\n"
    "dn: " P "\nobjectClass: organizationalUnit\nou: people\n\n"
    "dn: ou=deep," P "\nobjectClass: organizationalUnit\nou: deep\n\n"
    "dn: uid=a," P "\nobjectClass: inetOrgPerson\nuid: a\ncn: A\nsn: A\ntitle: x\n\n"
    "dn: uid=b," P "\nobjectClass: inetOrgPerson\nuid: b\ncn: B\nsn: B\n\n"
    "dn: uid=c,ou=deep," P "\nobjectClass: inetOrgPerson\nuid: c\ncn: C\nsn: C\ntitle: x\n\n"
    "dn: cn=base,ou=groups," S "\nobjectClass: groupOfURLs\ncn: base\n"
    "memberURL: ldap:///uid=a," P "\n\n" /* no scope: base; no filter: every entry */
    "dn: cn=one,ou=groups," S "\nobjectClass: groupOfURLs\ncn: one\n"
    "memberURL: ldap:///" P "??one?(objectClass=inetOrgPerson)\n\n"
    "dn: cn=sub,ou=groups," S "\nobjectClass: groupOfURLs\ncn: sub\n"
    "memberURL: ldap:///" P "??sub?(title=x)\n"
    "memberURL: ldap:///" P "??sub?(uid=a)\n"    /* a again: a member once */
    "memberURL: ldap:///bad=dn=x??sub?(uid=b)\n" /* not a DN: ignored */
    "memberURL: nothing\n\n"                     /* not a URL: ignored */
    "dn: cn=children,ou=groups," S "\nobjectClass: groupOfURLs\ncn: children\n"
    "memberURL: ldap:///" P "??children?(objectClass=organizationalUnit)\n\n"
    "dn: cn=none,ou=groups," S "\nobjectClass: groupOfURLs\ncn: none\n"
    "memberURL: ldap:///" P "??sub?(uid=nobody)\n\n"
    "dn: cn=static,ou=groups," S "\nobjectClass: groupOfURLs\nobjectClass: extensibleObject\n"
    "cn: static\nmember: uid=b," P "\nmemberURL: ldap:///" P "??sub?(uid=c)\n\n";

/* Imports the LDIF with dynamic groups on and max URLs; returns
 * ldif_import's result, the warnings in warn_path. */
static int import(int max)
{
	FILE *f = fopen(ldif_path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(ldif, f);
	fclose(f);
	FILE *w = fopen(warn_path, "w");
	ck_assert_ptr_nonnull(w);
	char *const index[] = {"objectClass", "member"};
	struct import_opts opts = {.suffix = S,
	                           .index = index,
	                           .nindex = 2,
	                           .err = w,
	                           .dynamic_groups = true,
	                           .dynamic_groups_max = max};
	size_t count;
	int rc = ldif_import(ldif_path, db_path, &opts, &count);
	fclose(w);
	return rc;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-dyngroup-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/test.mdb", dir);
	snprintf(ldif_path, sizeof(ldif_path), "%s/test.ldif", dir);
	snprintf(warn_path, sizeof(warn_path), "%s/warn.txt", dir);
}

static void teardown(void)
{
	unlink(db_path);
	unlink(ldif_path);
	unlink(warn_path);
	rmdir(dir);
}

static entry_id id_of(const struct db *db, MDB_txn *txn, const char *dn)
{
	return group_dn_id(db, txn, dn);
}

/* The member values of group cn=NAME, joined by "|" into out. */
static void members(const struct db *db, MDB_txn *txn, const char *name, char *out, size_t len)
{
	char dn[256];
	snprintf(dn, sizeof(dn), "cn=%s,ou=groups," S, name);
	struct entry_view e;
	ck_assert_int_eq(db_get_entry(db, db_read_of(txn), id_of(db, txn, dn), &e), 0);
	const unsigned char *p, *end, *v;
	size_t n, vlen;
	out[0] = '\0';
	if (!entry_find_attr(&e, "member", 6, &p, &n))
		return;
	for (end = p + n; entry_next_value(&p, end, &v, &vlen);)
		snprintf(out + strlen(out), len - strlen(out), "%s%.*s", out[0] ? "|" : "",
		         (int)vlen, (const char *)v);
}

static int count_group(entry_id group, void *arg)
{
	(void)group;
	++*(int *)arg;
	return 0;
}

START_TEST(members_by_scope_and_filter)
{
	ck_assert_int_eq(import(100), 0);
	struct db db;
	char err[512], got[1024];
	ck_assert_msg(db_open(&db, db_path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "%s",
	              err);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	members(&db, txn, "base", got, sizeof(got));
	ck_assert_str_eq(got, "uid=a," P);
	members(&db, txn, "one", got, sizeof(got));
	ck_assert_str_eq(got, "uid=a," P "|uid=b," P);
	members(&db, txn, "sub", got, sizeof(got));
	ck_assert_str_eq(got, "uid=a," P "|uid=c,ou=deep," P);
	members(&db, txn, "children", got, sizeof(got));
	ck_assert_str_eq(got, "ou=deep," P);
	members(&db, txn, "none", got, sizeof(got));
	ck_assert_str_eq(got, "");
	members(&db, txn, "static", got, sizeof(got));
	ck_assert_str_eq(got, "uid=b," P "|uid=c,ou=deep," P);

	/* memberOf: a is in base, one, sub; c in sub and static; b in one and static. */
	int n = 0;
	ck_assert_int_eq(
	    db_foreach_group(&db, db_read_of(txn), id_of(&db, txn, "uid=a," P), count_group, &n),
	    0);
	ck_assert_int_eq(n, 3);
	n = 0;
	ck_assert_int_eq(db_foreach_group(&db, db_read_of(txn), id_of(&db, txn, "uid=c,ou=deep," P),
	                                  count_group, &n),
	                 0);
	ck_assert_int_eq(n, 2);
	n = 0;
	ck_assert_int_eq(
	    db_foreach_group(&db, db_read_of(txn), id_of(&db, txn, "uid=b," P), count_group, &n),
	    0);
	ck_assert_int_eq(n, 2);

	/* The member index holds the found values too. */
	const struct db_index *ix = db_index_find(&db, "member", 6);
	ck_assert_ptr_nonnull(ix);
	struct buf key = {0};
	const char *c = "uid=c,ou=deep," P;
	ck_assert_int_eq(match_normalize(ix->rule, c, strlen(c), &key), 0);
	MDB_val k = {key.len, key.data}, v;
	MDB_cursor *cur;
	size_t dups = 0;
	ck_assert_int_eq(mdb_cursor_open(txn, ix->dbi, &cur), 0);
	ck_assert_int_eq(mdb_cursor_get(cur, &k, &v, MDB_SET), 0);
	ck_assert_int_eq(mdb_cursor_count(cur, &dups), 0);
	ck_assert_uint_eq(dups, 2); /* sub and static */
	mdb_cursor_close(cur);
	buf_free(&key);
	mdb_txn_abort(txn);
	db_close(&db);

	/* The two bad URLs were warned about, with the entry. */
	FILE *w = fopen(warn_path, "r");
	ck_assert_ptr_nonnull(w);
	char text[2048];
	size_t len = fread(text, 1, sizeof(text) - 1, w);
	fclose(w);
	text[len] = '\0';
	ck_assert_msg(strstr(text,
	                     "entry \"cn=sub,ou=groups," S "\": memberURL \"nothing\" ignored: "
	                     "not an LDAP URL"),
	              "%s", text);
	ck_assert_msg(strstr(text, "bad=dn=x??sub?(uid=b)\" ignored: its base is not a DN"), "%s",
	              text);
}
END_TEST

START_TEST(more_urls_than_the_bound_fail)
{
	/* 7 URLs parse (base, one, sub x2, children, none, static); 6 allowed. */
	ck_assert_int_eq(import(6), -1);
	FILE *w = fopen(warn_path, "r");
	char text[4096];
	size_t len = fread(text, 1, sizeof(text) - 1, w);
	fclose(w);
	text[len] = '\0';
	ck_assert_msg(strstr(text, "more than 6 memberURL values (dynamic_groups_max)"), "%s",
	              text);
	ck_assert_int_ne(access(db_path, F_OK), 0); /* nothing replaced */
	ck_assert_int_eq(import(7), 0);
}
END_TEST

static Suite *dyngroup_suite(void)
{
	Suite *s = suite_create("dyngroup");
	TCase *tc = tcase_create("import");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, members_by_scope_and_filter);
	tcase_add_test(tc, more_urls_than_the_bound_fail);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_schema(dyngroup_suite(), TEST_SCHEMA_FILES " dyngroup");
}
