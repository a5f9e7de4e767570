/*
 * Unit tests for storage/db_update.h: changes applied to an imported database give
 * exactly the tables a fresh import of the changed directory gives (but for entry IDs,
 * tests/storage/db_compare.h), for scripted and for seeded random changes; bad changes
 * are refused with their LDAP result code and change nothing; the replication cookie;
 * a replica's database made from no file by db_open_rw. With MINIDIR_BENCH=1, also
 * prints the median time of an add and a modify on a 10,000-entry database.
 * Run from the repository root; reads the tree's schemas (schema/, tests/tree_schema.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/schema.h"
#include "storage/db_impl.h"
#include "tests/tree_schema.h"
#include "storage/db_update.h"
#include "storage/entry_opattrs.h"
#include "ldif/ldif_import.h"
#include "tests/check_run.h"
#include "tests/storage/db_compare.h"
#include "tests/storage/dir_model.h"

#define SUFFIX "dc=example,dc=com"

static char dir[64], a_path[128], b_path[128], ldif_path[128];
static char *const index_attrs[] = {"objectClass", "uid", "cn", "mail", "member", "uniqueMember"};
static struct model M;
static bool nested_on; /* imports (and so the changes after) with memberof_nested */

static void import_to(const char *path)
{
	struct import_opts opts = {.suffix = SUFFIX,
	                           .index = index_attrs,
	                           .nindex = 6,
	                           .err = stderr,
	                           .creator = "cn=admin," SUFFIX,
	                           .memberof_nested = nested_on};
	size_t count;
	model_write_ldif(&M, ldif_path);
	ck_assert_int_eq(ldif_import(ldif_path, path, &opts, &count), 0);
}

static void open_rw(struct db *db, const char *path)
{
	char err[512];
	ck_assert_msg(db_open_rw(db, path, SUFFIX, index_attrs, 6, err, sizeof(err)) == 0, "%s",
	              err);
	/* Its records move as it changes: where each was read is not remembered. */
	ck_assert_ptr_null(db->records_at);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-update-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a_path, sizeof(a_path), "%s/a.mdb", dir);
	snprintf(b_path, sizeof(b_path), "%s/b.mdb", dir);
	snprintf(ldif_path, sizeof(ldif_path), "%s/b.ldif", dir);
	memset(&M, 0, sizeof(M));
	nested_on = false;
	M.seed = 42;
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	model_free(&M);
}

static char *user_attrs(const char *uid, const char *extra)
{
	static char buf[4096];
	int n = snprintf(
	    buf, sizeof(buf),
	    "objectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nmail: %s@example.com\n%s", uid,
	    uid, uid, uid, extra);
	ck_assert(n > 0 && (size_t)n < sizeof(buf));
	return buf;
}

static void base_directory(void)
{
	model_add(&M, SUFFIX,
	          "objectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n");
	model_add(&M, "ou=people," SUFFIX, "objectClass: organizationalUnit\nou: people\n");
	model_add(&M, "ou=groups," SUFFIX, "objectClass: organizationalUnit\nou: groups\n");
}

/* The database at a_path, after the changes, against an import of the model. */
static void check_same(void)
{
	import_to(b_path);
	ck_assert_msg(db_same(a_path, b_path), "the database differs from a fresh import");
}

static const struct model_file A = {a_path, SUFFIX, index_attrs, 6};

/* Applies entry e to a_path in a transaction of its own. */
static void put_ok(struct mentry *e)
{
	model_put_ok(&A, e);
}

static int delete_one(struct mentry *e, unsigned flags, struct db_update_error *err)
{
	return model_apply(&A, e, true, flags, err);
}

/* Marks e and, with subtree, everything below it deleted in the model. */
static void model_delete(struct mentry *e, bool subtree)
{
	char *dn = strdup(e->dn);
	for (size_t i = 0; i < M.n; i++)
		if (M.e[i].live && (subtree ? dn_under(M.e[i].dn, dn) : &M.e[i] == e))
			M.e[i].live = false;
	free(dn);
}

static void set_attrs(struct mentry *e, const char *attrs)
{
	free(e->attrs);
	e->attrs = strdup(attrs);
}

#define P(rdn) rdn ",ou=people," SUFFIX
#define G(rdn) rdn ",ou=groups," SUFFIX

static void scripted_directory(void)
{
	base_directory();
	model_add(&M, P("ou=eng"), "objectClass: organizationalUnit\nou: eng\n");
	model_add(&M, P("ou=ops"), "objectClass: organizationalUnit\nou: ops\n");
	model_add(&M, P("uid=alice,ou=eng"), user_attrs("alice", ""));
	model_add(&M, P("uid=bob,ou=eng"), user_attrs("bob", ""));
	model_add(&M, P("uid=carol,ou=ops"), user_attrs("carol", ""));
	model_add(&M, P("uid=dave"), user_attrs("dave", ""));
	model_add(&M, G("cn=admins"),
	          "objectClass: groupOfNames\ncn: admins\nmember: " P(
	              "uid=alice,ou=eng") "\n"
	                                  "member: " P("uid=carol,ou=ops") "\nmember: " P(
	                                      "uid=zed,ou=ops") "\n");
	model_add(&M, G("cn=uniq"),
	          "objectClass: groupOfUniqueNames\ncn: uniq\n"
	          "uniqueMember: " P("uid=bob,ou=eng") "#'0101'B\n");
	model_add(&M, G("cn=nested"),
	          "objectClass: groupOfNames\ncn: nested\nmember: " G(
	              "cn=admins") "\n"
	                           "member: " P("uid=dave") "\n");
}

/* _i 1: with nested memberOf (storage/memberof_nested.h), groups in groups renamed. */
START_TEST(scripted_changes_match_a_fresh_import)
{
	nested_on = _i == 1;
	scripted_directory();
	import_to(a_path);
	check_same();
	/* A member that did not exist yet. */
	put_ok(model_add(&M, P("uid=zed,ou=ops"), user_attrs("zed", "")));
	check_same();
	/* Modify: values of indexed attributes. */
	struct mentry *bob = model_find(&M, P("uid=bob,ou=eng"));
	set_attrs(bob, "objectClass: inetOrgPerson\nuid: bob\ncn: bob\ncn: Robert\nsn: bob\n"
	               "mail: robert@example.com\n");
	put_ok(bob);
	check_same();
	/* Group membership changes. */
	struct mentry *admins = model_find(&M, G("cn=admins"));
	set_attrs(admins, "objectClass: groupOfNames\ncn: admins\nmember: " P(
	                      "uid=alice,ou=eng") "\n"
	                                          "member: " P("uid=bob,ou=eng") "\nmember: " P(
	                                              "uid=dave") "\n");
	put_ok(admins);
	check_same();
	/* Rename a member (new RDN value, old one gone). */
	struct mentry *dave = model_find(&M, P("uid=dave"));
	model_rename(&M, P("uid=dave"), P("uid=david"));
	set_attrs(dave, user_attrs("david", ""));
	put_ok(dave);
	check_same();
	/* Subtree move: eng and its people go under ops. */
	struct mentry *eng = model_find(&M, P("ou=eng"));
	model_rename(&M, P("ou=eng"), P("ou=eng,ou=ops"));
	put_ok(eng);
	check_same();
	/* Delete a leaf member. */
	struct db_update_error err;
	struct mentry *carol = model_find(&M, P("uid=carol,ou=ops"));
	ck_assert_int_eq(delete_one(carol, 0, &err), 0);
	model_delete(carol, false);
	check_same();
	/* Rename a group that is a member of another. */
	model_rename(&M, G("cn=admins"), G("cn=root"));
	set_attrs(
	    admins,
	    "objectClass: groupOfNames\ncn: root\nmember: " P(
	        "uid=alice,ou=eng,ou="
	        "ops") "\nmember: " P("uid=bob,ou=eng,ou=ops") "\nmember: " P("uid=david") "\n");
	put_ok(admins);
	check_same();
	struct mentry *nested = model_find(&M, G("cn=nested"));
	set_attrs(nested, "objectClass: groupOfNames\ncn: nested\nmember: " G("cn=root") "\n");
	put_ok(nested);
	check_same();
	/* Delete a group. */
	struct mentry *uniq = model_find(&M, G("cn=uniq"));
	ck_assert_int_eq(delete_one(uniq, 0, &err), 0);
	model_delete(uniq, false);
	check_same();
	/* A subtree: refused without the flag, gone with it. */
	struct mentry *ops = model_find(&M, P("ou=ops"));
	ck_assert_int_eq(delete_one(ops, 0, &err), LDAP_NOT_ALLOWED_ON_NONLEAF);
	check_same();
	ck_assert_int_eq(delete_one(ops, DB_UPDATE_SUBTREE, &err), 0);
	model_delete(ops, true);
	check_same();
}
END_TEST

/* The record of password classes (storage/db_passwords.h) after each change: as a
 * fresh import counts them (db_compare compares classes and counts). */
START_TEST(password_classes_follow_changes)
{
	base_directory();
	model_add(
	    &M, P("uid=alice"),
	    user_attrs("alice", "userPassword: {SSHA}7VvIAnNCns+jNqtQ7qvrLbH9TKGPOhxekrBNfg==\n"));
	model_add(&M, P("uid=bob"), user_attrs("bob", "userPassword: plain-bob\n"));
	model_add(&M, P("ou=eng"), "objectClass: organizationalUnit\nou: eng\n");
	import_to(a_path);
	check_same();
	/* A new user with a new scheme. */
	put_ok(model_add(&M, P("uid=carol,ou=eng"),
	                 user_attrs("carol", "userPassword: {CRYPT}$6$rounds=5000$salt$hash\n")));
	check_same();
	/* A second value of a class; one of an unknown scheme. */
	put_ok(model_add(&M, P("uid=dave,ou=eng"),
	                 user_attrs("dave", "userPassword: {CRYPT}$6$rounds=5000$other$x\n"
	                                    "userPassword: {NOSUCH}dave\n")));
	check_same();
	/* Modify: bob's plaintext becomes {SSHA} (plaintext's count goes to 0). */
	struct mentry *bob = model_find(&M, P("uid=bob"));
	set_attrs(bob, user_attrs("bob", "userPassword: {SSHA}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"));
	put_ok(bob);
	check_same();
	/* A modify of another attribute leaves the record alone. */
	struct mentry *alice = model_find(&M, P("uid=alice"));
	set_attrs(alice,
	          user_attrs("alice",
	                     "description: x\n"
	                     "userPassword: {SSHA}7VvIAnNCns+jNqtQ7qvrLbH9TKGPOhxekrBNfg==\n"));
	put_ok(alice);
	check_same();
	/* A move of a subtree with passwords in it. */
	struct mentry *eng = model_find(&M, P("ou=eng"));
	model_rename(&M, P("ou=eng"), P("ou=dev"));
	set_attrs(eng, "objectClass: organizationalUnit\nou: dev\n");
	put_ok(eng);
	check_same();
	/* Deletes: one entry, then the subtree (the {CRYPT} class and the unknown value go). */
	struct db_update_error err;
	ck_assert_int_eq(delete_one(alice, 0, &err), 0);
	model_delete(alice, false);
	check_same();
	ck_assert_int_eq(delete_one(eng, DB_UPDATE_SUBTREE, &err), 0);
	model_delete(eng, true);
	check_same();
}
END_TEST

/* The check must be able to fail: a change made to the database only, and an index
 * key taken away, are both seen. */
START_TEST(comparison_sees_a_difference)
{
	scripted_directory();
	import_to(a_path);
	check_same();
	struct mentry *bob = model_find(&M, P("uid=bob,ou=eng"));
	char *keep = strdup(bob->attrs);
	set_attrs(bob, user_attrs("bob", "description: changed\n"));
	put_ok(bob);
	set_attrs(bob, keep);
	free(keep);
	import_to(b_path);
	ck_assert(!db_same(a_path, b_path));

	put_ok(bob); /* back as the model has it */
	check_same();
	struct db db;
	MDB_txn *txn;
	open_rw(&db, a_path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	const struct db_index *ix = db_index_find(&db, "uid", 3);
	MDB_val k = {3, "bob"};
	ck_assert_int_eq(mdb_del(txn, ix->dbi, &k, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	ck_assert(!db_same(a_path, b_path));
}
END_TEST

/* Random changes over a generated directory: adds, modifies, member changes, renames,
 * subtree moves, deletes, subtree deletes; compared with an import every so often. */
static void random_run(unsigned long seed, int changes)
{
	M.seed = seed;
	base_directory();
	char dn[1024], attrs[2048];
	const char *tops[] = {"ou=people," SUFFIX, "ou=groups," SUFFIX};
	for (int d = 0; d < 4; d++) {
		snprintf(dn, sizeof(dn), "ou=d%d,%s", d, tops[0]);
		snprintf(attrs, sizeof(attrs), "objectClass: organizationalUnit\nou: d%d\n", d);
		model_add(&M, dn, attrs);
	}
	int next_user = 0, next_group = 0, next_ou = 4;
	struct db db;
	MDB_txn *txn;
	struct db_update_error err;
	import_to(a_path);
	open_rw(&db, a_path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	for (int step = 0; step < changes; step++) {
		/* A random live entry of a kind: 'u' users, 'g' groups, 'o' ous below people. */
		size_t n[3] = {0, 0, 0};
		struct mentry *users[MODEL_MAX], *groups[MODEL_MAX], *ous[MODEL_MAX];
		for (size_t i = 0; i < M.n; i++) {
			struct mentry *e = &M.e[i];
			if (!e->live)
				continue;
			if (strncmp(e->dn, "uid=", 4) == 0)
				users[n[0]++] = e;
			else if (strncmp(e->dn, "cn=", 3) == 0)
				groups[n[1]++] = e;
			else if (strncmp(e->dn, "ou=d", 4) == 0 || strcmp(e->dn, tops[0]) == 0)
				ous[n[2]++] = e;
		}
		int op = (int)(model_rand(&M) % 10);
		struct mentry *ou = ous[model_rand(&M) % n[2]];
		int rc = 0;
		if (op <= 2 || n[0] < 3) { /* add a user */
			snprintf(dn, sizeof(dn), "uid=u%d,%s", next_user, ou->dn);
			snprintf(attrs, sizeof(attrs), "u%d", next_user++);
			rc = model_put(&db, txn, model_add(&M, dn, user_attrs(attrs, "")), &err);
		} else if (op == 3) { /* add or change a group: members by DN, some of none */
			struct mentry *g =
			    n[1] && model_rand(&M) % 2 ? groups[model_rand(&M) % n[1]] : NULL;
			char name[32];
			if (g)
				snprintf(name, sizeof(name), "%.*s",
				         (int)(strchr(g->dn, ',') - g->dn - 3), g->dn + 3);
			else
				snprintf(name, sizeof(name), "g%d", next_group++);
			int len = snprintf(attrs, sizeof(attrs),
			                   "objectClass: groupOfNames\ncn: %s\n", name);
			for (int k = 0; k < 1 + (int)(model_rand(&M) % 4); k++) {
				struct mentry *m = users[model_rand(&M) % n[0]];
				len += snprintf(attrs + len, sizeof(attrs) - (size_t)len,
				                "member: %s\n",
				                model_rand(&M) % 5 ? m->dn : "uid=nobody," SUFFIX);
			}
			if (n[1] && model_rand(&M) % 3 == 0)
				snprintf(attrs + len, sizeof(attrs) - (size_t)len, "member: %s\n",
				         groups[model_rand(&M) % n[1]]->dn);
			if (!g) {
				snprintf(dn, sizeof(dn), "cn=%s,%s", name, tops[1]);
				g = model_add(&M, dn, attrs);
			} else {
				set_attrs(g, attrs);
			}
			rc = model_put(&db, txn, g, &err);
		} else if (op == 4) { /* modify a user */
			struct mentry *u = users[model_rand(&M) % n[0]];
			const char *uid = strstr(u->attrs, "uid: ") + 5;
			char name[32];
			snprintf(name, sizeof(name), "%.*s", (int)(strchr(uid, '\n') - uid), uid);
			snprintf(attrs, sizeof(attrs), "description: v%lu\n", model_rand(&M) % 3);
			set_attrs(u, user_attrs(name, attrs));
			rc = model_put(&db, txn, u, &err);
		} else if (op == 5) { /* rename a user */
			struct mentry *u = users[model_rand(&M) % n[0]];
			char name[32];
			snprintf(name, sizeof(name), "u%d", next_user++);
			snprintf(dn, sizeof(dn), "uid=%s,%s", name,
			         model_rand(&M) % 2 ? strchr(u->dn, ',') + 1 : ou->dn);
			model_rename(&M, u->dn, dn);
			set_attrs(u, user_attrs(name, ""));
			rc = model_put(&db, txn, u, &err);
		} else if (op == 6) { /* move an ou (and its subtree) under another, or add one */
			struct mentry *o = ous[model_rand(&M) % n[2]];
			if (strcmp(o->dn, tops[0]) == 0 || dn_under(ou->dn, o->dn)) {
				snprintf(dn, sizeof(dn), "ou=d%d,%s", next_ou, ou->dn);
				snprintf(attrs, sizeof(attrs),
				         "objectClass: organizationalUnit\nou: d%d\n", next_ou++);
				rc = model_put(&db, txn, model_add(&M, dn, attrs), &err);
			} else {
				char rdn[64];
				snprintf(rdn, sizeof(rdn), "%.*s",
				         (int)(strchr(o->dn, ',') - o->dn), o->dn);
				snprintf(dn, sizeof(dn), "%s,%s", rdn, ou->dn);
				if (model_find(&M, dn))
					continue;
				model_rename(&M, o->dn, dn);
				rc = model_put(&db, txn, o, &err);
			}
		} else if (op == 7 || op == 8) { /* delete a user or a group */
			struct mentry *e = op == 7 || !n[1] ? users[model_rand(&M) % n[0]]
			                                    : groups[model_rand(&M) % n[1]];
			rc = db_update_delete(&db, db_write_of(txn), e->uuid, 0, &err);
			model_delete(e, false);
		} else { /* delete an ou: a leaf, or a subtree now and then */
			struct mentry *o = ous[model_rand(&M) % n[2]];
			if (strcmp(o->dn, tops[0]) == 0)
				continue;
			bool subtree = model_rand(&M) % 4 == 0;
			rc = db_update_delete(&db, db_write_of(txn), o->uuid,
			                      subtree ? DB_UPDATE_SUBTREE : 0, &err);
			if (model_has_children(&M, o) && !subtree) {
				ck_assert_int_eq(rc, LDAP_NOT_ALLOWED_ON_NONLEAF);
				continue;
			}
			model_delete(o, subtree);
		}
		ck_assert_msg(rc == 0, "seed %lu step %d: %d %s", seed, step, rc, err.msg);
		if (step % 7 == 0) { /* some transactions of several changes */
			ck_assert_int_eq(mdb_txn_commit(txn), 0);
			ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
		}
		if (step % 100 == 99 || step == changes - 1) {
			ck_assert_int_eq(mdb_txn_commit(txn), 0);
			db_close(&db);
			check_same();
			open_rw(&db, a_path);
			ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
		}
	}
	mdb_txn_abort(txn);
	db_close(&db);
}

START_TEST(random_changes_match_a_fresh_import)
{
	random_run(1000 + (unsigned long)_i, 400);
}
END_TEST

/* The same with nested memberOf: each change's closure matches a fresh nested import. */
START_TEST(random_nested_changes_match_a_fresh_import)
{
	nested_on = true;
	random_run(2000 + (unsigned long)_i, 400);
}
END_TEST

/* Applies raw input to a_path; returns the result code (the txn commits what is left). */
static int put_raw(const unsigned char uuid[16], const char *dn, const unsigned char *attrs,
                   size_t len, struct db_update_error *err)
{
	struct db db;
	MDB_txn *txn;
	open_rw(&db, a_path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	int rc = db_update_put(&db, db_write_of(txn), uuid, dn, strlen(dn), attrs, len, 0, err);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	return rc;
}

/* Bad changes get their code and a message, and change nothing. */
START_TEST(bad_changes_are_refused_and_change_nothing)
{
	scripted_directory();
	import_to(a_path);
	struct db_update_error err;
	struct mentry *bob = model_find(&M, P("uid=bob,ou=eng"));
	struct mentry *dave = model_find(&M, P("uid=dave"));
	size_t len;
	unsigned char *ber = model_ber(bob->attrs, &len);
	unsigned char fresh[16] = {1, 2, 3};
	const struct {
		const unsigned char *uuid;
		const char *dn;
		int code;
		const char *says;
	} cases[] = {
	    {fresh, "not a DN", LDAP_INVALID_DN_SYNTAX, "invalid DN"},
	    {fresh, "uid=x,dc=other,dc=org", LDAP_UNWILLING_TO_PERFORM, "outside the suffix"},
	    {fresh, P("uid=x,ou=nowhere"), LDAP_NO_SUCH_OBJECT, "does not exist"},
	    {fresh, P("uid=dave"), LDAP_ALREADY_EXISTS, "another entryUUID"},
	    {bob->uuid, P("uid=dave"), LDAP_ALREADY_EXISTS, "another entryUUID"},
	    {model_find(&M, P("ou=eng"))->uuid, P("ou=x,uid=bob,ou=eng"), LDAP_UNWILLING_TO_PERFORM,
	     "below itself"},
	    {M.e[0].uuid, "ou=x," SUFFIX, LDAP_UNWILLING_TO_PERFORM, "suffix entry"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = put_raw(cases[i].uuid, cases[i].dn, ber, len, &err);
		ck_assert_msg(rc == cases[i].code && strstr(err.msg, cases[i].says), "%s: %d %s",
		              cases[i].dn, rc, err.msg);
	}
	/* Malformed BER: cut short, a wrong tag, trailing bytes. */
	ck_assert_int_eq(put_raw(fresh, P("uid=x"), ber, len - 1, &err), LDAP_PROTOCOL_ERROR);
	unsigned char bad[4096];
	memcpy(bad, ber, len);
	bad[0] = 0x31;
	ck_assert_int_eq(put_raw(fresh, P("uid=x"), bad, len, &err), LDAP_PROTOCOL_ERROR);
	memcpy(bad, ber, len);
	bad[len] = 0x04;
	ck_assert_int_eq(put_raw(fresh, P("uid=x"), bad, len + 1, &err), LDAP_PROTOCOL_ERROR);
	free(ber);
	/* Schema: no objectClass; a MUST missing (inetOrgPerson without sn); a bad value. */
	const char *attrs[] = {"uid: x\n", "objectClass: inetOrgPerson\nuid: x\ncn: x\n",
	                       "objectClass: inetOrgPerson\nuid: x\ncn: x\nsn: x\nmail: \xff\n"};
	for (size_t i = 0; i < 3; i++) {
		ber = model_ber(attrs[i], &len);
		int rc = put_raw(fresh, P("uid=x"), ber, len, &err);
		ck_assert_msg(rc == LDAP_OBJECT_CLASS_VIOLATION, "%s: %d %s", attrs[i], rc,
		              err.msg);
		free(ber);
	}
	/* Deletes: a non-leaf, an unknown UUID. */
	ck_assert_int_eq(delete_one(model_find(&M, P("ou=eng")), 0, &err),
	                 LDAP_NOT_ALLOWED_ON_NONLEAF);
	struct mentry ghost = {.uuid = {9, 9, 9}};
	ck_assert_int_eq(delete_one(&ghost, 0, &err), LDAP_NO_SUCH_OBJECT);
	(void)dave;
	check_same();
}
END_TEST

/* The cookie is stored with the changes of its transaction, and only then. */
/* After a replica moves a subtree under a parent added later (its IDs now below the
 * parent's), export still writes every parent before its children (held back entries go
 * right after their parent, with theirs), and the LDIF imports into the same directory. */
START_TEST(export_after_a_move_writes_parents_first)
{
	base_directory();
	model_add(&M, P("ou=eng"), "objectClass: organizationalUnit\nou: eng\n");
	model_add(&M, P("uid=alice,ou=eng"), user_attrs("alice", ""));
	model_add(&M, P("uid=bob,ou=eng"), user_attrs("bob", ""));
	import_to(a_path);
	put_ok(model_add(&M, "ou=later," SUFFIX, "objectClass: organizationalUnit\nou: later\n"));
	put_ok(model_add(&M, "ou=deeper,ou=later," SUFFIX,
	                 "objectClass: organizationalUnit\nou: deeper\n"));
	struct mentry *eng = model_find(&M, P("ou=eng"));
	model_rename(&M, P("ou=eng"), "ou=eng,ou=deeper,ou=later," SUFFIX);
	put_ok(eng);
	put_ok(
	    model_add(&M, "uid=carol,ou=eng,ou=deeper,ou=later," SUFFIX, user_attrs("carol", "")));
	check_same();

	char out_path[160], c_path[160], err[512], line[4096];
	snprintf(out_path, sizeof(out_path), "%s/export.ldif", dir);
	snprintf(c_path, sizeof(c_path), "%s/c.mdb", dir);
	FILE *out = fopen(out_path, "w");
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(ldif_export(a_path, out, err, sizeof(err), NULL, NULL) == 0, "%s", err);
	fclose(out);
	/* The DNs in the order written: each one's parent came before it. */
	static const char *const want[] = {
	    SUFFIX,
	    "ou=people," SUFFIX,
	    "ou=groups," SUFFIX,
	    "ou=later," SUFFIX,
	    "ou=deeper,ou=later," SUFFIX,
	    "ou=eng,ou=deeper,ou=later," SUFFIX,
	    "uid=alice,ou=eng,ou=deeper,ou=later," SUFFIX,
	    "uid=bob,ou=eng,ou=deeper,ou=later," SUFFIX,
	    "uid=carol,ou=eng,ou=deeper,ou=later," SUFFIX,
	};
	size_t n = 0;
	FILE *in = fopen(out_path, "r");
	ck_assert_ptr_nonnull(in);
	while (fgets(line, sizeof(line), in))
		if (strncmp(line, "dn: ", 4) == 0) {
			line[strcspn(line, "\n")] = '\0';
			ck_assert_uint_lt(n, sizeof(want) / sizeof(want[0]));
			ck_assert_str_eq(line + 4, want[n]);
			n++;
		}
	fclose(in);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	struct import_opts opts = {
	    .suffix = SUFFIX, .index = index_attrs, .nindex = 6, .err = stderr, .creator = "x"};
	size_t count;
	ck_assert_int_eq(ldif_import(out_path, c_path, &opts, &count), 0);
	ck_assert_uint_eq(count, n);
	/* c keeps the timestamps and names the export wrote (a's import's own) in opattrs,
	 * where a answers them from meta: the same answers, so the same export. */
	ck_assert_msg(db_same_but(a_path, c_path, "opattrs|"), "the re-imported export differs");
	char again_path[160];
	snprintf(again_path, sizeof(again_path), "%s/again.ldif", dir);
	out = fopen(again_path, "w");
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(ldif_export(c_path, out, err, sizeof(err), NULL, NULL) == 0, "%s", err);
	fclose(out);
	FILE *f1 = fopen(out_path, "r"), *f2 = fopen(again_path, "r");
	ck_assert(f1 && f2);
	char line2[4096];
	for (;;) {
		char *l1 = fgets(line, sizeof(line), f1), *l2 = fgets(line2, sizeof(line2), f2);
		ck_assert_msg((l1 == NULL) == (l2 == NULL), "one export is longer");
		if (!l1)
			break;
		ck_assert_str_eq(line2, line);
	}
	fclose(f1);
	fclose(f2);
}
END_TEST

/* The provider's timestamps and entryCSN sent with an entry are kept beside it (not in
 * its record: "*" stays the user attributes), replaced by the next put, gone with it. */
static bool kept_value(const char *path, struct mentry *e, const char *name, const char *want)
{
	struct db db;
	MDB_txn *txn;
	entry_id id;
	struct entry_view kept = {0};
	const unsigned char *vals, *v;
	size_t vlen, len;
	open_rw(&db, path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	bool found = db_uuid2id(&db, db_read_of(txn), e->uuid, &id) == 0 &&
	             entry_opattrs_get(&db, db_read_of(txn), id, &kept) == 0 &&
	             entry_find_attr(&kept, name, strlen(name), &vals, &vlen) &&
	             entry_next_value(&vals, vals + vlen, &v, &len) &&
	             (!want || (len == strlen(want) && memcmp(v, want, len) == 0));
	mdb_txn_abort(txn);
	db_close(&db);
	return found;
}

START_TEST(provider_timestamps_kept_beside_the_entry)
{
	base_directory();
	import_to(a_path);
	struct mentry *zed = model_add(
	    &M, P("uid=zed"),
	    user_attrs("zed",
	               "createTimestamp: 20200101000000Z\nmodifyTimestamp: 20210101000000Z\n"
	               "creatorsName: cn=admin," SUFFIX "\nentryCSN: "
	               "20210101000000.000001Z#000000#000#000000\nhasSubordinates: FALSE\n"));
	put_ok(zed);
	ck_assert(kept_value(a_path, zed, "createTimestamp", "20200101000000Z"));
	ck_assert(kept_value(a_path, zed, "modifyTimestamp", "20210101000000Z"));
	ck_assert(kept_value(a_path, zed, "creatorsName", "cn=admin," SUFFIX));
	ck_assert(kept_value(a_path, zed, "entryCSN", "20210101000000.000001Z#000000#000#000000"));
	ck_assert(!kept_value(a_path, zed, "hasSubordinates", NULL));
	set_attrs(zed, user_attrs("zed", "modifyTimestamp: 20220101000000Z\n"));
	put_ok(zed);
	ck_assert(kept_value(a_path, zed, "modifyTimestamp", "20220101000000Z"));
	ck_assert(!kept_value(a_path, zed, "createTimestamp", NULL));
	/* The records are a fresh import's: the timestamps are not in them. */
	set_attrs(zed, user_attrs("zed", ""));
	put_ok(zed);
	ck_assert(!kept_value(a_path, zed, "modifyTimestamp", NULL));
	check_same();
	struct db_update_error err;
	set_attrs(zed, user_attrs("zed", "entryCSN: 1\n"));
	put_ok(zed);
	ck_assert(kept_value(a_path, zed, "entryCSN", "1"));
	ck_assert_int_eq(delete_one(zed, 0, &err), 0);
	model_delete(zed, false);
	check_same(); /* its opattrs row went with it */
}
END_TEST

/* The entryUUID zed answers (entry_opattrs_uuid over what was kept) as text, "" for none. */
static void answered_uuid(struct mentry *e, char out[37])
{
	struct db db;
	MDB_txn *txn;
	entry_id id;
	struct entry_view kept = {0}, rec;
	unsigned char buf[16];
	open_rw(&db, a_path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(db_uuid2id(&db, db_read_of(txn), e->uuid, &id), 0);
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &rec), 0);
	bool have = entry_opattrs_get(&db, db_read_of(txn), id, &kept) == 0;
	const unsigned char *u = entry_opattrs_uuid(have ? &kept : NULL, rec.uuid, buf);
	out[0] = 0;
	if (u)
		entry_uuid_format(u, out);
	mdb_txn_abort(txn);
	db_close(&db);
}

/* 389-ds names an entry by its nsUniqueId in the sync controls, and its entryUUID plugin
 * gives another value: that one is kept and answered. A slapd entry's entryUUID (the sync
 * UUID itself) is the record's, not kept twice; a 389-ds entry without the plugin's value
 * answers none, as 389-ds does. */
START_TEST(provider_entry_uuid_kept_when_not_the_sync_uuid)
{
	base_directory();
	import_to(a_path);
	static const char plugin[] = "4b0f0d95-6a08-4ffb-b704-97fd5192c6aa";
	struct mentry *zed = model_add(&M, P("uid=zed"),
	                               user_attrs("zed", "entryUUID: 4b0f0d95-6a08-4ffb-b704-"
	                                                 "97fd5192c6aa\nnsUniqueId: 67abcf66-"
	                                                 "f1d011f1-baa8b948-c73ebf93\n"));
	put_ok(zed);
	char got[37], own[37], line[80];
	entry_uuid_format(zed->uuid, own);
	ck_assert(kept_value(a_path, zed, "entryUUID", plugin));
	ck_assert(kept_value(a_path, zed, "nsUniqueId", "67abcf66-f1d011f1-baa8b948-c73ebf93"));
	answered_uuid(zed, got);
	ck_assert_str_eq(got, plugin);
	snprintf(line, sizeof(line), "entryUUID: %s\n", own);
	set_attrs(zed, user_attrs("zed", line));
	put_ok(zed);
	ck_assert(!kept_value(a_path, zed, "entryUUID", NULL));
	answered_uuid(zed, got);
	ck_assert_str_eq(got, own);
	set_attrs(zed, user_attrs("zed", "nsUniqueId: 67abcf66-f1d011f1-baa8b948-c73ebf93\n"));
	put_ok(zed);
	answered_uuid(zed, got);
	ck_assert_str_eq(got, "");
	set_attrs(zed, user_attrs("zed", ""));
	put_ok(zed);
	check_same();
}
END_TEST

START_TEST(cookie_goes_with_its_transaction)
{
	scripted_directory();
	import_to(a_path);
	struct db db;
	MDB_txn *txn;
	const void *data;
	size_t len;
	struct db_update_error err;
	open_rw(&db, a_path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	ck_assert_int_eq(db_update_get_cookie(&db, db_read_of(txn), &data, &len), MDB_NOTFOUND);
	struct mentry *zed = model_add(&M, P("uid=zed,ou=ops"), user_attrs("zed", ""));
	ck_assert_int_eq(model_put(&db, txn, zed, &err), 0);
	ck_assert_int_eq(db_update_set_cookie(&db, db_write_of(txn), "rid=001,csn=1", 13), 0);
	mdb_txn_abort(txn);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(db_update_get_cookie(&db, db_read_of(txn), &data, &len), MDB_NOTFOUND);
	mdb_txn_abort(txn);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	ck_assert_int_eq(model_put(&db, txn, zed, &err), 0);
	ck_assert_int_eq(db_update_set_cookie(&db, db_write_of(txn), "rid=001,csn=2", 13), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	open_rw(&db, a_path);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(db_update_get_cookie(&db, db_read_of(txn), &data, &len), 0);
	ck_assert_uint_eq(len, 13);
	ck_assert_int_eq(memcmp(data, "rid=001,csn=2", 13), 0);
	mdb_txn_abort(txn);
	db_close(&db);
	check_same();
}
END_TEST

/* A replica starts from no file: db_open_rw makes an empty database, and entries put in
 * (parents first, as a refresh sends them) give what an import gives. */
START_TEST(replica_from_no_file)
{
	scripted_directory();
	struct db db;
	char err[512];
	ck_assert_int_eq(db_open_rw(&db, a_path, NULL, NULL, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no suffix"), "%s", err);
	open_rw(&db, a_path);
	ck_assert_uint_eq(db.entries, 0);
	MDB_txn *txn;
	struct db_update_error uerr;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	for (int d = 1; d < 8; d++)
		for (size_t i = 0; i < M.n; i++)
			if (depth(M.e[i].dn) == d)
				ck_assert_int_eq(model_put(&db, txn, &M.e[i], &uerr), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	/* Opened again: another suffix is refused. */
	ck_assert_int_eq(db_open_rw(&db, a_path, "dc=other", NULL, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds suffix"), "%s", err);
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

/* Median microseconds of n samples. */
static double median_us(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), dbl_cmp);
	return t[n / 2] * 1e6;
}

/* Not a test of speed (no timing is asserted): prints what a change costs. */
START_TEST(bench_changes_on_10000_entries)
{
	if (!getenv("MINIDIR_BENCH"))
		return;
	base_directory();
	char dn[256];
	for (int i = 0; i < 10000; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,ou=people," SUFFIX, i);
		char uid[16];
		snprintf(uid, sizeof(uid), "u%d", i);
		model_add(&M, dn, user_attrs(uid, ""));
	}
	import_to(a_path);
	enum { N = 500 };
	static double apply[3][N], commit[3][N];
	struct db db;
	MDB_txn *txn;
	struct db_update_error err;
	open_rw(&db, a_path);
	for (int kind = 0; kind < 3; kind++)
		for (int i = 0; i < N; i++) {
			struct mentry *e;
			if (kind == 0) {
				snprintf(dn, sizeof(dn), "uid=new%d,ou=people," SUFFIX, i);
				char uid[16];
				snprintf(uid, sizeof(uid), "new%d", i);
				e = model_add(&M, dn, user_attrs(uid, ""));
			} else {
				e = &M.e[3 + model_rand(&M) % 10000];
				char *uid = strstr(e->attrs, "uid: ") + 5;
				char name[16];
				snprintf(name, sizeof(name), "%.*s", (int)(strchr(uid, '\n') - uid),
				         uid);
				set_attrs(e, user_attrs(name, kind == 1 ? "description: x\n" : ""));
			}
			double t0 = now();
			ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
			ck_assert_int_eq(model_put(&db, txn, e, &err), 0);
			double t1 = now();
			ck_assert_int_eq(db_update_set_cookie(&db, db_write_of(txn), "c", 1), 0);
			ck_assert_int_eq(mdb_txn_commit(txn), 0);
			apply[kind][i] = t1 - t0;
			commit[kind][i] = now() - t0;
		}
	db_close(&db);
	const char *what[] = {"add", "modify (description added)", "modify (description gone)"};
	for (int kind = 0; kind < 3; kind++)
		printf("db_update on 10,000 entries: %s: median %.1f us applied, %.1f us with its "
		       "own commit (durable)\n",
		       what[kind], median_us(apply[kind], N), median_us(commit[kind], N));
	check_same();
}
END_TEST

static Suite *update_suite(void)
{
	Suite *s = suite_create("db_update");
	TCase *tc = tcase_create("update");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, scripted_changes_match_a_fresh_import, 0, 2);
	tcase_add_test(tc, password_classes_follow_changes);
	tcase_add_test(tc, comparison_sees_a_difference);
	tcase_add_loop_test(tc, random_changes_match_a_fresh_import, 0, 3);
	tcase_add_loop_test(tc, random_nested_changes_match_a_fresh_import, 0, 3);
	tcase_add_test(tc, bad_changes_are_refused_and_change_nothing);
	tcase_add_test(tc, export_after_a_move_writes_parents_first);
	tcase_add_test(tc, provider_timestamps_kept_beside_the_entry);
	tcase_add_test(tc, provider_entry_uuid_kept_when_not_the_sync_uuid);
	tcase_add_test(tc, cookie_goes_with_its_transaction);
	tcase_add_test(tc, replica_from_no_file);
	tcase_add_test(tc, bench_changes_on_10000_entries);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	char err[1024];
	if (schema_load(TEST_SCHEMA_DIR, "core cosine inetorgperson nis", err, sizeof(err)) < 0) {
		fprintf(stderr, "schema: %s\n", err);
		return EXIT_FAILURE;
	}
	int status = check_run(update_suite());
	schema_free();
	return status;
}
