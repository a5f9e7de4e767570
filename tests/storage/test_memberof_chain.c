/*
 * Unit tests for the in-chain walks (storage/memberof_chain.h) on an imported file, with
 * memberof_nested off and on (the answer must not change): a cycle of three groups (one a
 * groupOfUniqueNames with a UID), a group naming itself, a chain of depth 10 (and one of
 * 40, deeper than MEMBEROF_NESTED_DEPTH, which nesting cuts but the walk does not), a
 * member that names no entry, an ID that names none, and the bound (E2BIG).
 * Run from the repository root; reads the tree's schemas (schema/, tests/tree_schema.h).
 */
#include <check.h>
#include <errno.h>
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
#include "storage/memberof_chain.h"
#include "storage/memberof_nested.h"
#include "tests/check_run.h"
#include "tests/storage/group_ldif.h"
#include "tests/tree_schema.h"

#define DEEP 40 /* deeper than MEMBEROF_NESTED_DEPTH */

static char dir[64], db_path[128], ldif_path[128];

static void write_ldif(void)
{
	FILE *f = fopen(ldif_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "dn: dc=example,dc=com\nobjectClass: dcObject\nobjectClass: organization\n"
	           "dc: example\no: Example\n\n");
	/* a > b > c > a (c by uniqueMember with a UID), alice in b; a also names a ghost. */
	fprintf(f, "dn: cn=a,dc=example,dc=com\nobjectClass: groupOfNames\ncn: a\n"
	           "member: cn=b,dc=example,dc=com\nmember: uid=ghost,dc=example,dc=com\n\n");
	fprintf(f, "dn: cn=b,dc=example,dc=com\nobjectClass: groupOfUniqueNames\ncn: b\n"
	           "uniqueMember: cn=c,dc=example,dc=com\n"
	           "uniqueMember: uid=alice,dc=example,dc=com#'0101'B\n\n");
	fprintf(f, "dn: cn=c,dc=example,dc=com\nobjectClass: groupOfNames\ncn: c\n"
	           "member: cn=a,dc=example,dc=com\n\n");
	fprintf(f, "dn: cn=self,dc=example,dc=com\nobjectClass: groupOfNames\ncn: self\n"
	           "member: cn=self,dc=example,dc=com\nmember: uid=alice,dc=example,dc=com\n\n");
	/* chain1 holds bob, chainI holds chain(I-1): bob is DEEP groups deep. */
	group_ldif_chain(f, DEEP);
	fprintf(f, "dn: uid=alice,dc=example,dc=com\nobjectClass: account\nuid: alice\n\n");
	fprintf(f, "dn: uid=bob,dc=example,dc=com\nobjectClass: account\nuid: bob\n\n");
	fclose(f);
}

static struct db db;
static MDB_txn *txn;

static void open_import(bool nested)
{
	group_import(ldif_path, db_path, nested, "/dev/null");
	char msg[512];
	ck_assert_msg(db_open(&db, db_path, false, NULL, NULL, 0, msg, sizeof(msg)) == 0, "%s",
	              msg);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	bool on = !nested;
	ck_assert_int_eq(memberof_nested_get(&db, db_read_of(txn), &on), 0);
	ck_assert(on == nested);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-chain-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/test.mdb", dir);
	snprintf(ldif_path, sizeof(ldif_path), "%s/test.ldif", dir);
	write_ldif();
}

static void teardown(void)
{
	if (txn)
		mdb_txn_abort(txn);
	txn = NULL;
	db_close(&db);
	unlink(db_path);
	unlink(ldif_path);
	rmdir(dir);
}

static entry_id id_of(const char *rdn)
{
	return group_id_of(&db, txn, rdn);
}

/* The walk from rdn (way), as IDs; checks they ascend without duplicates. */
static struct buf walk(const char *rdn, enum memberof_chain_way way, size_t max, int want_rc)
{
	struct buf ids = {0};
	struct memberof_chain_scratch s = {0};
	ck_assert_int_eq(memberof_chain(&db, db_read_of(txn), id_of(rdn), way, max, &ids, &s),
	                 want_rc);
	memberof_chain_free(&s);
	entry_id prev = 0, id;
	for (size_t i = 0; want_rc == 0 && i < ids.len / sizeof(id); i++) {
		memcpy(&id, ids.data + i * sizeof(id), sizeof(id));
		ck_assert_uint_gt(id, prev);
		prev = id;
	}
	return ids;
}

static size_t n_of(const struct buf *ids)
{
	return ids->len / sizeof(entry_id);
}

static bool has(const struct buf *ids, const char *rdn)
{
	entry_id want = id_of(rdn), id;
	for (size_t i = 0; i < n_of(ids); i++)
		if (memcpy(&id, ids->data + i * sizeof(id), sizeof(id)), id == want)
			return true;
	return false;
}

/* _i: 0 memberof_nested off, 1 on. */
START_TEST(a_cycle_both_ways)
{
	open_import(_i);
	struct buf in = walk("cn=a", MEMBEROF_CHAIN_MEMBERS, SIZE_MAX, 0);
	/* b, c, alice, and a itself (the cycle leads back); the ghost names no entry. */
	ck_assert_uint_eq(n_of(&in), 4);
	ck_assert(has(&in, "cn=a") && has(&in, "cn=b") && has(&in, "cn=c") &&
	          has(&in, "uid=alice"));
	buf_free(&in);
	struct buf up = walk("uid=alice", MEMBEROF_CHAIN_GROUPS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&up), 4); /* b (by uniqueMember with its UID), c, a, self */
	ck_assert(has(&up, "cn=a") && has(&up, "cn=b") && has(&up, "cn=c") && has(&up, "cn=self"));
	buf_free(&up);
	struct buf self = walk("cn=self", MEMBEROF_CHAIN_MEMBERS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&self), 2);
	ck_assert(has(&self, "cn=self") && has(&self, "uid=alice"));
	buf_free(&self);
	self = walk("cn=self", MEMBEROF_CHAIN_GROUPS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&self), 1);
	buf_free(&self);
}
END_TEST

START_TEST(depth_ten_and_deeper_than_nesting)
{
	open_import(_i);
	struct buf in = walk("cn=chain10", MEMBEROF_CHAIN_MEMBERS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&in), 10); /* chain1..chain9 and bob, 10 levels down */
	ck_assert(has(&in, "uid=bob") && has(&in, "cn=chain1") && !has(&in, "cn=chain10"));
	buf_free(&in);
	char top[32];
	snprintf(top, sizeof(top), "cn=chain%d", DEEP);
	in = walk(top, MEMBEROF_CHAIN_MEMBERS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&in), DEEP); /* not cut at MEMBEROF_NESTED_DEPTH, on or off */
	ck_assert(has(&in, "uid=bob"));
	buf_free(&in);
	struct buf up = walk("uid=bob", MEMBEROF_CHAIN_GROUPS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&up), DEEP);
	ck_assert(has(&up, top));
	buf_free(&up);
	/* A user has nothing inside it; the top of the chain is in no group. */
	in = walk("uid=bob", MEMBEROF_CHAIN_MEMBERS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&in), 0);
	buf_free(&in);
	up = walk(top, MEMBEROF_CHAIN_GROUPS, SIZE_MAX, 0);
	ck_assert_uint_eq(n_of(&up), 0);
	buf_free(&up);
}
END_TEST

START_TEST(an_absent_entry_reaches_nothing)
{
	open_import(_i);
	struct buf ids = {0};
	struct memberof_chain_scratch s = {0};
	entry_id absent = 1000000;
	struct entry_view e;
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), absent, &e), MDB_NOTFOUND);
	ck_assert_int_eq(memberof_chain(&db, db_read_of(txn), absent, MEMBEROF_CHAIN_MEMBERS,
	                                SIZE_MAX, &ids, &s),
	                 0);
	ck_assert_uint_eq(ids.len, 0);
	ck_assert_int_eq(
	    memberof_chain(&db, db_read_of(txn), absent, MEMBEROF_CHAIN_GROUPS, SIZE_MAX, &ids, &s),
	    0);
	ck_assert_uint_eq(ids.len, 0);
	memberof_chain_free(&s);
	buf_free(&ids);
}
END_TEST

START_TEST(the_bound)
{
	open_import(_i);
	/* chain10 has 10 entries inside it: 10 pass, 9 is past the bound. */
	struct buf in = walk("cn=chain10", MEMBEROF_CHAIN_MEMBERS, 10, 0);
	ck_assert_uint_eq(n_of(&in), 10);
	buf_free(&in);
	in = walk("cn=chain10", MEMBEROF_CHAIN_MEMBERS, 9, E2BIG);
	ck_assert_uint_gt(n_of(&in), 9);
	buf_free(&in);
	struct buf up = walk("uid=bob", MEMBEROF_CHAIN_GROUPS, 0, E2BIG);
	buf_free(&up);
}
END_TEST

/* dn_key_normal gives the bytes dn_normalize's normal form has, the walk's eq.memberof key. */
START_TEST(key_normal_form_is_the_normal_form)
{
	static const char *const dns[] = {
	    "cn=a,dc=example,dc=com",      "CN=Smith\\, John,OU=People , dc=Example,dc=COM",
	    "cn=b+sn=x+cn=A,dc=example",   "uid=a\\2Cb,dc=x",
	    "cn=#04024869,dc=example",     "dc=com",
	    "cn= spaced  out ,dc=example", "2.5.4.3=oid,dc=example",
	};
	for (size_t i = 0; i < sizeof(dns) / sizeof(dns[0]); i++) {
		struct buf ndn = {0}, key = {0}, back = {0};
		ck_assert_int_eq(dn_normalize(dns[i], strlen(dns[i]), &ndn, &key), 0);
		ck_assert_int_eq(dn_key_normal(key.data, key.len, &back), 0);
		ck_assert_msg(back.len == ndn.len && memcmp(back.data, ndn.data, ndn.len) == 0,
		              "%s: %.*s, want %.*s", dns[i], (int)back.len, (char *)back.data,
		              (int)ndn.len, (char *)ndn.data);
		buf_free(&ndn);
		buf_free(&key);
		buf_free(&back);
	}
}
END_TEST

static Suite *chain_suite(void)
{
	Suite *s = suite_create("memberof_chain");
	TCase *tc = tcase_create("walk");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_cycle_both_ways, 0, 2);
	tcase_add_loop_test(tc, depth_ten_and_deeper_than_nesting, 0, 2);
	tcase_add_loop_test(tc, an_absent_entry_reaches_nothing, 0, 2);
	tcase_add_loop_test(tc, the_bound, 0, 2);
	tcase_add_test(tc, key_normal_form_is_the_normal_form);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_schema(chain_suite(), "core cosine inetorgperson nis openldap");
}
