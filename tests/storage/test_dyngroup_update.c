/*
 * Unit tests for dynamic groups on a replica (storage/dyngroup_update.h): changes applied
 * with storage/db_update.h to a database imported with dynamic_groups give the member
 * values, memberOf, the member and memberOf indexes, memberdn and dynmembers a fresh
 * import of the changed directory gives (tests/storage/db_compare.h, id2entry compared as
 * each group's set of member values, whose order is the order members came). Cases: an
 * entry that starts and stops matching a URL, a static member that stops matching (it
 * stays), the group's URL changed, the group deleted, a rename moving an entry out of
 * the URL's base, a subtree move and delete, a new version of the group's static values,
 * and nested memberOf through a dynamic group.
 * Run from the repository root; reads the tree's schemas (schema/, with dyngroup).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldif/ldif_import.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "storage/db_impl.h"
#include "storage/db_update.h"
#include "tests/check_run.h"
#include "tests/storage/db_compare.h"
#include "tests/storage/dir_model.h"
#include "tests/tree_schema.h"

#define SUFFIX "dc=example,dc=com"
#define P(rdn) rdn ",ou=people," SUFFIX
#define O(rdn) rdn ",ou=other," SUFFIX
#define G(rdn) rdn ",ou=groups," SUFFIX

static char dir[64], a_path[128], b_path[128], ldif_path[128];
static char *const index_attrs[] = {"objectClass", "uid", "member"};
static struct model M;
static bool nested_on;

static void import_to(const char *path)
{
	struct import_opts opts = {.suffix = SUFFIX,
	                           .index = index_attrs,
	                           .nindex = 3,
	                           .err = stderr,
	                           .creator = "cn=admin," SUFFIX,
	                           .memberof_nested = nested_on,
	                           .dynamic_groups = true,
	                           .dynamic_groups_max = 100};
	size_t count;
	model_write_ldif(&M, ldif_path);
	ck_assert_int_eq(ldif_import(ldif_path, path, &opts, &count), 0);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-dynrep-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a_path, sizeof(a_path), "%s/a.mdb", dir);
	snprintf(b_path, sizeof(b_path), "%s/b.mdb", dir);
	snprintf(ldif_path, sizeof(ldif_path), "%s/b.ldif", dir);
	memset(&M, 0, sizeof(M));
	nested_on = false;
	M.seed = 27;
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	model_free(&M);
}

/* The normalized member values of the entry dn in the file at path, sorted, one a line
 * ("" when it has none; "(no entry)" when there is no such entry); malloc'd. */
static char *members(const char *path, const char *dn)
{
	struct db db;
	char err[512];
	ck_assert_msg(db_open(&db, path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	struct buf ndn = {0}, key = {0};
	ck_assert_int_eq(dn_normalize(dn, strlen(dn), NULL, &key), 0);
	entry_id id;
	struct entry_view e;
	struct rows r = {0};
	char *out;
	if (db_dn2id(&db, db_read_of(txn), key.data, key.len, &id) != 0) {
		out = strdup("(no entry)");
		goto done;
	}
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
	const unsigned char *p, *v;
	size_t len, vlen;
	if (entry_find_attr(&e, "member", 6, &p, &len))
		for (const unsigned char *end = p + len; entry_next_value(&p, end, &v, &vlen);) {
			ndn.off = ndn.len = 0;
			ck_assert_int_eq(dn_normalize((const char *)v, vlen, &ndn, NULL), 0);
			rows_add(&r, strndup((const char *)ndn.data, ndn.len));
		}
	if (r.n)
		qsort(r.row, r.n, sizeof(*r.row), row_cmp);
	size_t total = 1;
	for (size_t i = 0; i < r.n; i++)
		total += strlen(r.row[i]) + 1;
	out = calloc(1, total);
	for (size_t i = 0; i < r.n; i++)
		strcat(strcat(out, r.row[i]), "\n");
done:
	rows_free(&r);
	buf_free(&ndn);
	buf_free(&key);
	mdb_txn_abort(txn);
	db_close(&db);
	return out;
}

/* The group dn in a_path has no member value. */
static void no_members(const char *dn)
{
	char *m = members(a_path, dn);
	ck_assert_str_eq(m, "");
	free(m);
}

/* Every table but id2entry (db_compare.h). */
static bool tables_same(const char *a, const char *b)
{
	return db_same_but(a, b, "id2entry|");
}

/* The database at a_path after the changes, against a fresh import of the model. */
static void check_same(void)
{
	import_to(b_path);
	ck_assert_msg(tables_same(a_path, b_path), "the tables differ from a fresh import");
	for (size_t i = 0; i < M.n; i++) {
		if (!M.e[i].live || !strstr(M.e[i].attrs, "groupOf"))
			continue;
		char *a = members(a_path, M.e[i].dn), *b = members(b_path, M.e[i].dn);
		ck_assert_msg(strcmp(a, b) == 0, "%s: members\n%s\nwhere a fresh import has\n%s",
		              M.e[i].dn, a, b);
		free(a);
		free(b);
	}
}

static void open_rw(struct db *db, const char *path)
{
	char err[512];
	ck_assert_msg(db_open_rw(db, path, SUFFIX, index_attrs, 3, err, sizeof(err)) == 0, "%s",
	              err);
}

static const struct model_file A = {a_path, SUFFIX, index_attrs, 3};

static void put_ok(struct mentry *e)
{
	model_put_ok(&A, e);
}

static void delete_ok(struct mentry *e, bool subtree)
{
	struct db_update_error err;
	int rc = model_apply(&A, e, true, subtree ? DB_UPDATE_SUBTREE : 0, &err);
	ck_assert_msg(rc == 0, "delete %s: %d %s", e->dn, rc, err.msg);
	char *dn = strdup(e->dn);
	for (size_t i = 0; i < M.n; i++)
		if (M.e[i].live && (subtree ? dn_under(M.e[i].dn, dn) : &M.e[i] == e))
			M.e[i].live = false;
	free(dn);
}

/* Whether the file at a_path lists member among group's members and group in member's
 * memberOf (memberof table); both or neither, else the test fails. */
static bool in_group(const char *group, const char *member)
{
	char *m = members(a_path, group);
	struct buf norm = {0};
	ck_assert_int_eq(dn_normalize(member, strlen(member), &norm, NULL), 0);
	ck_assert_int_eq(buf_append(&norm, "\n", 1), 0);
	ck_assert_int_eq(buf_append(&norm, "", 1), 0);
	bool listed = strstr(m, (const char *)norm.data) != NULL;
	free(m);
	buf_free(&norm);
	return listed;
}

static char *user(const char *uid, const char *dept)
{
	static char buf[512];
	snprintf(buf, sizeof(buf),
	         "objectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\ndepartmentNumber: %s\n", uid,
	         uid, uid, dept);
	return buf;
}

static const char sales_url[] =
    "memberURL: ldap:///ou=people," SUFFIX "??sub?(departmentNumber=sales)\n";

static void directory(void)
{
	model_add(&M, SUFFIX,
	          "objectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n");
	model_add(&M, "ou=people," SUFFIX, "objectClass: organizationalUnit\nou: people\n");
	model_add(&M, "ou=other," SUFFIX, "objectClass: organizationalUnit\nou: other\n");
	model_add(&M, "ou=groups," SUFFIX, "objectClass: organizationalUnit\nou: groups\n");
	model_add(&M, P("uid=ann"), user("ann", "sales"));
	model_add(&M, P("uid=ben"), user("ben", "eng"));
	model_add(&M, O("uid=oz"), user("oz", "sales"));
	char attrs[1024];
	snprintf(attrs, sizeof(attrs), "objectClass: groupOfURLs\ncn: sales\n%s", sales_url);
	model_add(&M, G("cn=sales"), attrs);
	/* Static member ben beside the URL; objectClass extensibleObject allows member. */
	snprintf(attrs, sizeof(attrs),
	         "objectClass: groupOfURLs\nobjectClass: extensibleObject\ncn: mixed\n"
	         "member: " P("uid=ben") "\n%s",
	         sales_url);
	model_add(&M, G("cn=mixed"), attrs);
	model_add(&M, G("cn=outer"),
	          "objectClass: groupOfNames\ncn: outer\nmember: " G("cn=sales") "\n");
}

START_TEST(entry_starts_and_stops_matching)
{
	directory();
	import_to(a_path);
	ck_assert(in_group(G("cn=sales"), P("uid=ann")));
	ck_assert(!in_group(G("cn=sales"), O("uid=oz"))); /* outside the URL's base */
	struct mentry *cy = model_add(&M, P("uid=cy"), user("cy", "sales"));
	put_ok(cy); /* an add that matches */
	ck_assert(in_group(G("cn=sales"), P("uid=cy")));
	check_same();
	struct mentry *ben = model_find(&M, P("uid=ben"));
	free(ben->attrs);
	ben->attrs = strdup(user("ben", "sales")); /* a modify that starts matching */
	put_ok(ben);
	ck_assert(in_group(G("cn=sales"), P("uid=ben")));
	check_same();
	struct mentry *ann = model_find(&M, P("uid=ann"));
	free(ann->attrs);
	ann->attrs = strdup(user("ann", "eng")); /* a modify that stops matching */
	put_ok(ann);
	ck_assert(!in_group(G("cn=sales"), P("uid=ann")));
	check_same();
	free(ann->attrs);
	ann->attrs = strdup(user("ann", "eng\ntitle: x")); /* a change that does not matter */
	put_ok(ann);
	check_same();
	delete_ok(cy, false); /* a member deleted */
	ck_assert(!in_group(G("cn=sales"), P("uid=cy")));
	check_same();
}
END_TEST

START_TEST(static_member_that_stops_matching_stays)
{
	directory();
	import_to(a_path);
	struct mentry *ben = model_find(&M, P("uid=ben"));
	free(ben->attrs);
	ben->attrs = strdup(user("ben", "sales")); /* static and found: one value */
	put_ok(ben);
	ck_assert(in_group(G("cn=mixed"), P("uid=ben")));
	check_same();
	free(ben->attrs);
	ben->attrs = strdup(user("ben", "eng")); /* stops matching: the static value stays */
	put_ok(ben);
	ck_assert(in_group(G("cn=mixed"), P("uid=ben")));
	ck_assert(!in_group(G("cn=sales"), P("uid=ben")));
	check_same();
	/* A new version of the group from the provider: its static values only, merged. */
	struct mentry *mixed = model_find(&M, G("cn=mixed"));
	char attrs[1024];
	snprintf(attrs, sizeof(attrs),
	         "objectClass: groupOfURLs\nobjectClass: extensibleObject\ncn: mixed\n"
	         "member: " O("uid=oz") "\n%s",
	         sales_url);
	free(mixed->attrs);
	mixed->attrs = strdup(attrs);
	put_ok(mixed);
	ck_assert(!in_group(G("cn=mixed"), P("uid=ben")));
	ck_assert(in_group(G("cn=mixed"), O("uid=oz")));
	ck_assert(in_group(G("cn=mixed"), P("uid=ann")));
	check_same();
	/* A static member that is also found, then no longer static: still found. */
	snprintf(attrs, sizeof(attrs),
	         "objectClass: groupOfURLs\nobjectClass: extensibleObject\ncn: mixed\n"
	         "member: " P("uid=ann") "\n%s",
	         sales_url);
	free(mixed->attrs);
	mixed->attrs = strdup(attrs);
	put_ok(mixed);
	check_same();
	snprintf(attrs, sizeof(attrs),
	         "objectClass: groupOfURLs\nobjectClass: extensibleObject\ncn: mixed\n%s",
	         sales_url);
	free(mixed->attrs);
	mixed->attrs = strdup(attrs);
	put_ok(mixed);
	ck_assert(in_group(G("cn=mixed"), P("uid=ann")));
	check_same();
}
END_TEST

START_TEST(group_url_changed)
{
	directory();
	import_to(a_path);
	struct mentry *sales = model_find(&M, G("cn=sales"));
	free(sales->attrs);
	sales->attrs = strdup("objectClass: groupOfURLs\ncn: sales\n"
	                      "memberURL: ldap:///" SUFFIX "??sub?(departmentNumber=sales)\n");
	put_ok(sales);
	ck_assert(in_group(G("cn=sales"), P("uid=ann")));
	ck_assert(in_group(G("cn=sales"), O("uid=oz")));
	check_same();
	free(sales->attrs);
	sales->attrs = strdup("objectClass: groupOfURLs\ncn: sales\n"
	                      "memberURL: ldap:///ou=other," SUFFIX "??one?(uid=*)\n"
	                      "memberURL: ldap:///uid=ben,ou=people," SUFFIX "\n");
	put_ok(sales);
	ck_assert(!in_group(G("cn=sales"), P("uid=ann")));
	ck_assert(in_group(G("cn=sales"), P("uid=ben")));
	check_same();
	/* No longer a dynamic group: its computed members go. */
	free(sales->attrs);
	sales->attrs = strdup("objectClass: groupOfURLs\ncn: sales\n");
	put_ok(sales);
	no_members(G("cn=sales"));
	check_same();
	/* And a new one added. */
	struct mentry *g2 = model_add(&M, G("cn=new"),
	                              "objectClass: groupOfURLs\ncn: new\n"
	                              "memberURL: ldap:///ou=people," SUFFIX "??one\n");
	put_ok(g2);
	ck_assert(in_group(G("cn=new"), P("uid=ann")));
	check_same();
}
END_TEST

START_TEST(group_deleted)
{
	directory();
	import_to(a_path);
	delete_ok(model_find(&M, G("cn=sales")), false);
	check_same();
	/* Its rows went: an entry that would have matched changes nothing now. */
	struct mentry *ben = model_find(&M, P("uid=ben"));
	free(ben->attrs);
	ben->attrs = strdup(user("ben", "sales"));
	put_ok(ben);
	check_same();
	/* A subtree delete taking groups and members together. */
	ck_assert(model_has_children(&M, model_find(&M, "ou=groups," SUFFIX)));
	delete_ok(model_find(&M, "ou=groups," SUFFIX), true);
	check_same();
}
END_TEST

START_TEST(rename_moves_an_entry_out_of_the_base)
{
	directory();
	import_to(a_path);
	struct mentry *ann = model_find(&M, P("uid=ann"));
	model_rename(&M, P("uid=ann"), P("uid=anne"));
	free(ann->attrs);
	ann->attrs = strdup(user("anne", "sales")); /* renamed in place: its value follows */
	put_ok(ann);
	ck_assert(in_group(G("cn=sales"), P("uid=anne")));
	ck_assert(!in_group(G("cn=sales"), P("uid=ann")));
	check_same();
	model_rename(&M, P("uid=anne"), O("uid=anne")); /* moved out of the URL's base */
	put_ok(ann);
	ck_assert(!in_group(G("cn=sales"), O("uid=anne")));
	check_same();
	model_rename(&M, O("uid=oz"), P("uid=oz")); /* and one moved in */
	put_ok(model_find(&M, P("uid=oz")));
	ck_assert(in_group(G("cn=sales"), P("uid=oz")));
	check_same();
	/* A subtree moved: everything below ou=people leaves the base. */
	struct mentry *people = model_find(&M, "ou=people," SUFFIX);
	model_rename(&M, "ou=people," SUFFIX, "ou=people,ou=other," SUFFIX);
	put_ok(people);
	no_members(G("cn=sales"));
	check_same();
}
END_TEST

/* memberOf through a dynamic group in a static one (memberof_nested = yes). */
START_TEST(nested_through_a_dynamic_group)
{
	nested_on = true;
	directory();
	import_to(a_path);
	check_same();
	struct mentry *ben = model_find(&M, P("uid=ben"));
	free(ben->attrs);
	ben->attrs = strdup(user("ben", "sales"));
	put_ok(ben); /* joins sales, and so outer */
	check_same();
	struct mentry *ann = model_find(&M, P("uid=ann"));
	free(ann->attrs);
	ann->attrs = strdup(user("ann", "eng"));
	put_ok(ann); /* leaves both */
	check_same();
	struct mentry *sales = model_find(&M, G("cn=sales"));
	free(sales->attrs);
	sales->attrs = strdup("objectClass: groupOfURLs\ncn: sales\n"
	                      "memberURL: ldap:///" SUFFIX "??sub?(uid=oz)\n");
	put_ok(sales);
	check_same();
}
END_TEST

/* The check can fail: a replica file whose computed members are stale differs. */
START_TEST(comparison_sees_stale_members)
{
	directory();
	import_to(a_path);
	struct mentry *ann = model_find(&M, P("uid=ann"));
	free(ann->attrs);
	ann->attrs = strdup(user("ann", "eng")); /* in the model only */
	import_to(b_path);
	char *a = members(a_path, G("cn=sales")), *b = members(b_path, G("cn=sales"));
	ck_assert_str_ne(a, b);
	ck_assert(!tables_same(a_path, b_path));
	free(a);
	free(b);
}
END_TEST

/* The setting is the file's (meta): one imported without it keeps its groups as stored;
 * a new replica's empty file takes the config's. */
START_TEST(file_made_without_it_keeps_groups_as_stored)
{
	directory();
	struct import_opts opts = {
	    .suffix = SUFFIX, .index = index_attrs, .nindex = 3, .err = stderr};
	size_t count;
	model_write_ldif(&M, ldif_path);
	ck_assert_int_eq(ldif_import(ldif_path, a_path, &opts, &count), 0);
	put_ok(model_add(&M, P("uid=cy"), user("cy", "sales")));
	no_members(G("cn=sales"));
	struct db db;
	MDB_txn *txn;
	bool on = true, stored = true;
	open_rw(&db, a_path);
	ck_assert_int_eq(db_meta_flag_follow(&db, "dynamic_groups", true, true, &stored), 0);
	ck_assert(!stored); /* entries in it: it keeps what it records */
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(db_meta_flag_get(&db, db_read_of(txn), "dynamic_groups", &on), 0);
	ck_assert(!on);
	mdb_txn_abort(txn);
	db_close(&db);
	/* A replica's new file: no entries yet, so it takes want. */
	char fresh[160];
	snprintf(fresh, sizeof(fresh), "%s/new.mdb", dir);
	open_rw(&db, fresh);
	ck_assert_int_eq(db_meta_flag_follow(&db, "dynamic_groups", true, true, &stored), 0);
	ck_assert(stored);
	db_close(&db);
	open_rw(&db, fresh);
	ck_assert_int_eq(db_meta_flag_follow(&db, "dynamic_groups", false, true, &stored), 0);
	ck_assert(!stored); /* empty still: it takes what the config says now */
	db_close(&db);
}
END_TEST

/* dynamic_groups_max on a replica: a group past it is kept as stored (and logged). */
START_TEST(group_past_the_bound_stays_static)
{
	directory(); /* sales and mixed: 2 URLs */
	import_to(a_path);
	struct db db;
	MDB_txn *txn;
	struct db_update_error err;
	struct mentry *g = model_add(&M, G("cn=third"),
	                             "objectClass: groupOfURLs\ncn: third\n"
	                             "memberURL: ldap:///ou=people," SUFFIX "??one\n");
	open_rw(&db, a_path);
	db.dynamic_groups_max = 2;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	ck_assert_int_eq(model_put(&db, txn, g, &err), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	no_members(G("cn=third"));
	ck_assert(in_group(G("cn=sales"), P("uid=ann"))); /* the others are kept */
	/* With room for it, its next version is a dynamic group. */
	open_rw(&db, a_path);
	db.dynamic_groups_max = 3;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	ck_assert_int_eq(model_put(&db, txn, g, &err), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	ck_assert(in_group(G("cn=third"), P("uid=ben")));
	check_same();
}
END_TEST

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Applies e in a transaction of its own on db; returns the seconds db_update_put took. */
static double timed_put(struct db *db, struct mentry *e)
{
	MDB_txn *txn;
	struct db_update_error err;
	ck_assert_int_eq(mdb_txn_begin(db->env, NULL, 0, &txn), 0);
	double t0 = now();
	int rc = model_put(db, txn, e, &err);
	double t = now() - t0;
	ck_assert_msg(rc == 0, "put %s: %s", e->dn, err.msg);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	return t;
}

/*
 * Not a test of speed (no timing is asserted; MINIDIR_BENCH=1): what a change costs on
 * 10,000 users and 10 dynamic groups of 1,000 members each (one subtree URL each), with
 * dynamic_groups and, for the modifies, without (a file imported without it, side by side).
 */
START_TEST(bench_changes_with_10_dynamic_groups)
{
	if (!getenv("MINIDIR_BENCH"))
		return;
	directory();
	char dn[128], uid[16], dept[8], attrs[256];
	for (int i = 0; i < 10000; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,ou=people," SUFFIX, i);
		snprintf(uid, sizeof(uid), "u%d", i);
		snprintf(dept, sizeof(dept), "d%d", i % 10);
		model_add(&M, dn, user(uid, dept));
	}
	for (int g = 0; g < 10; g++) {
		snprintf(dn, sizeof(dn), "cn=d%d,ou=groups," SUFFIX, g);
		snprintf(attrs, sizeof(attrs),
		         "objectClass: groupOfURLs\ncn: d%d\n"
		         "memberURL: ldap:///ou=people," SUFFIX "??sub?(departmentNumber=d%d)\n",
		         g, g);
		model_add(&M, dn, attrs);
	}
	import_to(a_path);
	struct import_opts off = {
	    .suffix = SUFFIX, .index = index_attrs, .nindex = 3, .err = stderr};
	size_t count;
	ck_assert_int_eq(ldif_import(ldif_path, b_path, &off, &count), 0);
	enum { N = 200 };
	static double t[5][N];
	struct db on_db, off_db;
	open_rw(&on_db, a_path);
	open_rw(&off_db, b_path);
	for (int i = 0; i < N; i++) {
		struct mentry *e = model_find(&M, P("uid=ann")) + 4 + model_rand(&M) % 10000;
		char *u = strstr(e->attrs, "uid: ") + 5;
		snprintf(uid, sizeof(uid), "%.*s", (int)(strchr(u, '\n') - u), u);
		int n = atoi(uid + 1);
		snprintf(dept, sizeof(dept), "d%d", n % 10);
		snprintf(attrs, sizeof(attrs), "%sdescription: %d\n", user(uid, dept), i);
		free(e->attrs);
		e->attrs = strdup(attrs); /* no group changes */
		t[0][i] = timed_put(&on_db, e);
		t[1][i] = timed_put(&off_db, e);
		snprintf(dept, sizeof(dept), "d%d", (n + 1 + i) % 10);
		free(e->attrs);
		e->attrs = strdup(user(uid, dept)); /* leaves its group, joins another */
		t[2][i] = timed_put(&on_db, e);
		t[3][i] = timed_put(&off_db, e);
	}
	for (int i = 0; i < N / 10; i++) {
		struct mentry *g = model_find(&M, "cn=d0,ou=groups," SUFFIX);
		snprintf(attrs, sizeof(attrs),
		         "objectClass: groupOfURLs\ncn: d0\n"
		         "memberURL: ldap:///ou=people," SUFFIX "??sub?(departmentNumber=d%d)\n",
		         i % 2);
		free(g->attrs);
		g->attrs = strdup(attrs); /* a full search of ou=people */
		t[4][i] = timed_put(&on_db, g);
	}
	db_close(&on_db);
	db_close(&off_db);
	const char *what[] = {"modify, no membership change, dynamic_groups on", "the same, off",
	                      "modify moving a user from one dynamic group to another, on",
	                      "the same, off",
	                      "a dynamic group's memberURL changed (10,000 entries searched)"};
	for (int k = 0; k < 5; k++) {
		int n = k == 4 ? N / 10 : N;
		qsort(t[k], (size_t)n, sizeof(double), dbl_cmp);
		printf("dynamic groups, 10 groups on 10,000 users: %s: median %.1f us\n", what[k],
		       t[k][n / 2] * 1e6);
	}
	check_same();
}
END_TEST

static Suite *dynrep_suite(void)
{
	Suite *s = suite_create("dyngroup_update");
	TCase *tc = tcase_create("replica");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, entry_starts_and_stops_matching);
	tcase_add_test(tc, static_member_that_stops_matching_stays);
	tcase_add_test(tc, group_url_changed);
	tcase_add_test(tc, group_deleted);
	tcase_add_test(tc, rename_moves_an_entry_out_of_the_base);
	tcase_add_test(tc, nested_through_a_dynamic_group);
	tcase_add_test(tc, comparison_sees_stale_members);
	tcase_add_test(tc, file_made_without_it_keeps_groups_as_stored);
	tcase_add_test(tc, group_past_the_bound_stays_static);
	tcase_add_test(tc, bench_changes_with_10_dynamic_groups);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_schema(dynrep_suite(), TEST_SCHEMA_FILES " dyngroup");
}
