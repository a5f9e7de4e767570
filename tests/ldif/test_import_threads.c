/*
 * Unit tests for minidir-import's threads (ldif/ldif_import.c, import_parse.c,
 * import_queue.c): the same LDIF imported with 1, 2 and 5 parsing threads gives the same
 * database, table by table (tests/storage/db_compare.h), and a file with a problem fails
 * with the same first problem, however many threads parse it. The directory is large
 * enough for many batches of the queue: people, nested organizational units, groups
 * (member and uniqueMember) named before and after their members, members that do not
 * exist, and entries of several classes. Run from the repository root.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/schema.h"
#include "tests/tree_schema.h"
#include "storage/db.h"
#include "ldif/import_queue.h"
#include "ldif/ldif_import.h"
#include "tests/check_run.h"
#include "tests/storage/db_compare.h"

#define SUFFIX "dc=example,dc=com"
/* The records the queue's ring holds (ldif/import_queue.h). */
#define RING_ITEMS (IMPORT_QUEUE_BATCHES * IMPORT_BATCH_ITEMS)
/* People in the directory: the ring one and a half times over, so that the parsers wrap
 * around it while the writer is behind them. */
#define PEOPLE (RING_ITEMS * 3 / 2)
/* Where a problem goes: past the ring's first turn. */
#define BAD_AT (RING_ITEMS * 9 / 8)

static char *const index_attrs[] = {"objectClass", "uid", "cn", "mail", "member", "entryUUID"};
#define NINDEX ((int)(sizeof(index_attrs) / sizeof(index_attrs[0])))

static char dir[64];

/* Entry n's entryUUID, so that two imports of the file give the same records. */
static void uuid(FILE *f, unsigned n)
{
	fprintf(f, "entryUUID: 00000000-0000-4000-8000-%012x\n", n);
}

/* Writes the directory to path, with a problem after about `bad_at` people when bad is
 * not NULL (bad is then the record put there). */
static void write_ldif(const char *path, unsigned bad_at, const char *bad)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	unsigned n = 0;
	fprintf(f, "version: 1\n\ndn: " SUFFIX "\nobjectClass: dcObject\nobjectClass: "
	           "organization\ndc: example\no: Example\n");
	uuid(f, n++);
	for (unsigned i = 0; i < 3; i++) {
		fprintf(f, "\ndn: ou=%s," SUFFIX "\nobjectClass: organizationalUnit\nou: %s\n",
		        i == 0   ? "groups"
		        : i == 1 ? "people"
		                 : "staff",
		        i == 0   ? "groups"
		        : i == 1 ? "people"
		                 : "staff");
		uuid(f, n++);
	}
	/* A group before its members, one member that will never exist. */
	fprintf(f, "\ndn: cn=early,ou=groups," SUFFIX "\nobjectClass: groupOfNames\ncn: early\n"
	           "member: uid=user.7,ou=people," SUFFIX "\nmember: UID=User.7, OU=People, "
	           "DC=Example, DC=Com\nmember: uid=nobody,ou=people," SUFFIX "\n");
	uuid(f, n++);
	for (unsigned i = 0; i < PEOPLE; i++) {
		if (bad && i == bad_at)
			fprintf(f, "\n%s", bad);
		const char *ou = i % 7 == 0 ? "staff" : "people";
		fprintf(
		    f,
		    "\ndn: uid=user.%u,ou=%s," SUFFIX "\nobjectClass: top\nobjectClass: person\n"
		    "objectClass: organizationalPerson\nobjectClass: inetOrgPerson\n"
		    "uid: user.%u\ncn: User %u\ncn: Person %u\nsn: %u\nmail: user.%u@example.com\n"
		    "description:: ZGVzY3JpcHRpb24g4oCU\n",
		    i, ou, i, i, i % 50, i, i);
		uuid(f, n++);
		if (i % 500 == 250) { /* a group of the people so far, and one of people to come */
			fprintf(f,
			        "\ndn: cn=group%u,ou=groups," SUFFIX "\nobjectClass: groupOfNames\n"
			        "cn: group%u\n",
			        i, i);
			for (unsigned m = 0; m < 40; m++)
				fprintf(f, "member: uid=user.%u,ou=%s," SUFFIX "\n", i - m * 6,
				        (i - m * 6) % 7 == 0 ? "staff" : "people");
			uuid(f, n++);
			fprintf(f,
			        "\ndn: cn=unique%u,ou=groups," SUFFIX "\n"
			        "objectClass: groupOfUniqueNames\ncn: unique%u\n",
			        i, i);
			for (unsigned m = 1; m <= 5; m++)
				fprintf(f,
				        "uniqueMember: uid=user.%u,ou=people," SUFFIX "#'0101'B\n",
				        i + m * 8 + (i + m * 8) % 7 == 0);
			uuid(f, n++);
		}
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* Imports ldif into db with threads parsing threads; returns ldif_import's result, and
 * what it printed in *errtext (malloc'd). */
static int import(const char *ldif, const char *db, int threads, char **errtext)
{
	char *text = NULL;
	size_t len = 0, count = 0;
	FILE *err = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(err);
	struct import_opts opts = {.suffix = SUFFIX,
	                           .index = index_attrs,
	                           .nindex = NINDEX,
	                           .err = err,
	                           .creator = "cn=admin," SUFFIX,
	                           .threads = threads};
	int rc = ldif_import(ldif, db, &opts, &count);
	fclose(err);
	*errtext = text;
	return rc;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/minidir-import-threads-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char err[256];
	ck_assert_msg(schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err)) == 0, "%s",
	              err);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	schema_free();
}

START_TEST(threads_give_the_same_database)
{
	char ldif[128], one[128], other[128];
	snprintf(ldif, sizeof(ldif), "%s/dir.ldif", dir);
	snprintf(one, sizeof(one), "%s/one.mdb", dir);
	write_ldif(ldif, 0, NULL);
	char *errtext;
	ck_assert_msg(import(ldif, one, 1, &errtext) == 0, "one thread: %s", errtext);
	free(errtext);
	const int threads[] = {2, 5};
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		snprintf(other, sizeof(other), "%s/threads%d.mdb", dir, threads[t]);
		ck_assert_msg(import(ldif, other, threads[t], &errtext) == 0, "%d threads: %s",
		              threads[t], errtext);
		free(errtext);
		ck_assert_msg(db_same(one, other), "%d threads: another database than one thread's",
		              threads[t]);
	}
}
END_TEST

START_TEST(threads_report_the_same_first_problem)
{
	/* Each: a record put among the people, and what the error names. */
	static const struct {
		const char *record, *word;
	} cases[] = {
	    {"dn: uid=x,ou=nowhere," SUFFIX "\nobjectClass: account\nuid: x\n", "parent"},
	    {"dn: uid=user.3,ou=people," SUFFIX "\nobjectClass: account\nuid: user.3\n",
	     "duplicate"},
	    {"dn: uid=y,ou=people," SUFFIX "\nobjectClass: person\ncn: y\n", "requires"},
	    {"dn: uid=z,ou=people," SUFFIX "\nobjectClass: account\nuid: z\nbad line\n",
	     "LDIF syntax"},
	    {"dn: uid=w,dc=other\nobjectClass: account\nuid: w\n", "outside"},
	    /* Both a missing parent and a schema problem: the parent is reported, as one
	     * thread checks it first. */
	    {"dn: uid=v,ou=nowhere," SUFFIX "\nobjectClass: person\ncn: v\n", "parent"},
	};
	char ldif[128], db[128];
	snprintf(ldif, sizeof(ldif), "%s/bad.ldif", dir);
	snprintf(db, sizeof(db), "%s/bad.mdb", dir);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		write_ldif(ldif, BAD_AT, cases[c].record);
		char *first;
		ck_assert_int_eq(import(ldif, db, 1, &first), -1);
		ck_assert_msg(strstr(first, cases[c].word), "case %zu: \"%s\" lacks \"%s\"", c,
		              first, cases[c].word);
		ck_assert_msg(strstr(first, "bad.ldif:"), "case %zu: no file:line in \"%s\"", c,
		              first);
		for (int threads = 2; threads <= 5; threads += 3) {
			char *text;
			ck_assert_int_eq(import(ldif, db, threads, &text), -1);
			ck_assert_msg(strcmp(text, first) == 0,
			              "case %zu, %d threads: \"%s\", one thread: \"%s\"", c,
			              threads, text, first);
			free(text);
		}
		free(first);
		ck_assert_int_eq(access(db, F_OK), -1); /* nothing was made */
	}
}
END_TEST

static Suite *threads_suite(void)
{
	Suite *s = suite_create("import threads");
	TCase *tc = tcase_create("threads");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* Several imports of the ring's records one and a half times over, also under the
	 * sanitizers. */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, threads_give_the_same_database);
	tcase_add_test(tc, threads_report_the_same_first_problem);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(threads_suite());
}
