/*
 * Unit tests for the transaction handles storage/db.h hands out (struct db_read,
 * struct db_write) and the walks that replaced the cursors other rooms opened: children
 * counted and walked (numSubordinates, access rules), entryUUIDs walked (a replica's
 * present phase). Only storage/db.h: what a room above storage has, no LMDB.
 */
#include <check.h>
#include <stdbool.h>

#include "storage/db.h"
#include "tests/check_run.h"
#include "tests/storage/tmp_import.h"

static struct tmp_import tmp;

static const char ldif[] =
    "dn: dc=example,dc=com\n"
    "objectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n"
    "dn: ou=people,dc=example,dc=com\nobjectClass: organizationalUnit\nou: people\n\n"
    "dn: uid=a,ou=people,dc=example,dc=com\nobjectClass: account\nuid: a\n\n"
    "dn: uid=b,ou=people,dc=example,dc=com\nobjectClass: account\nuid: b\n\n"
    "dn: uid=c,ou=people,dc=example,dc=com\nobjectClass: account\nuid: c\n";

static void setup(void)
{
	struct import_opts opts = {.suffix = "dc=example,dc=com", .err = stderr};
	tmp_import(&tmp, "handles", ldif, &opts, 5);
}

static void teardown(void)
{
	tmp_import_remove(&tmp);
}

/* db_foreach_child's and db_foreach_uuid's fn: counts, and stops at *stop_at. */
struct tally {
	size_t n, stop_at;
	entry_id last;
};

static int count_child(entry_id child, void *arg)
{
	struct tally *t = arg;
	ck_assert_uint_gt(child, t->last); /* in ID order */
	t->last = child;
	return ++t->n == t->stop_at;
}

static int count_uuid(const unsigned char uuid[16], void *arg)
{
	(void)uuid;
	struct tally *t = arg;
	return ++t->n == t->stop_at;
}

START_TEST(read_handle_walks)
{
	struct db db;
	char err[256];
	ck_assert_int_eq(db_open(&db, tmp.db_path, false, NULL, NULL, 0, err, sizeof(err)), 0);
	struct db_read *r;
	ck_assert_int_eq(db_read_begin(&db, &r), 0);
	/* ou=people is ID 2 (import order): three children, the suffix one */
	ck_assert_uint_eq(db_child_count(&db, r, 2), 3);
	ck_assert_uint_eq(db_child_count(&db, r, 1), 1);
	ck_assert_uint_eq(db_child_count(&db, r, 3), 0);
	struct tally t = {0};
	ck_assert_int_eq(db_foreach_child(&db, r, 2, count_child, &t), 0);
	ck_assert_uint_eq(t.n, 3);
	t = (struct tally){.stop_at = 2};
	ck_assert_int_eq(db_foreach_child(&db, r, 2, count_child, &t), DB_STOPPED);
	ck_assert_uint_eq(t.n, 2);
	t = (struct tally){0};
	ck_assert_int_eq(db_foreach_uuid(&db, r, count_uuid, &t), 0);
	ck_assert_uint_eq(t.n, 5); /* import gives each entry an entryUUID */
	/* a reset snapshot renews; an unknown ID is DB_NOTFOUND, with a text */
	db_read_reset(r);
	ck_assert_int_eq(db_read_renew(r), 0);
	struct entry_view e;
	ck_assert_int_eq(db_get_entry(&db, r, 99, &e), DB_NOTFOUND);
	ck_assert_ptr_nonnull(db_error_text(DB_NOTFOUND));
	db_read_end(r);
	ck_assert_int_ge(db_file_fd(&db), 0);
	db_close(&db);
}
END_TEST

START_TEST(write_handle_commits)
{
	struct db db;
	char err[256];
	char *const index[] = {"uid"};
	ck_assert_int_eq(
	    db_open_rw(&db, tmp.db_path, "dc=example,dc=com", index, 1, err, sizeof(err)), 0);
	struct db_write *w;
	ck_assert_int_eq(db_write_begin(&db, &w), 0);
	ck_assert_int_eq(db_meta_flag_set(&db, w, "test_flag", true), 0);
	bool on = false;
	ck_assert_int_eq(db_meta_flag_get(&db, db_write_reads(w), "test_flag", &on), 0);
	ck_assert(on); /* the writer reads what it wrote */
	db_write_abort(w);
	struct db_read *r;
	ck_assert_int_eq(db_read_begin(&db, &r), 0);
	ck_assert_int_eq(db_meta_flag_get(&db, r, "test_flag", &on), 0);
	ck_assert(!on); /* aborted: never written */
	db_read_end(r);
	ck_assert_int_eq(db_write_begin(&db, &w), 0);
	ck_assert_int_eq(db_meta_flag_set(&db, w, "test_flag", true), 0);
	ck_assert_int_eq(db_write_commit(w), 0);
	ck_assert_int_eq(db_read_begin(&db, &r), 0);
	ck_assert_int_eq(db_meta_flag_get(&db, r, "test_flag", &on), 0);
	ck_assert(on);
	db_read_end(r);
	db_close(&db);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("db_handles");
	TCase *tc = tcase_create("handles");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_handle_walks);
	tcase_add_test(tc, write_handle_commits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_schema(suite(), "core cosine");
}
