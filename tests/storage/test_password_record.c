/*
 * Unit tests for storage/password_record.c and storage/db_passwords.c: values counted by
 * class and uncounted (a class at 0 dropped, a sample kept), the record's bytes decoded
 * back as they were; every cut of a record, a byte after its end, every single-byte
 * change and random bytes are refused with a reason or decode to a record that agrees
 * with itself (never a crash: run under SAN=1 too); on real LMDB files, an import's
 * record equals what reading every entry finds, a file without the record says so
 * (MDB_NOTFOUND), a bad one is MDB_CORRUPTED with its reason, and a replica's change
 * deletes a bad record rather than building on it.
 */
#include <check.h>
#include "storage/db_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldif/ldif_import.h"
#include "storage/db_passwords.h"
#include "password/password_class.h"
#include "storage/password_record.h"
#include "tests/check_run.h"

#define SSHA "{SSHA}7VvIAnNCns+jNqtQ7qvrLbH9TKGPOhxekrBNfg=="
#define SSHA2 "{SSHA}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define CRYPT6 "{CRYPT}$6$rounds=5000$saltsalt$abcdefghijklmnop"
#define ARGON "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo"

static void add(struct password_record *p, const char *v, const char *dn, int delta)
{
	ck_assert_int_eq(password_record_value(p, v, strlen(v), dn, strlen(dn), delta), 0);
}

/* "cls count" for each class, in order, then "unknown N (first)". */
static void describe(const struct password_record *p, char *out, size_t len)
{
	size_t n = 0;
	for (int i = 0; i < p->n; i++)
		n += (size_t)snprintf(out + n, len - n, "%s %llu; ", p->c[i].cls,
		                      (unsigned long long)p->c[i].values);
	snprintf(out + n, len - n, "unknown %llu (%s)", (unsigned long long)p->unknown,
	         p->unknown_first);
}

static void sample_record(struct password_record *p)
{
	memset(p, 0, sizeof(*p));
	add(p, SSHA, "uid=a,dc=x", 1);
	add(p, "plain-secret", "uid=b,dc=x", 1);
	add(p, CRYPT6, "uid=c,dc=x", 1);
	add(p, SSHA2, "uid=d,dc=x", 1);
	add(p, "{NOSUCH}x", "uid=e,dc=x", 1);
	add(p, ARGON, "uid=f,dc=x", 1);
	add(p, "{OTHER}y", "uid=g,dc=x", 1);
}

START_TEST(counted_by_class_in_order)
{
	struct password_record p;
	sample_record(&p);
	char d[1024];
	describe(&p, d, sizeof(d));
	ck_assert_str_eq(d, "{SSHA} 2;  1; {CRYPT}$6$rounds=5000$ 1; "
	                    "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$ 1; "
	                    "unknown 2 ({NOSUCH} on uid=e,dc=x)");
	/* Exact texts: plaintext's class is "". */
	ck_assert_str_eq(p.c[0].cls, "{SSHA}");
	ck_assert_str_eq(p.c[1].cls, "");
	ck_assert_str_eq(p.c[2].cls, "{CRYPT}$6$rounds=5000$");
	ck_assert_str_eq(p.c[3].cls, "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$");
	ck_assert_int_eq(p.n, 4);
	ck_assert_uint_eq(p.c[0].values, 2);
	ck_assert_str_eq(p.c[0].sample, SSHA); /* the first value of its class */
	ck_assert_uint_eq(p.unknown, 2);
	ck_assert_str_eq(p.unknown_first, "{NOSUCH} on uid=e,dc=x");
	password_record_free(&p);
}
END_TEST

START_TEST(uncounted_drops_a_class_at_zero_and_keeps_a_sample)
{
	struct password_record p;
	sample_record(&p);
	add(&p, SSHA, "uid=a,dc=x", -1); /* the sample's own value: the sample stays */
	ck_assert_int_eq(p.n, 4);
	ck_assert_uint_eq(p.c[0].values, 1);
	ck_assert_str_eq(p.c[0].sample, SSHA);
	add(&p, "plain-secret", "uid=b,dc=x", -1); /* plaintext at 0: gone, order kept */
	ck_assert_int_eq(p.n, 3);
	ck_assert_str_eq(p.c[0].cls, "{SSHA}");
	ck_assert_str_eq(p.c[1].cls, "{CRYPT}$6$rounds=5000$");
	ck_assert_str_eq(p.c[2].cls, "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$");
	add(&p, "{CRYPT}$5$zz$unknownclass", "uid=z,dc=x", -1); /* a class not counted */
	ck_assert_int_eq(p.n, 3);
	add(&p, "{NOSUCH}x", "uid=e,dc=x", -1);
	ck_assert_uint_eq(p.unknown, 1);
	ck_assert_str_eq(p.unknown_first, "{NOSUCH} on uid=e,dc=x");
	add(&p, "{OTHER}y", "uid=g,dc=x", -1);
	ck_assert_uint_eq(p.unknown, 0);
	ck_assert_str_eq(p.unknown_first, "");
	add(&p, "{OTHER}y", "uid=g,dc=x", -1); /* below 0: stays 0 */
	ck_assert_uint_eq(p.unknown, 0);
	add(&p, SSHA2, "uid=d,dc=x", -1);
	add(&p, CRYPT6, "uid=c,dc=x", -1);
	add(&p, ARGON, "uid=f,dc=x", -1);
	ck_assert_int_eq(p.n, 0);
	password_record_free(&p);
}
END_TEST

START_TEST(at_most_the_bound_of_classes)
{
	struct password_record p = {.n = 0};
	char v[64];
	for (int i = 0; i < PASSWORD_RECORD_CLASSES + 5; i++) {
		snprintf(v, sizeof(v), "{CRYPT}$6$rounds=%d$salt$hash", 1000 + i);
		add(&p, v, "uid=a,dc=x", 1);
	}
	ck_assert_int_eq(p.n, PASSWORD_RECORD_CLASSES);
	struct buf b = {0};
	ck_assert_int_eq(password_record_encode(&p, &b), 0);
	struct password_record q;
	char why[200];
	ck_assert_int_eq(password_record_decode(&q, b.data, b.len, why, sizeof(why)), 0);
	ck_assert_int_eq(q.n, PASSWORD_RECORD_CLASSES);
	password_record_free(&q);
	password_record_free(&p);
	buf_free(&b);
}
END_TEST

START_TEST(encoded_and_decoded_back)
{
	struct password_record p, q;
	sample_record(&p);
	struct buf b = {0};
	ck_assert_int_eq(password_record_encode(&p, &b), 0);
	char why[200], d1[1024], d2[1024];
	ck_assert_msg(password_record_decode(&q, b.data, b.len, why, sizeof(why)) == 0, "%s", why);
	describe(&p, d1, sizeof(d1));
	describe(&q, d2, sizeof(d2));
	ck_assert_str_eq(d1, d2);
	for (int i = 0; i < p.n; i++) {
		ck_assert_uint_eq(p.c[i].len, q.c[i].len);
		ck_assert_str_eq(p.c[i].sample, q.c[i].sample);
	}
	/* An empty record too. */
	struct password_record none = {.n = 0};
	b.off = b.len = 0;
	ck_assert_int_eq(password_record_encode(&none, &b), 0);
	password_record_free(&q);
	ck_assert_int_eq(password_record_decode(&q, b.data, b.len, why, sizeof(why)), 0);
	ck_assert_int_eq(q.n, 0);
	ck_assert_uint_eq(q.unknown, 0);
	password_record_free(&q);
	password_record_free(&p);
	buf_free(&b);
}
END_TEST

/* A record that decoded must agree with itself: each sample of its own class. */
static void check_consistent(const struct password_record *q)
{
	ck_assert_int_le(q->n, PASSWORD_RECORD_CLASSES);
	for (int i = 0; i < q->n; i++) {
		char own[PASSWORD_RECORD_CLASS_LEN];
		ck_assert(password_scheme_known(q->c[i].sample, q->c[i].len));
		password_cost_class(q->c[i].sample, q->c[i].len, own, sizeof(own));
		ck_assert_str_eq(own, q->c[i].cls);
		ck_assert_uint_gt(q->c[i].values, 0);
	}
	ck_assert((q->unknown == 0) == (q->unknown_first[0] == '\0'));
}

START_TEST(cut_or_garbage_refused_with_a_reason)
{
	struct password_record p, q;
	sample_record(&p);
	struct buf b = {0};
	ck_assert_int_eq(password_record_encode(&p, &b), 0);
	char why[200];
	/* Every cut, from nothing to one byte short. */
	for (size_t n = 0; n < b.len; n++) {
		unsigned char *cut = malloc(n ? n : 1);
		memcpy(cut, b.data, n);
		why[0] = '\0';
		ck_assert_msg(password_record_decode(&q, cut, n, why, sizeof(why)) == -1,
		              "a record cut to %zu of %zu bytes decoded", n, b.len);
		ck_assert_msg(why[0] != '\0', "no reason at %zu", n);
		ck_assert_int_eq(q.n, 0);
		free(cut);
	}
	/* A byte after its end. */
	unsigned char *longer = malloc(b.len + 1);
	memcpy(longer, b.data, b.len);
	longer[b.len] = 0;
	ck_assert_int_eq(password_record_decode(&q, longer, b.len + 1, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "after its end"), "%s", why);
	free(longer);
	/* Another version. */
	b.data[0] ^= 0x7f;
	ck_assert_int_eq(password_record_decode(&q, b.data, b.len, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "version"), "%s", why);
	b.data[0] ^= 0x7f;
	/* Every byte changed, each of three ways: refused, or a record that agrees. */
	for (size_t i = 0; i < b.len; i++) {
		static const unsigned char flips[] = {0x01, 0x80, 0xff};
		for (size_t f = 0; f < sizeof(flips); f++) {
			b.data[i] ^= flips[f];
			if (password_record_decode(&q, b.data, b.len, why, sizeof(why)) == 0)
				check_consistent(&q);
			password_record_free(&q);
			b.data[i] ^= flips[f];
		}
	}
	/* Random bytes, some behind a good version and class count. */
	srand(29);
	unsigned char junk[512];
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)rand() % sizeof(junk);
		for (size_t i = 0; i < n; i++)
			junk[i] = (unsigned char)rand();
		if (n > 1 && round % 2) {
			junk[0] = 1;
			junk[1] = (unsigned char)(rand() % 4);
		}
		if (password_record_decode(&q, junk, n, why, sizeof(why)) == 0)
			check_consistent(&q);
		password_record_free(&q);
	}
	password_record_free(&p);
	buf_free(&b);
}
END_TEST

START_TEST(a_sample_of_another_class_refused)
{
	struct password_record p = {.n = 0};
	add(&p, SSHA, "uid=a,dc=x", 1);
	/* The sample swapped for a costlier class's value, the class's name kept: the decoy
	 * would cost what the name does not say. */
	free(p.c[0].sample);
	p.c[0].sample = strdup(ARGON);
	p.c[0].len = strlen(ARGON);
	struct buf b = {0};
	ck_assert_int_eq(password_record_encode(&p, &b), 0);
	struct password_record q;
	char why[200];
	ck_assert_int_eq(password_record_decode(&q, b.data, b.len, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "another class"), "%s", why);
	password_record_free(&p);
	buf_free(&b);
}
END_TEST

/* --- on LMDB files ------------------------------------------------------------------ */

#define SUFFIX "dc=example,dc=com"
static char dir[64], db_path[128], ldif_path[128];
static char *const index_attrs[] = {"objectClass", "uid"};

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-pwrec-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/a.mdb", dir);
	snprintf(ldif_path, sizeof(ldif_path), "%s/a.ldif", dir);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void import_users(void)
{
	FILE *f = fopen(ldif_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "dn: " SUFFIX "\nobjectClass: dcObject\nobjectClass: organization\n"
	           "dc: example\no: Example\n\n");
	const char *pw[] = {SSHA, "plain", CRYPT6, SSHA2, "{NOSUCH}x", ARGON, NULL, SSHA};
	for (int i = 0; i < 8; i++) {
		fprintf(f,
		        "dn: uid=u%d," SUFFIX
		        "\nobjectClass: inetOrgPerson\nuid: u%d\ncn: u\nsn: u\n",
		        i, i);
		if (pw[i])
			fprintf(f, "userPassword: %s\n", pw[i]);
		if (i == 3)
			fprintf(f, "userPassword: %s\n", CRYPT6); /* two values on one entry */
		fputc('\n', f);
	}
	fclose(f);
	struct import_opts opts = {
	    .suffix = SUFFIX, .index = index_attrs, .nindex = 2, .err = stderr, .creator = ""};
	size_t count;
	ck_assert_int_eq(ldif_import(ldif_path, db_path, &opts, &count), 0);
}

static void meta_set(struct db *db, const void *data, size_t len, bool del)
{
	MDB_txn *txn;
	MDB_val k = {strlen(DB_META_PASSWORDS), DB_META_PASSWORDS}, v = {len, (void *)data};
	ck_assert_int_eq(mdb_txn_begin(db->env, NULL, 0, &txn), 0);
	ck_assert_int_eq(del ? mdb_del(txn, db->meta, &k, NULL) : mdb_put(txn, db->meta, &k, &v, 0),
	                 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
}

static int get(struct db *db, struct password_record *p, char *why, size_t len)
{
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn), 0);
	int rc = db_passwords_get(db, db_read_of(txn), p, why, len);
	mdb_txn_abort(txn);
	return rc;
}

START_TEST(import_record_equals_a_scan)
{
	import_users();
	struct db db;
	char err[512], why[200] = "", d1[1024], d2[1024];
	ck_assert_msg(db_open(&db, db_path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "%s",
	              err);
	struct password_record stored, scanned = {.n = 0};
	ck_assert_msg(get(&db, &stored, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(db_passwords_scan(&db, &scanned, false), 0);
	describe(&stored, d1, sizeof(d1));
	describe(&scanned, d2, sizeof(d2));
	ck_assert_str_eq(d1, d2);
	ck_assert_str_eq(d1, "{SSHA} 3;  1; {CRYPT}$6$rounds=5000$ 2; "
	                     "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$ 1; "
	                     "unknown 1 ({NOSUCH} on uid=u4,dc=example,dc=com)");
	password_record_free(&stored);
	password_record_free(&scanned);
	db_close(&db);
}
END_TEST

START_TEST(missing_and_bad_records_on_a_file)
{
	import_users();
	struct db db;
	char err[512], why[200];
	ck_assert_msg(db_open_rw(&db, db_path, SUFFIX, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	struct password_record p;
	/* A file made before the record. */
	meta_set(&db, NULL, 0, true);
	ck_assert_int_eq(get(&db, &p, why, sizeof(why)), MDB_NOTFOUND);
	ck_assert_int_eq(p.n, 0);
	/* A replica's change to such a file leaves it without (its server scans). */
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	struct entry_view e;
	entry_id id = 2;
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
	ck_assert_int_eq(db_passwords_update(&db, db_write_of(txn), &e, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	ck_assert_int_eq(get(&db, &p, why, sizeof(why)), MDB_NOTFOUND);
	/* Scanned and stored: the next read finds it. */
	struct password_record s = {.n = 0};
	ck_assert_int_eq(db_passwords_scan(&db, &s, true), 0);
	ck_assert_int_eq(get(&db, &p, why, sizeof(why)), 0);
	ck_assert_int_eq(p.n, s.n);
	password_record_free(&p);
	password_record_free(&s);
	/* Garbage. */
	meta_set(&db, "\x01\x05garbage", 9, false);
	why[0] = '\0';
	ck_assert_int_eq(get(&db, &p, why, sizeof(why)), MDB_CORRUPTED);
	ck_assert_msg(why[0], "no reason given");
	/* A change to a file with a bad record deletes it, not builds on it. */
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
	ck_assert_int_eq(db_passwords_update(&db, db_write_of(txn), &e, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	ck_assert_int_eq(get(&db, &p, why, sizeof(why)), MDB_NOTFOUND);
	db_close(&db);
	/* A new file starts with an empty record. */
	char fresh[160];
	snprintf(fresh, sizeof(fresh), "%s/new.mdb", dir);
	ck_assert_msg(db_open_rw(&db, fresh, SUFFIX, index_attrs, 2, err, sizeof(err)) == 0, "%s",
	              err);
	ck_assert_int_eq(get(&db, &p, why, sizeof(why)), 0);
	ck_assert_int_eq(p.n, 0);
	ck_assert_uint_eq(p.unknown, 0);
	db_close(&db);
}
END_TEST

static Suite *record_suite(void)
{
	Suite *s = suite_create("password_record");
	TCase *tc = tcase_create("record");
	tcase_add_test(tc, counted_by_class_in_order);
	tcase_add_test(tc, uncounted_drops_a_class_at_zero_and_keeps_a_sample);
	tcase_add_test(tc, at_most_the_bound_of_classes);
	tcase_add_test(tc, encoded_and_decoded_back);
	tcase_add_test(tc, cut_or_garbage_refused_with_a_reason);
	tcase_add_test(tc, a_sample_of_another_class_refused);
	suite_add_tcase(s, tc);
	TCase *files = tcase_create("files");
	tcase_add_checked_fixture(files, setup, teardown);
	tcase_add_test(files, import_record_equals_a_scan);
	tcase_add_test(files, missing_and_bad_records_on_a_file);
	suite_add_tcase(s, files);
	return s;
}

int main(void)
{
	return check_run_schema(record_suite(), "core cosine inetorgperson nis");
}
