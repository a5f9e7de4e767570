/*
 * Unit tests for storage: LDIF import into a new LMDB file, reading it back
 * (db, entry, candidates), failed imports leaving the old database alone, and
 * export. Run from the repository root (tests/data/...).
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/match.h"
#include "protocol/schema.h"
#include "storage/db_impl.h"
#include "tests/tree_schema.h"
#include "tests/storage/expect_line.h"
#include "tests/storage/meta_edit.h"
#include "storage/candidates.h"
#include "storage/db.h"
#include "storage/memo_counts.h"
#include "ldif/ldif_import.h"
#include "tests/check_run.h"

#define TEST_LDIF "tests/data/test.ldif"
#define BAD_GLOB "tests/data/bad/*.ldif"
#define SUFFIX "dc=test,dc=org"

static char *const index_attrs[] = {"objectClass", "uid", "cn", "mail", "member"};
#define NINDEX ((int)(sizeof(index_attrs) / sizeof(index_attrs[0])))

static char dir[96];
static char db_path[160];

/* ---- facts about an LDIF file, read independently of the importer ---- */

#define MAX_DNS 64
struct ldif_facts {
	size_t declared; /* from the "# N entries" first line */
	char *dns[MAX_DNS];
	size_t ndns;
	size_t inetorgperson; /* entries with objectClass: inetOrgPerson */
};

static void read_facts(const char *path, struct ldif_facts *f)
{
	memset(f, 0, sizeof(*f));
	FILE *fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "cannot open %s (run from the repository root)", path);
	char line[1024];
	int lineno = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (lineno == 1)
			ck_assert_int_eq(sscanf(line, "# %zu entries", &f->declared), 1);
		if (strncmp(line, "dn: ", 4) == 0) {
			ck_assert_uint_lt(f->ndns, MAX_DNS);
			f->dns[f->ndns++] = strdup(line + 4);
		}
		ck_assert_msg(strncmp(line, "dn::", 4) != 0, "base64 DNs not handled by this test");
		if (strcasecmp(line, "objectClass: inetOrgPerson") == 0)
			f->inetorgperson++;
	}
	fclose(fp);
}

static void free_facts(struct ldif_facts *f)
{
	for (size_t i = 0; i < f->ndns; i++)
		free(f->dns[i]);
}

/* Number of RDNs of a DN string: unescaped commas plus one. */
static int rdn_count(const char *dn)
{
	int n = 1;
	for (const char *p = dn; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == ',')
			n++;
	}
	return n;
}

/* True if dn is below base (textually: ends with "," base), at any depth. */
static bool below(const char *dn, const char *base)
{
	size_t n = strlen(dn), b = strlen(base);
	return n > b + 1 && dn[n - b - 1] == ',' && strcasecmp(dn + n - b, base) == 0;
}

static size_t count_below(const struct ldif_facts *f, const char *base, bool direct_only)
{
	size_t n = 0;
	for (size_t i = 0; i < f->ndns; i++)
		if (below(f->dns[i], base) &&
		    (!direct_only || rdn_count(f->dns[i]) == rdn_count(base) + 1))
			n++;
	return n;
}

/* ---- fixtures: a fresh directory per test, inside one per run ---- */

static char base_dir[64]; /* made and removed by the parent process */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(const char *path)
{
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Unchecked fixture, in the parent: also cleans up after tests that failed (a failing
 * check ends the test process without running its teardown). */
static void run_setup(void)
{
	snprintf(base_dir, sizeof(base_dir), "/tmp/minidir-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base_dir));
}

static void run_teardown(void)
{
	remove_tree(base_dir);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/t-XXXXXX", base_dir);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/test.mdb", dir);
}

static void teardown(void)
{
	remove_tree(dir);
}

/* Imports ldif into path; returns ldif_import's result, error text in *errtext (malloc'd).
 * url_values and skip_schema as minidir-import's -U and -s set them. */
static int import_with(const char *ldif, const char *path, size_t *count, char **errtext,
                       bool url_values, bool skip_schema)
{
	char *text = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(err);
	struct import_opts opts = {.suffix = SUFFIX,
	                           .index = index_attrs,
	                           .nindex = NINDEX,
	                           .err = err,
	                           .url_values = url_values,
	                           .skip_schema = skip_schema};
	int rc = ldif_import(ldif, path, &opts, count);
	fclose(err);
	if (errtext)
		*errtext = text;
	else
		free(text);
	return rc;
}

static int import(const char *ldif, const char *path, size_t *count, char **errtext)
{
	return import_with(ldif, path, count, errtext, false, false);
}

static void import_good(size_t *count)
{
	char *errtext = NULL;
	int rc = import(TEST_LDIF, db_path, count, &errtext);
	ck_assert_msg(rc == 0, "import of %s failed: %s", TEST_LDIF, errtext);
	free(errtext);
}

static void open_db(struct db *db, const char *path)
{
	char err[512];
	ck_assert_msg(db_open(db, path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "db_open: %s",
	              err);
}

static entry_id id_of(struct db *db, MDB_txn *txn, const char *dn)
{
	struct buf key = {0};
	ck_assert_int_eq(dn_normalize(dn, strlen(dn), NULL, &key), 0);
	entry_id id = 0;
	int rc = db_dn2id(db, db_read_of(txn), key.data, key.len, &id);
	ck_assert_msg(rc == 0, "\"%s\" not found: %s", dn, mdb_strerror(rc));
	buf_free(&key);
	return id;
}

/* All IDs of a candidate set, in the order given; checks they are distinct. */
static size_t drain(struct candidates *c, MDB_txn *txn, entry_id *ids, size_t max)
{
	cand_begin(c, db_read_of(txn), NULL);
	size_t n = 0;
	entry_id id;
	int rc;
	while ((rc = cand_next(c, &id)) == 0) {
		ck_assert_uint_lt(n, max);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(ids[i] != id, "ID %u returned twice", id);
		ids[n++] = id;
	}
	ck_assert_int_eq(rc, MDB_NOTFOUND);
	/* Stays at the end. */
	ck_assert_int_eq(cand_next(c, &id), MDB_NOTFOUND);
	cand_end(c, NULL);
	return n;
}

/* The DN string stored for id. */
static void dn_of(struct db *db, MDB_txn *txn, entry_id id, char *out, size_t cap)
{
	struct entry_view e;
	ck_assert_int_eq(db_get_entry(db, db_read_of(txn), id, &e), 0);
	ck_assert_uint_lt(e.dnlen, cap);
	memcpy(out, e.dn, e.dnlen);
	out[e.dnlen] = '\0';
}

/* ---- tests ---- */

START_TEST(import_count)
{
	struct ldif_facts f;
	read_facts(TEST_LDIF, &f);
	ck_assert_uint_eq(f.ndns, f.declared); /* the file is what it says */
	size_t count = 0;
	import_good(&count);
	ck_assert_uint_eq(count, f.declared);

	struct db db;
	open_db(&db, db_path);
	ck_assert_uint_eq(db.entries, f.declared);
	ck_assert_uint_eq(db.suffix.len, strlen(SUFFIX));
	ck_assert_mem_eq(db.suffix.data, SUFFIX, strlen(SUFFIX));
	ck_assert_int_eq(db.nindex, NINDEX + 1); /* and memberOf, always */
	ck_assert_ptr_nonnull(db_index_find(&db, "memberOf", 8));
	for (int i = 0; i < NINDEX; i++) {
		const struct db_index *ix =
		    db_index_find(&db, index_attrs[i], strlen(index_attrs[i]));
		ck_assert_ptr_nonnull(ix);
	}
	ck_assert_ptr_nonnull(db_index_find(&db, "OBJECTCLASS", 11));
	ck_assert_ptr_null(db_index_find(&db, "sn", 2));
	ck_assert_int_eq(db_index_find(&db, "member", 6)->rule, MATCH_DN);
	db_close(&db);
	free_facts(&f);
}
END_TEST

START_TEST(lookup_and_parent_chain)
{
	size_t count;
	import_good(&count);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);

	entry_id user3 = id_of(&db, txn, "uid=user3,ou=people,dc=test,dc=org");
	entry_id people = id_of(&db, txn, "ou=people,dc=test,dc=org");
	entry_id top = id_of(&db, txn, SUFFIX);
	ck_assert_uint_ne(user3, people);
	/* Entries get IDs in file order. */
	ck_assert_uint_eq(top, 1);
	ck_assert_uint_lt(people, user3);
	/* Any spelling of the DN finds the same entry. */
	ck_assert_uint_eq(id_of(&db, txn, "UID=User3, OU=People, DC=Test, DC=Org"), user3);

	struct entry_view e;
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), user3, &e), 0);
	ck_assert_uint_eq(e.parent, people);
	const char *dn = "uid=user3,ou=people,dc=test,dc=org";
	ck_assert_uint_eq(e.dnlen, strlen(dn));
	ck_assert_mem_eq(e.dn, dn, e.dnlen);
	struct buf key = {0};
	ck_assert_int_eq(dn_normalize(dn, strlen(dn), NULL, &key), 0);
	ck_assert_uint_eq(e.keylen, key.len);
	ck_assert_mem_eq(e.key, key.data, key.len);
	buf_free(&key);
	ck_assert_uint_eq(e.op[0], LDAP_RES_SEARCH_ENTRY);

	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), people, &e), 0);
	ck_assert_uint_eq(e.parent, top);
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), top, &e), 0);
	ck_assert_uint_eq(e.parent, 0);

	/* The deepest entry walks up to the suffix in four steps. */
	entry_id id = id_of(&db, txn, "uid=deepest,ou=deeper,ou=deep,ou=people,dc=test,dc=org");
	int steps = 0;
	while (id != top) {
		ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
		ck_assert_uint_lt(e.parent, id); /* parents come first */
		id = e.parent;
		steps++;
	}
	ck_assert_int_eq(steps, 4);

	/* Missing DNs and IDs. */
	struct buf k = {0};
	const char *missing = "uid=user99,ou=people,dc=test,dc=org";
	ck_assert_int_eq(dn_normalize(missing, strlen(missing), NULL, &k), 0);
	entry_id none;
	ck_assert_int_eq(db_dn2id(&db, db_read_of(txn), k.data, k.len, &none), MDB_NOTFOUND);
	buf_free(&k);
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), (entry_id)(count + 1), &e),
	                 MDB_NOTFOUND);
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), 0, &e), MDB_NOTFOUND);

	mdb_txn_abort(txn);
	db_close(&db);
}
END_TEST

START_TEST(candidates_children)
{
	struct ldif_facts f;
	read_facts(TEST_LDIF, &f);
	size_t count;
	import_good(&count);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);

	const char *bases[] = {"ou=people,dc=test,dc=org", SUFFIX, "ou=groups,dc=test,dc=org",
	                       "ou=deep,ou=people,dc=test,dc=org",
	                       "uid=user3,ou=people,dc=test,dc=org"};
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		entry_id parent = id_of(&db, txn, bases[b]);
		size_t want = count_below(&f, bases[b], true);
		struct candidates c;
		cand_init_children(&c, &db, parent);
		ck_assert_msg(cand_count(&c, db_read_of(txn)) == want,
		              "%s: cand_count %zu, expected %zu", bases[b],
		              cand_count(&c, db_read_of(txn)), want);
		entry_id ids[MAX_DNS];
		size_t n = drain(&c, txn, ids, MAX_DNS);
		ck_assert_msg(n == want, "%s: %zu children, expected %zu", bases[b], n, want);
		for (size_t i = 0; i < n; i++) {
			struct entry_view e;
			ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), ids[i], &e), 0);
			ck_assert_uint_eq(e.parent, parent);
			if (i > 0)
				ck_assert_uint_gt(ids[i], ids[i - 1]); /* ID order */
		}
		cand_free(&c);
	}
	mdb_txn_abort(txn);
	db_close(&db);
	free_facts(&f);
}
END_TEST

START_TEST(candidates_subtree)
{
	struct ldif_facts f;
	read_facts(TEST_LDIF, &f);
	size_t count;
	import_good(&count);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);

	const char *bases[] = {SUFFIX, "ou=people,dc=test,dc=org",
	                       "ou=deep,ou=people,dc=test,dc=org",
	                       "uid=user3,ou=people,dc=test,dc=org"};
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct buf key = {0};
		ck_assert_int_eq(dn_normalize(bases[b], strlen(bases[b]), NULL, &key), 0);
		struct candidates c;
		cand_init_subtree(&c, &db, key.data, key.len);
		entry_id ids[MAX_DNS];
		size_t n = drain(&c, txn, ids, MAX_DNS);
		size_t want = count_below(&f, bases[b], false) + 1; /* and the base */
		ck_assert_msg(n == want, "%s: %zu in subtree, expected %zu", bases[b], n, want);
		for (size_t i = 0; i < n; i++) {
			struct entry_view e;
			ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), ids[i], &e), 0);
			ck_assert(dn_key_in_subtree(e.key, e.keylen, key.data, key.len));
		}
		cand_free(&c);
		buf_free(&key);
	}
	/* The whole suffix is every entry. */
	struct candidates c;
	cand_init_subtree(&c, &db, db.suffix_key.data, db.suffix_key.len);
	entry_id ids[MAX_DNS];
	ck_assert_uint_eq(drain(&c, txn, ids, MAX_DNS), f.declared);
	cand_free(&c);
	mdb_txn_abort(txn);
	db_close(&db);
	free_facts(&f);
}
END_TEST

START_TEST(candidates_resume_across_transactions)
{
	/* A paused search continues in a new transaction exactly where it stopped. */
	size_t count;
	import_good(&count);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	entry_id all[MAX_DNS];
	struct candidates c;
	cand_init_subtree(&c, &db, db.suffix_key.data, db.suffix_key.len);
	size_t n = drain(&c, txn, all, MAX_DNS);
	cand_free(&c);
	mdb_txn_abort(txn);

	entry_id parent_people;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	parent_people = id_of(&db, txn, "ou=people,dc=test,dc=org");
	mdb_txn_abort(txn);

	/* Each transaction's cursor is the last one's, renewed (as a worker's searches). */
	struct cursor_pool pool = {0};
	cursor_pool_reset(&pool, &db);
	for (int kind = 0; kind < 2; kind++) {
		struct candidates r;
		if (kind == 0)
			cand_init_subtree(&r, &db, db.suffix_key.data, db.suffix_key.len);
		else
			cand_init_children(&r, &db, parent_people);
		entry_id got[MAX_DNS];
		size_t m = 0;
		int rc = 0;
		while (rc == 0) {
			/* Two IDs per transaction. */
			ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
			cand_begin(&r, db_read_of(txn), &pool);
			for (int k = 0; k < 2 && rc == 0; k++) {
				entry_id id;
				rc = cand_next(&r, &id);
				if (rc == 0) {
					ck_assert_uint_lt(m, MAX_DNS);
					got[m++] = id;
				}
			}
			cand_end(&r, &pool);
			ck_assert_int_eq(pool.n, kind + 1); /* one per table: reused, not added */
			mdb_txn_abort(txn);
		}
		ck_assert_int_eq(rc, MDB_NOTFOUND);
		if (kind == 0) {
			ck_assert_uint_eq(m, n);
			ck_assert_mem_eq(got, all, n * sizeof(entry_id));
		} else {
			/* Same as reading the children in one go. */
			ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
			struct candidates once;
			cand_init_children(&once, &db, parent_people);
			entry_id ref[MAX_DNS];
			size_t rn = drain(&once, txn, ref, MAX_DNS);
			cand_free(&once);
			mdb_txn_abort(txn);
			ck_assert_uint_eq(m, rn);
			ck_assert_mem_eq(got, ref, rn * sizeof(entry_id));
		}
		cand_free(&r);
	}
	cursor_pool_reset(&pool, NULL);
	db_close(&db);
}
END_TEST

/* Normalized index key of value under attribute attr's rule. */
/* ---- reading a record again (db.h's records_at) ---- */

struct reread {
	struct db *db;
	size_t count;
	struct buf *first; /* the records' bytes as the first read returned them */
	int mismatches;
};

static void *reread_all(void *arg)
{
	struct reread *r = arg;
	MDB_txn *txn;
	if (mdb_txn_begin(r->db->env, NULL, MDB_RDONLY, &txn) != 0) {
		r->mismatches = -1;
		return NULL;
	}
	for (int pass = 0; pass < 3; pass++)
		for (entry_id id = 1; id <= r->count; id++) {
			struct entry_view e;
			const struct buf *b = &r->first[id];
			if (db_get_entry(r->db, db_read_of(txn), id, &e) != 0 ||
			    e.oplen != b->len || memcmp(e.op, b->data, b->len) != 0)
				r->mismatches++;
		}
	mdb_txn_abort(txn);
	return NULL;
}

START_TEST(records_read_again)
{
	size_t count;
	import_good(&count);
	struct db db;
	open_db(&db, db_path);
	/* Room for every ID of the file, none of it filled before a read. */
	ck_assert_ptr_nonnull(db.records_at);
	ck_assert_uint_eq(db.records_at_count, count + 1);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	struct buf *first = calloc(count + 1, sizeof(*first));
	for (entry_id id = 1; id <= count; id++) {
		struct entry_view e;
		ck_assert_ptr_null(atomic_load(&db.records_at[id].data));
		ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
		ck_assert_int_eq(buf_append(&first[id], e.op, e.oplen), 0);
		ck_assert_ptr_nonnull(atomic_load(&db.records_at[id].data));
	}
	/* IDs with no record are not found however often they are asked for. */
	struct entry_view e;
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), 0, &e), MDB_NOTFOUND);
		ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), (entry_id)(count + 1), &e),
		                 MDB_NOTFOUND);
	}
	mdb_txn_abort(txn);

	/* Read again from two threads, in transactions of their own: the same bytes. */
	struct reread r[2] = {{&db, count, first, 0}, {&db, count, first, 0}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, reread_all, &r[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(r[i].mismatches, 0);
	}
	for (entry_id id = 1; id <= count; id++)
		buf_free(&first[id]);
	free(first);
	db_close(&db);
}
END_TEST

/* db_open_served's budget (memo_bytes): the split, the table that evicts when the direct
 * array does not fit, none at 0; every record right, and the reads counted. */
START_TEST(records_within_a_budget)
{
	size_t count;
	import_good(&count);
	char err[512];
	struct db db;
	/* The direct array and the full key memo fit: both, as db_open gives them. */
	ck_assert_int_eq(db_open_served(&db, db_path, 1 << 20, 0, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(db.records_at);
	ck_assert_uint_eq(db_record_memo_bytes(&db), (count + 1) * sizeof(struct db_record_at));
	ck_assert_uint_eq(db.index_memo.bytes,
	                  key_memo_bytes_for(db.entries * 2, KEY_MEMO_MAX_SLOTS));
	db_close(&db);
	/* Neither fits its half: a table of half the budget, the key memo in the other. */
	size_t budget = 512;
	ck_assert_uint_gt((count + 1) * sizeof(struct db_record_at), budget / 2);
	ck_assert_int_eq(db_open_served(&db, db_path, budget, 0, err, sizeof(err)), 0);
	ck_assert_ptr_null(db.records_at);
	ck_assert_ptr_nonnull(db.record_memo.slot);
	ck_assert_uint_eq(db_record_memo_bytes(&db), budget / 2);
	ck_assert_uint_eq(db.index_memo.bytes, budget / 2);
	ck_assert_uint_eq(db.memo_budget, budget);
	struct db_memo_counts n = {0};
	db_memo_counts = &n;
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	struct buf *first = calloc(count + 1, sizeof(*first));
	struct entry_view e;
	for (entry_id id = 1; id <= count; id++) {
		ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
		ck_assert_int_eq(buf_append(&first[id], e.op, e.oplen), 0);
	}
	ck_assert_uint_eq(n.record_misses, count);
	ck_assert_uint_eq(n.record_hits, 0);
	for (entry_id id = (entry_id)count; id >= 1; id--) { /* the last read first */
		ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), id, &e), 0);
		ck_assert(e.oplen == first[id].len && memcmp(e.op, first[id].data, e.oplen) == 0);
	}
	/* 8 slots for more IDs: some of the last stayed, the rest were read again */
	ck_assert_uint_gt(n.record_hits, 0);
	ck_assert_uint_le(n.record_hits, budget / 2 / RECORD_MEMO_SLOT_BYTES);
	ck_assert_uint_eq(n.record_hits + n.record_misses, 2 * count);
	ck_assert_int_eq(db_get_entry(&db, db_read_of(txn), (entry_id)(count + 1), &e),
	                 MDB_NOTFOUND);
	mdb_txn_abort(txn);
	db_memo_counts = NULL;
	/* Two threads at once, evicting each other's: always the right bytes. */
	struct reread r[2] = {{&db, count, first, 0}, {&db, count, first, 0}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, reread_all, &r[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(r[i].mismatches, 0);
	}
	db_close(&db);
	/* 0: no memos, and every record still read. */
	ck_assert_int_eq(db_open_served(&db, db_path, 0, 0, err, sizeof(err)), 0);
	ck_assert_ptr_null(db.records_at);
	ck_assert_ptr_null(db.record_memo.slot);
	ck_assert_ptr_null(db.index_memo.slot);
	ck_assert_uint_eq(db_record_memo_bytes(&db), 0);
	r[0].db = &db;
	reread_all(&r[0]);
	ck_assert_int_eq(r[0].mismatches, 0);
	db_close(&db);
	for (entry_id id = 1; id <= count; id++)
		buf_free(&first[id]);
	free(first);
}
END_TEST

static size_t index_ids(struct db *db, MDB_txn *txn, const char *attr, const char *value,
                        entry_id *ids)
{
	const struct db_index *ix = db_index_find(db, attr, strlen(attr));
	ck_assert_ptr_nonnull(ix);
	struct buf v = {0};
	ck_assert_int_eq(match_normalize(ix->rule, value, strlen(value), &v), 0);
	struct candidates c;
	cand_init_index(&c, db, ix, v.data, v.len);
	size_t est = cand_count(&c, db_read_of(txn));
	size_t n = drain(&c, txn, ids, MAX_DNS);
	ck_assert_uint_eq(est, n);
	cand_free(&c);
	buf_free(&v);
	return n;
}

/* The values of attribute attr of the entry dn (pointing into txn's pages), at most max, in
 * stored order; their number. */
static size_t entry_values(struct db *db, MDB_txn *txn, const char *dn, const char *attr,
                           struct berval *out, size_t max)
{
	struct entry_view e;
	ck_assert_int_eq(db_get_entry(db, db_read_of(txn), id_of(db, txn, dn), &e), 0);
	const unsigned char *vals, *v;
	size_t vlen, len, n = 0;
	if (!entry_find_attr(&e, attr, strlen(attr), &vals, &vlen))
		return 0;
	const unsigned char *end = vals + vlen;
	while (n < max && entry_next_value(&vals, end, &v, &len))
		out[n++] = (struct berval){len, (char *)v};
	return n;
}

/* The values of attribute attr of the entry dn, in stored order, joined by '|' into out. */
static void values_of(struct db *db, MDB_txn *txn, const char *dn, const char *attr, char *out,
                      size_t cap)
{
	struct berval v[8];
	size_t n = entry_values(db, txn, dn, attr, v, 8);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), cap - strlen(out), "%s%.*s", i ? "|" : "",
		         (int)v[i].bv_len, v[i].bv_val);
}

/*
 * An import records the digest of the schema it loaded (a server compares it before it
 * serves the file: server/start/startup.c); a file without it (an older minidir-import's,
 * made here by deleting the key) opens as before, with none; an import without a schema
 * loaded records none.
 */
START_TEST(schema_digest_recorded)
{
	char err[512];
	struct db db;
	ck_assert_msg(schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err)) == 0, "%s",
	              err);
	ck_assert_uint_eq(strlen(schema_digest()), SCHEMA_DIGEST_SIZE - 1);
	size_t n;
	import_good(&n);
	open_db(&db, db_path);
	ck_assert_str_eq(db.schema, schema_digest());
	db_close(&db);
	meta_edit(db_path, DB_META_SCHEMA, NULL);
	open_db(&db, db_path);
	ck_assert_str_eq(db.schema, "");
	ck_assert_uint_eq(db.entries, n);
	db_close(&db);
	schema_free();
	ck_assert_str_eq(schema_digest(), "");
	char *errtext = NULL;
	ck_assert_msg(import_with(TEST_LDIF, db_path, &n, &errtext, false, true) == 0, "%s",
	              errtext);
	free(errtext);
	open_db(&db, db_path);
	ck_assert_str_eq(db.schema, "");
	db_close(&db);
}
END_TEST

/*
 * An RDN value the entry's attributes lack is added, as slapadd adds it: "dn: ou=x" with
 * only "ou: y" is found by (ou=x) too; each AVA of a multi-valued RDN, an alias in the DN
 * (commonName) naming cn, a new attribute (uid); a value there under its equality rule
 * ("CN=Mixed" and "cn: mixed", "cn=Sp  ace" and "cn: Sp ace") or the same bytes is not added
 * twice; a value in an attribute with options does not count. With skip_schema (slapadd
 * -s) nothing is added. With the schema loaded (for the alias, and checked as slapadd does).
 */
START_TEST(rdn_values_added)
{
	char path[256], err[512];
	ck_assert_msg(schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err)) == 0, "%s",
	              err);
	snprintf(path, sizeof(path), "%s/rdn.ldif", dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("dn: dc=test,dc=org\nobjectClass: top\nobjectClass: dcObject\n"
	      "objectClass: organization\no: Test Org\ndc: test\n\n"
	      "dn: ou=x,dc=test,dc=org\nobjectClass: organizationalUnit\nou: y\n\n"
	      "dn: cn=a+sn=b,dc=test,dc=org\nobjectClass: person\ncn: z\nsn: q\n\n"
	      "dn: uid=u1,dc=test,dc=org\nobjectClass: inetOrgPerson\ncn: u\nsn: u\n\n"
	      "dn: CN=Mixed,dc=test,dc=org\nobjectClass: person\ncn: mixed\nsn: m\n\n"
	      "dn: cn=Sp  ace,dc=test,dc=org\nobjectClass: person\ncn: Sp ace\nsn: m\n\n"
	      "dn: commonName=alias+cn=two+sn=b,dc=test,dc=org\nobjectClass: person\n"
	      "cn;lang-en: alias\nsn: b\n\n",
	      fp);
	fclose(fp);
	static const struct {
		const char *dn, *attr, *want, *skipped;
	} cases[] = {
	    {"ou=x,dc=test,dc=org", "ou", "y|x", "y"},
	    {"cn=a+sn=b,dc=test,dc=org", "cn", "z|a", "z"},
	    {"cn=a+sn=b,dc=test,dc=org", "sn", "q|b", "q"},
	    {"uid=u1,dc=test,dc=org", "uid", "u1", ""},
	    {"cn=mixed,dc=test,dc=org", "cn", "mixed", "mixed"},
	    {"cn=sp ace,dc=test,dc=org", "cn", "Sp ace", "Sp ace"},
	    {"cn=alias+cn=two+sn=b,dc=test,dc=org", "cn", "alias|two", ""},
	    {"cn=alias+cn=two+sn=b,dc=test,dc=org", "cn;lang-en", "alias", "alias"},
	};
	for (int skip = 0; skip < 2; skip++) {
		char *errtext = NULL;
		size_t n;
		int rc = import_with(path, db_path, &n, &errtext, false, skip);
		ck_assert_msg(rc == 0, "import: %s", errtext);
		free(errtext);
		struct db db;
		open_db(&db, db_path);
		MDB_txn *txn;
		ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char got[256];
			values_of(&db, txn, cases[i].dn, cases[i].attr, got, sizeof(got));
			const char *want = skip ? cases[i].skipped : cases[i].want;
			ck_assert_msg(strcmp(got, want) == 0, "%s%s: %s is \"%s\", not \"%s\"",
			              cases[i].dn, skip ? " (skip_schema)" : "", cases[i].attr, got,
			              want);
		}
		/* The cn index has the added value: (cn=a) finds the entry. */
		entry_id ids[MAX_DNS];
		ck_assert_uint_eq(index_ids(&db, txn, "cn", "a", ids), skip ? 0 : 1);
		mdb_txn_abort(txn);
		db_close(&db);
		unlink(db_path);
	}
	unlink(path);
	schema_free();
}
END_TEST

START_TEST(candidates_index)
{
	struct ldif_facts f;
	read_facts(TEST_LDIF, &f);
	size_t count;
	import_good(&count);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	entry_id ids[MAX_DNS];
	char dn[256];

	entry_id user3 = id_of(&db, txn, "uid=user3,ou=people,dc=test,dc=org");
	ck_assert_uint_eq(index_ids(&db, txn, "uid", "user3", ids), 1);
	ck_assert_uint_eq(ids[0], user3);
	/* Index values are normalized: case does not matter. */
	ck_assert_uint_eq(index_ids(&db, txn, "UID", "USER3", ids), 1);
	ck_assert_uint_eq(ids[0], user3);
	ck_assert_uint_eq(index_ids(&db, txn, "uid", "user33", ids), 0);
	ck_assert_uint_eq(index_ids(&db, txn, "uid", "user", ids), 0);

	/* Both mail values of user3 lead to it. */
	ck_assert_uint_eq(index_ids(&db, txn, "mail", "user3.alt@test.org", ids), 1);
	ck_assert_uint_eq(ids[0], user3);
	ck_assert_uint_eq(index_ids(&db, txn, "mail", "USER3@test.org", ids), 1);
	ck_assert_uint_eq(ids[0], user3);

	ck_assert_uint_eq(index_ids(&db, txn, "objectClass", "inetOrgPerson", ids),
	                  f.inetorgperson);

	/* cn with an escaped comma in the DN; the value itself has a plain comma. */
	ck_assert_uint_eq(index_ids(&db, txn, "cn", "doe, jane", ids), 1);
	dn_of(&db, txn, ids[0], dn, sizeof(dn));
	ck_assert_str_eq(dn, "cn=Doe\\2C Jane,ou=people,dc=test,dc=org");

	/* member values are DN-normalized: any spelling finds the groups. */
	ck_assert_uint_eq(
	    index_ids(&db, txn, "member", "UID=User3, OU=People, DC=Test, DC=Org", ids), 1);
	dn_of(&db, txn, ids[0], dn, sizeof(dn));
	ck_assert_str_eq(dn, "cn=all,ou=groups,dc=test,dc=org");
	ck_assert_uint_eq(index_ids(&db, txn, "member", "uid=user0,ou=people,dc=test,dc=org", ids),
	                  2);

	mdb_txn_abort(txn);
	db_close(&db);
	free_facts(&f);
}
END_TEST

/* Directory entries other than the database file itself. */
static int leftovers(char *names, size_t cap)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	names[0] = '\0';
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, "test.mdb") == 0 || strcmp(de->d_name, "good.ldif") == 0)
			continue;
		size_t used = strlen(names);
		snprintf(names + used, cap - used, " %s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The whole export of path, malloc'd. */
static char *export_text(const char *path, size_t *len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&text, &n);
	ck_assert_ptr_nonnull(out);
	char err[512];
	int rc = ldif_export(path, out, err, sizeof(err), NULL, NULL);
	fclose(out);
	ck_assert_msg(rc == 0, "export: %s", err);
	*len = n;
	return text;
}

START_TEST(bad_files)
{
	glob_t g;
	ck_assert_int_eq(glob(BAD_GLOB, 0, NULL, &g), 0);
	ck_assert_uint_ge(g.gl_pathc, 1);
	size_t count;
	import_good(&count);
	size_t before_len;
	char *before = export_text(db_path, &before_len);

	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		/* "# expect: N: word" on the first line: the error names line N and word. */
		unsigned long line;
		char words[256], word[64];
		expect_line_read(path, &line, words, sizeof(words));
		ck_assert_msg(sscanf(words, "%63s", word) == 1, "%s: no word after the line", path);

		char *errtext = NULL;
		size_t n = 12345;
		int rc = import(path, db_path, &n, &errtext);
		ck_assert_msg(rc == -1, "%s imported", path);
		char want[512];
		snprintf(want, sizeof(want), "%s:%lu:", path, line);
		ck_assert_msg(strstr(errtext, want) != NULL, "%s: error \"%s\" lacks \"%s\"", path,
		              errtext, want);
		ck_assert_msg(strcasestr(errtext, word) != NULL, "%s: error \"%s\" lacks \"%s\"",
		              path, errtext, word);
		/* One problem reported, on one line. */
		ck_assert_msg(strchr(errtext, '\n') == errtext + strlen(errtext) - 1,
		              "%s: error is not one line: \"%s\"", path, errtext);
		free(errtext);

		/* The good database is untouched, and nothing was left behind. */
		struct db db;
		open_db(&db, db_path);
		ck_assert_uint_eq(db.entries, count);
		db_close(&db);
		size_t after_len;
		char *after = export_text(db_path, &after_len);
		ck_assert_uint_eq(after_len, before_len);
		ck_assert_mem_eq(after, before, before_len);
		free(after);
		char names[512];
		ck_assert_msg(leftovers(names, sizeof(names)) == 0, "after %s, left in %s:%s", path,
		              dir, names);
	}
	free(before);
	globfree(&g);
}
END_TEST

START_TEST(syntax_error_line_numbers_agree)
{
	/*
	 * For an LDIF syntax error, libldap's parser prints its own message to
	 * stderr ("invalid format (line N)"). Whatever is printed about the
	 * failure must name the same line as the "file:line:" report.
	 */
	const char *path = "tests/data/bad/syntax.ldif";
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	char first[256];
	ck_assert_ptr_nonnull(fgets(first, sizeof(first), fp));
	fclose(fp);
	unsigned long line;
	ck_assert_int_eq(sscanf(first, "# expect: %lu:", &line), 1);

	char cap[128];
	snprintf(cap, sizeof(cap), "%s/stderr", dir);
	fflush(stderr);
	int saved = dup(2);
	int fd = open(cap, O_CREAT | O_RDWR | O_TRUNC, 0600);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	char *errtext = NULL;
	size_t n;
	int rc = import(path, db_path, &n, &errtext);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_eq(rc, -1);
	char printed[1024] = "";
	ssize_t got = pread(fd, printed, sizeof(printed) - 1, 0);
	close(fd);
	unlink(cap);
	ck_assert_int_ge(got, 0);
	printed[got] = '\0';

	char want[512];
	snprintf(want, sizeof(want), "%s:%lu:", path, line);
	ck_assert_msg(strstr(errtext, want) != NULL, "report \"%s\" lacks \"%s\"", errtext, want);
	for (const char *p = printed; (p = strstr(p, "line ")) != NULL; p += 5) {
		char *end;
		unsigned long other = strtoul(p + 5, &end, 10);
		if (end == p + 5)
			continue;
		ck_assert_msg(
		    other == line,
		    "stderr says line %lu, the report says line %lu:\n  stderr: %s  report: %s",
		    other, line, printed, errtext);
	}
	free(errtext);
}
END_TEST

START_TEST(bad_file_no_previous_database)
{
	/* A failed import into a new path creates nothing there. */
	glob_t g;
	ck_assert_int_eq(glob(BAD_GLOB, 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t n;
		ck_assert_int_eq(import(g.gl_pathv[i], db_path, &n, NULL), -1);
		ck_assert_int_eq(access(db_path, F_OK), -1);
		char names[512];
		ck_assert_msg(leftovers(names, sizeof(names)) == 0, "left in %s:%s", dir, names);
	}
	globfree(&g);
}
END_TEST

START_TEST(missing_ldif_file)
{
	char *errtext = NULL;
	size_t n;
	ck_assert_int_eq(import("tests/data/no-such-file.ldif", db_path, &n, &errtext), -1);
	ck_assert_ptr_nonnull(strstr(errtext, "tests/data/no-such-file.ldif"));
	free(errtext);
	ck_assert_int_eq(access(db_path, F_OK), -1);
}
END_TEST

START_TEST(empty_ldif_file)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/good.ldif", dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("# nothing here\nversion: 1\n", fp);
	fclose(fp);
	char *errtext = NULL;
	size_t n;
	ck_assert_int_eq(import(path, db_path, &n, &errtext), -1);
	ck_assert_ptr_nonnull(strstr(errtext, path));
	free(errtext);
	ck_assert_int_eq(access(db_path, F_OK), -1);
}
END_TEST

START_TEST(duplicate_spelled_differently)
{
	/* The same DN in another case and spacing is a duplicate, reported on its line (9). */
	char path[256];
	snprintf(path, sizeof(path), "%s/good.ldif", dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("dn: dc=test,dc=org\n"           /* 1 */
	      "objectClass: top\n"             /* 2 */
	      "\n"                             /* 3 */
	      "dn: ou=People,dc=test,dc=org\n" /* 4 */
	      "objectClass: organizationalUnit\n"
	      "ou: People\n"
	      "\n"
	      "# the same entry again\n"        /* 8 */
	      "dn: OU=people, DC=Test,DC=ORG\n" /* 9 */
	      "objectClass: organizationalUnit\n"
	      "ou: people\n",
	      fp);
	fclose(fp);
	char *errtext = NULL;
	size_t n;
	ck_assert_int_eq(import(path, db_path, &n, &errtext), -1);
	char want[300];
	snprintf(want, sizeof(want), "%s:9:", path);
	ck_assert_msg(strstr(errtext, want) != NULL, "error \"%s\" lacks \"%s\"", errtext, want);
	ck_assert_ptr_nonnull(strcasestr(errtext, "duplicate"));
	free(errtext);
	ck_assert_int_eq(access(db_path, F_OK), -1);
}
END_TEST

START_TEST(reimport_replaces)
{
	/* A second good import replaces the first. */
	size_t count;
	import_good(&count);
	char path[256];
	snprintf(path, sizeof(path), "%s/good.ldif", dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("dn: dc=test,dc=org\nobjectClass: top\nobjectClass: dcObject\ndc: test\n\n"
	      "dn: ou=only,dc=test,dc=org\nobjectClass: organizationalUnit\nou: only\n",
	      fp);
	fclose(fp);
	size_t n = 0;
	ck_assert_int_eq(import(path, db_path, &n, NULL), 0);
	ck_assert_uint_eq(n, 2);
	struct db db;
	open_db(&db, db_path);
	ck_assert_uint_eq(db.entries, 2);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	id_of(&db, txn, "ou=only,dc=test,dc=org");
	mdb_txn_abort(txn);
	db_close(&db);
	char names[512];
	ck_assert_msg(leftovers(names, sizeof(names)) == 0, "left in %s:%s", dir, names);
}
END_TEST

START_TEST(export_reimport_identical)
{
	size_t count;
	import_good(&count);
	size_t len1;
	char *text1 = export_text(db_path, &len1);
	ck_assert_uint_gt(len1, 0);
	/* Spot checks of the LDIF written. */
	ck_assert_ptr_nonnull(strstr(text1, "\ndn: uid=user3,ou=people,dc=test,dc=org\n"));
	ck_assert_ptr_nonnull(strstr(text1, "\nmail: user3.alt@test.org\n"));
	ck_assert_ptr_nonnull(strstr(text1, "\ncn:: Sm9zw6kgTsO6w7Fleg==\n")); /* not ASCII */
	ck_assert_ptr_nonnull(strstr(text1, "\ndn: dc=test,dc=org\n"));
	ck_assert(strstr(text1, "\ndn: dc=test,dc=org\n") <
	          strstr(text1, "\ndn: ou=people,dc=test,dc=org\n"));

	char path[256];
	snprintf(path, sizeof(path), "%s/good.ldif", dir);
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text1, 1, len1, fp), len1);
	fclose(fp);
	char db2[256];
	snprintf(db2, sizeof(db2), "%s/second.mdb", dir);
	size_t count2 = 0;
	char *errtext = NULL;
	int rc = import(path, db2, &count2, &errtext);
	ck_assert_msg(rc == 0, "re-import failed: %s", errtext);
	free(errtext);
	ck_assert_uint_eq(count2, count);

	size_t len2;
	char *text2 = export_text(db2, &len2);
	ck_assert_uint_eq(len2, len1);
	ck_assert_mem_eq(text2, text1, len1);
	free(text1);
	free(text2);
}
END_TEST

START_TEST(database_mode_0600)
{
	/* The database (the renamed DATABASE.tmp.PID) is 0600 whatever the umask. */
	const mode_t masks[] = {0, 022, 0277};
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		mode_t old = umask(masks[i]);
		size_t count;
		import_good(&count);
		umask(old);
		struct stat st;
		ck_assert_int_eq(stat(db_path, &st), 0);
		ck_assert_msg((st.st_mode & 07777) == 0600, "umask %03o: database mode %03o",
		              (unsigned)masks[i], (unsigned)(st.st_mode & 07777));
		unlink(db_path);
	}
}
END_TEST

/* A PID that no process has: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void touch(const char *path)
{
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("left by an import killed with SIGKILL\n", fp);
	fclose(fp);
}

START_TEST(stale_temp_files_removed)
{
	/* The temporary file of a killed import goes; a running import's stays. */
	pid_t live = fork();
	ck_assert_int_ge(live, 0);
	if (live == 0) {
		pause();
		_exit(0);
	}
	char stale[256], running[256], other[256];
	pid_t dead = dead_pid();
	snprintf(stale, sizeof(stale), "%s.tmp.%ld", db_path, (long)dead);
	snprintf(running, sizeof(running), "%s.tmp.%ld", db_path, (long)live);
	snprintf(other, sizeof(other), "%s/other.mdb.tmp.%ld", dir, (long)dead);
	touch(stale);
	touch(running);
	touch(other);
	char *errtext = NULL;
	size_t count;
	int rc = import(TEST_LDIF, db_path, &count, &errtext);
	ck_assert_int_eq(rc, 0);
	bool stale_gone = access(stale, F_OK) != 0, running_kept = access(running, F_OK) == 0,
	     other_kept = access(other, F_OK) == 0;
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	ck_assert_msg(stale_gone, "%s (process %ld is gone) is still there", stale, (long)dead);
	ck_assert_msg(running_kept, "%s (process %ld runs) was removed", running, (long)live);
	ck_assert_msg(other_kept, "another database's %s was removed", other);
	/* One line, naming the file. */
	char want[300];
	snprintf(want, sizeof(want), "%s: removed the stale temporary file", stale);
	ck_assert_msg(strstr(errtext, want) == errtext, "\"%s\" lacks \"%s\"", errtext, want);
	ck_assert_ptr_eq(strchr(errtext, '\n'), errtext + strlen(errtext) - 1);
	free(errtext);
	unlink(running);
	unlink(other);
}
END_TEST

/* Writes an LDIF whose second entry holds a jpegPhoto of n bytes, base64 in 76-column lines. */
static void write_photo_ldif(const char *path, size_t n)
{
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("dn: dc=test,dc=org\nobjectClass: top\n\n"
	      "dn: cn=big,dc=test,dc=org\nobjectClass: inetOrgPerson\ncn: big\nsn: big\n"
	      "jpegPhoto::",
	      fp);
	/* n bytes of 0xff: "////" per three bytes, then the padded remainder. */
	for (size_t i = 0; i < n / 3; i++)
		fputs(i % 19 == 0 ? "\n ////" : "////", fp);
	fputs(n % 3 == 1 ? "\n /w==" : n % 3 == 2 ? "\n //8=" : "", fp);
	fputs("\n", fp);
	fclose(fp);
}

START_TEST(entry_size_limit)
{
	/* An entry just over ENTRY_MAX_BYTES encoded is refused at its line; one just under
	 * is stored and read back whole. */
	char path[256];
	snprintf(path, sizeof(path), "%s/good.ldif", dir);
	write_photo_ldif(path, ENTRY_MAX_BYTES - 64);
	char *errtext = NULL;
	size_t n;
	ck_assert_int_eq(import(path, db_path, &n, &errtext), -1);
	char want[400];
	snprintf(want, sizeof(want), "%s:4: entry \"cn=big,dc=test,dc=org\" is too large", path);
	ck_assert_msg(strstr(errtext, want) == errtext, "\"%s\" lacks \"%s\"", errtext, want);
	free(errtext);
	ck_assert_int_eq(access(db_path, F_OK), -1);

	write_photo_ldif(path, ENTRY_MAX_BYTES - 1024);
	ck_assert_int_eq(import(path, db_path, &n, &errtext), 0);
	free(errtext);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	struct entry_view e;
	ck_assert_int_eq(
	    db_get_entry(&db, db_read_of(txn), id_of(&db, txn, "cn=big,dc=test,dc=org"), &e), 0);
	const unsigned char *vals, *v;
	size_t vlen, len;
	ck_assert(entry_find_attr(&e, "jpegPhoto", 9, &vals, &vlen));
	ck_assert(entry_next_value(&vals, vals + vlen, &v, &len));
	ck_assert_uint_eq(len, ENTRY_MAX_BYTES - 1024);
	ck_assert_uint_lt(e.oplen, ENTRY_MAX_BYTES);
	mdb_txn_abort(txn);
	db_close(&db);
	unlink(path);
}
END_TEST

/* The pages of the file at path the page cache holds now, by mincore over a mapping of
 * its own. */
static size_t cached_pages(const char *path)
{
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	unsigned char *in = malloc(pages);
	ck_assert_int_eq(mincore(map, (size_t)st.st_size, in), 0);
	size_t n = 0;
	for (size_t i = 0; i < pages; i++)
		n += in[i] & 1;
	free(in);
	munmap(map, (size_t)st.st_size);
	close(fd);
	return n;
}

/* Drops the file at path (clean, written by the importer's sync) from the page cache. */
static void drop_cached(const char *path)
{
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

/* Whether /proc/self/smaps flags this process's mapping of the file at path for random
 * reads ("rr", madvise MADV_RANDOM: no read-ahead). */
static bool mapped_for_random_reads(const char *path)
{
	FILE *fp = fopen("/proc/self/smaps", "r");
	ck_assert_ptr_nonnull(fp);
	char line[4096];
	size_t plen = strlen(path);
	bool in = false, rr = false, seen = false;
	while (fgets(line, sizeof(line), fp)) {
		size_t len = strcspn(line, "\n");
		if (line[strspn(line, "0123456789abcdef")] == '-')
			in = len >= plen && memcmp(line + len - plen, path, plen) == 0;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			seen = true;
			rr = strstr(line, " rr") != NULL;
		}
	}
	fclose(fp);
	ck_assert_msg(seen, "no mapping of %s in /proc/self/smaps", path);
	return rr;
}

/* A served open (db_open_served) reads only the pages it looks at, with or without
 * read-ahead for the lookups after it: the kernel's read-ahead around each of the open's
 * few faults (read_ahead_kb, 8 MB on some disks) would read much of the file before the
 * server answers (issue 29). Read-ahead is then on for the map unless DB_NO_READAHEAD. */
START_TEST(served_open_reads_only_its_pages)
{
	char ldif[256];
	snprintf(ldif, sizeof(ldif), "%s/many.ldif", dir);
	FILE *fp = fopen(ldif, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("dn: " SUFFIX "\nobjectClass: top\n\n", fp);
	for (int i = 0; i < 20000; i++)
		fprintf(
		    fp,
		    "dn: cn=user%d," SUFFIX "\nobjectClass: inetOrgPerson\ncn: user%d\nsn: user\n"
		    "mail: user%d@example.org\ndescription: a line of text that makes the entry "
		    "take room in the file, %d\n\n",
		    i, i, i, i);
	fclose(fp);
	size_t n;
	char *errtext = NULL;
	ck_assert_msg(import(ldif, db_path, &n, &errtext) == 0, "import: %s", errtext);
	free(errtext);
	unlink(ldif);
	char err[512];
	struct db db;
	size_t read_by[2];
	bool rr[2];
	for (int off = 0; off < 2; off++) {
		drop_cached(db_path);
		size_t before = cached_pages(db_path);
		ck_assert_msg(db_open_served(&db, db_path, DB_MEMO_UNLIMITED,
		                             off ? DB_NO_READAHEAD : 0, err, sizeof(err)) == 0,
		              "db_open_served: %s", err);
		read_by[off] = cached_pages(db_path) - before;
		rr[off] = mapped_for_random_reads(db_path);
		db_close(&db);
	}
	ck_assert_msg(!rr[0], "read-ahead asked for, but the map is still MADV_RANDOM");
	ck_assert_msg(rr[1], "DB_NO_READAHEAD, but the map is not MADV_RANDOM");
	/* The same pages either way: the open itself never reads ahead. */
	ck_assert_msg(read_by[0] <= 2 * read_by[1] + 8,
	              "the open read %zu pages with read-ahead after it, %zu without", read_by[0],
	              read_by[1]);
}
END_TEST

/* Writes the suffix entry with the attribute lines lines (each ending in LF) at its end. */
static void write_url_ldif(const char *path, const char *lines)
{
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp,
	        "dn: dc=test,dc=org\nobjectClass: top\nobjectClass: dcObject\n"
	        "objectClass: organization\no: Test Org\ndc: test\n%s\n",
	        lines);
	fclose(fp);
}

/* Imports path, which must fail with "path:line: " and words in one line; db_path is not
 * made. */
static void expect_url_refused(const char *path, bool url_values, int line, const char *words)
{
	char *errtext = NULL, want[512];
	size_t n;
	ck_assert_int_eq(import_with(path, db_path, &n, &errtext, url_values, false), -1);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strstr(errtext, want) == errtext && strstr(errtext, words) &&
	                  strchr(errtext, '\n') == errtext + strlen(errtext) - 1,
	              "\"%s\" lacks \"%s\" or \"%s\"", errtext, want, words);
	free(errtext);
	ck_assert_int_eq(access(db_path, F_OK), -1);
}

/*
 * "type:< URL" values (RFC 2849), which libldap and so slapadd read from any file: refused
 * at their line by default; with url_values, file: URLs of regular files are read (folded,
 * %XX escaped, binary), at most ENTRY_MAX_BYTES a record; /dev/zero, a FIFO, a file too
 * large, a missing file, another scheme and a DN from a URL are refused at the value's
 * line, without reading on.
 */
START_TEST(url_values)
{
	char path[256], value[256], fifo[256], big[256], lines[2048];
	snprintf(path, sizeof(path), "%s/url.ldif", dir);
	snprintf(value, sizeof(value), "%s/value.bin", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	unsigned char bytes[3000];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 7);
	FILE *fp = fopen(value, "wb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(bytes, 1, sizeof(bytes), fp), sizeof(bytes));
	fclose(fp);

	/* Line 7: the URL folded after "file://"; line 9: "value.bin" as "v%61lue.bin". */
	char escaped[256];
	snprintf(escaped, sizeof(escaped), "%s/v%%61lue.bin", dir);
	snprintf(lines, sizeof(lines), "description:< file://\n %s\ndescription:<file://%s\n",
	         value, escaped);
	write_url_ldif(path, lines);
	expect_url_refused(path, false, 7, "\"description:<\" takes its value from a URL");
	expect_url_refused(path, false, 7, "--allow-url-values");

	size_t n;
	char *errtext = NULL;
	ck_assert_int_eq(import_with(path, db_path, &n, &errtext, true, false), 0);
	free(errtext);
	struct db db;
	open_db(&db, db_path);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	struct berval v[3];
	ck_assert_uint_eq(entry_values(&db, txn, "dc=test,dc=org", "description", v, 3), 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(v[i].bv_len, sizeof(bytes));
		ck_assert_mem_eq(v[i].bv_val, bytes, sizeof(bytes));
	}
	mdb_txn_abort(txn);
	db_close(&db);
	unlink(db_path);

	/* A device, a FIFO (no writer: opening it must not wait), a sparse file one byte over
	 * the cap, a missing file, another scheme: each refused at its line (8). */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, ENTRY_MAX_BYTES + 1), 0);
	close(fd);
	const struct {
		const char *url, *words;
	} bad[] = {{"file:///dev/zero", "/dev/zero: not a regular file"},
	           {fifo, "fifo: not a regular file"},
	           {big, "16777217 bytes, more than"},
	           {"file:///nonexistent/x", "/nonexistent/x: No such file or directory"},
	           {"http://127.0.0.1/x", "only file: URLs can be read"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(lines, sizeof(lines), "description: plain\ndescription:< %s%s\n",
		         bad[i].url[0] == '/' ? "file://" : "", bad[i].url);
		write_url_ldif(path, lines);
		expect_url_refused(path, true, 8, bad[i].words);
	}
	/* Two files that are each under the cap but not together. */
	fd = open(big, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, ENTRY_MAX_BYTES / 2 + 1), 0);
	close(fd);
	snprintf(lines, sizeof(lines), "description:< file://%s\ndescription:< file://%s\n", big,
	         big);
	write_url_ldif(path, lines);
	expect_url_refused(path, true, 8, "more than the 8388607 left");

	/* A DN from a URL: never. */
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "dn:< file://%s\nobjectClass: top\n\n", value);
	fclose(fp);
	expect_url_refused(path, true, 1, "refused for a DN");
	unlink(path);
	unlink(value);
	unlink(fifo);
	unlink(big);
}
END_TEST

START_TEST(export_missing_database)
{
	char err[512] = "";
	char *text = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&text, &n);
	ck_assert_int_eq(ldif_export(db_path, out, err, sizeof(err), NULL, NULL), -1);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(err, db_path));
	free(text);
}
END_TEST

static Suite *import_suite(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("import");
	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, import_count);
	tcase_add_test(tc, lookup_and_parent_chain);
	tcase_add_test(tc, candidates_children);
	tcase_add_test(tc, candidates_subtree);
	tcase_add_test(tc, candidates_resume_across_transactions);
	tcase_add_test(tc, candidates_index);
	tcase_add_test(tc, rdn_values_added);
	tcase_add_test(tc, schema_digest_recorded);
	tcase_add_test(tc, records_read_again);
	tcase_add_test(tc, records_within_a_budget);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, syntax_error_line_numbers_agree);
	tcase_add_test(tc, bad_file_no_previous_database);
	tcase_add_test(tc, missing_ldif_file);
	tcase_add_test(tc, empty_ldif_file);
	tcase_add_test(tc, duplicate_spelled_differently);
	tcase_add_test(tc, reimport_replaces);
	tcase_add_test(tc, database_mode_0600);
	tcase_add_test(tc, stale_temp_files_removed);
	suite_add_tcase(s, tc);

	tc = tcase_create("entry size");
	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300); /* two 22 MB LDIF files, also under the sanitizers */
	tcase_add_test(tc, entry_size_limit);
	tcase_add_test(tc, served_open_reads_only_its_pages);
	tcase_add_test(tc, url_values);
	suite_add_tcase(s, tc);

	tc = tcase_create("export");
	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, export_reimport_identical);
	tcase_add_test(tc, export_missing_database);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(import_suite());
}
