/*
 * Test helper: two minidir database files compared table by table, byte for byte, but
 * for entry IDs: every ID is written as the entryUUID of its entry, and each table's
 * rows are sorted, so two files holding the same directory compare equal whatever IDs
 * their entries got. meta's "created" and "creator" (who imported when: a replica made from
 * no file has none), "schema" (the digest of an import's schema: a replica records none)
 * and "cookie" are left out; its "passwords" record is compared by its
 * classes and their counts, and the unknown values' count (a replica keeps a sample while
 * its class is in use, storage/db_passwords.h: the samples may differ).
 */
#ifndef TESTS_STORAGE_DB_COMPARE_H
#define TESTS_STORAGE_DB_COMPARE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db.h"
#include "storage/db_impl.h"
#include "storage/db_passwords.h"

struct rows {
	char **row;
	size_t n, cap;
};

static void rows_add(struct rows *r, char *s)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->row = realloc(r->row, r->cap * sizeof(*r->row));
		ck_assert_ptr_nonnull(r->row);
	}
	r->row[r->n++] = s;
}

static void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->row[i]);
	free(r->row);
	memset(r, 0, sizeof(*r));
}

static void hex(FILE *f, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", ((const unsigned char *)p)[i]);
}

/* IDs to UUIDs: the UUID of every entry, by ID. */
struct uuids {
	unsigned char (*u)[16];
	size_t n;
};

static void put_id(FILE *f, const struct uuids *m, const void *p, size_t len)
{
	entry_id id;
	ck_assert_uint_eq(len, sizeof(id));
	memcpy(&id, p, sizeof(id));
	if (id == 0) {
		fputs("(none)", f);
		return;
	}
	ck_assert_msg(id < m->n, "ID %u names no entry", id);
	hex(f, m->u[id], 16);
}

enum render { R_BYTES, R_ID };

/* Every row of table dbi as "name|key|value" text. */
static void dump_table(MDB_txn *txn, MDB_dbi dbi, const char *name, enum render key,
                       enum render val, const struct uuids *m, struct rows *out)
{
	MDB_cursor *cur;
	MDB_val k, v;
	ck_assert_int_eq(mdb_cursor_open(txn, dbi, &cur), 0);
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		char *s = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);
		fprintf(f, "%s|", name);
		if (strcmp(name, "meta") == 0 &&
		    ((k.mv_size == 7 && (memcmp(k.mv_data, "created", 7) == 0 ||
		                         memcmp(k.mv_data, "creator", 7) == 0)) ||
		     (k.mv_size == 6 && (memcmp(k.mv_data, "cookie", 6) == 0 ||
		                         memcmp(k.mv_data, DB_META_SCHEMA, 6) == 0)))) {
			fclose(f);
			free(s);
			continue;
		}
		if (strcmp(name, "meta") == 0 && k.mv_size == 9 &&
		    memcmp(k.mv_data, "passwords", 9) == 0) {
			struct password_record p;
			char why[200];
			ck_assert_msg(
			    password_record_decode(&p, v.mv_data, v.mv_size, why, sizeof(why)) == 0,
			    "passwords: %s", why);
			fprintf(f, "passwords|unknown %llu", (unsigned long long)p.unknown);
			fclose(f);
			rows_add(out, s);
			for (int i = 0; i < p.n; i++) {
				s = NULL;
				f = open_memstream(&s, &len);
				fprintf(f, "meta|passwords|%s %llu", p.c[i].cls,
				        (unsigned long long)p.c[i].values);
				fclose(f);
				rows_add(out, s);
			}
			password_record_free(&p);
			continue;
		}
		if (key == R_ID)
			put_id(f, m, k.mv_data, k.mv_size);
		else
			hex(f, k.mv_data, k.mv_size);
		fputc('|', f);
		if (strcmp(name, "id2entry") == 0) { /* parent ID, then the rest as bytes */
			put_id(f, m, v.mv_data, 4);
			fputc('|', f);
			hex(f, (char *)v.mv_data + 4, v.mv_size - 4);
		} else if (val == R_ID) {
			put_id(f, m, v.mv_data, v.mv_size);
		} else {
			hex(f, v.mv_data, v.mv_size);
		}
		fclose(f);
		rows_add(out, s);
	}
	mdb_cursor_close(cur);
}

static int row_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every table of the database at path, and the names of the tables the file holds. */
static void dump_db(const char *path, struct rows *out)
{
	struct db db;
	char err[512];
	ck_assert_msg(db_open(&db, path, false, NULL, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, MDB_RDONLY, &txn), 0);
	struct uuids m = {NULL, 0};
	MDB_cursor *cur;
	MDB_val k, v;
	ck_assert_int_eq(mdb_cursor_open(txn, db.id2entry, &cur), 0);
	entry_id id = 0;
	if (mdb_cursor_get(cur, &k, &v, MDB_LAST) == 0)
		memcpy(&id, k.mv_data, sizeof(id));
	m.n = (size_t)id + 1;
	m.u = calloc(m.n + 1, 16);
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		struct entry_view e;
		ck_assert_int_eq(entry_parse(v.mv_data, v.mv_size, &e), 0);
		memcpy(&id, k.mv_data, sizeof(id));
		memcpy(m.u[id], e.uuid, 16);
	}
	mdb_cursor_close(cur);
	dump_table(txn, db.meta, "meta", R_BYTES, R_BYTES, &m, out);
	dump_table(txn, db.id2entry, "id2entry", R_ID, R_BYTES, &m, out);
	dump_table(txn, db.dn2id, "dn2id", R_BYTES, R_ID, &m, out);
	dump_table(txn, db.children, "children", R_ID, R_ID, &m, out);
	dump_table(txn, db.memberof, "memberof", R_ID, R_ID, &m, out);
	dump_table(txn, db.memberdn, "memberdn", R_BYTES, R_ID, &m, out);
	dump_table(txn, db.uuid2id, "uuid2id", R_BYTES, R_ID, &m, out);
	if (db.has_opattrs)
		dump_table(txn, db.opattrs, "opattrs", R_ID, R_BYTES, &m, out);
	if (db.has_dynmembers)
		dump_table(txn, db.dynmembers, "dynmembers", R_ID, R_ID, &m, out);
	for (int i = 0; i < db.nindex; i++) {
		char name[80];
		snprintf(name, sizeof(name), "eq.%s", db.index[i].attr);
		dump_table(txn, db.index[i].dbi, name, R_BYTES, R_ID, &m, out);
	}
	/* The tables the file holds: none unaccounted for. */
	MDB_dbi main;
	ck_assert_int_eq(mdb_dbi_open(txn, NULL, 0, &main), 0);
	dump_table(txn, main, "tables", R_BYTES, R_BYTES, &m, out);
	for (size_t i = 0; i < out->n; i++) /* the main table's values are page numbers */
		if (strncmp(out->row[i], "tables|", 7) == 0)
			*strrchr(out->row[i], '|') = '\0';
	qsort(out->row, out->n, sizeof(*out->row), row_cmp);
	free(m.u);
	mdb_txn_abort(txn);
	db_close(&db);
}

/* Whether the files at a and b hold the same tables, but for the rows beginning with skip
 * (NULL: none); prints the first rows that differ. */
static bool db_same_but(const char *a, const char *b, const char *skip)
{
	struct rows ra = {0}, rb = {0};
	dump_db(a, &ra);
	dump_db(b, &rb);
	size_t i = 0, j = 0, shown = 0, sl = skip ? strlen(skip) : 0;
	while ((i < ra.n || j < rb.n) && shown < 6) {
		if (skip && i < ra.n && strncmp(ra.row[i], skip, sl) == 0) {
			i++;
			continue;
		}
		if (skip && j < rb.n && strncmp(rb.row[j], skip, sl) == 0) {
			j++;
			continue;
		}
		int c = i == ra.n ? 1 : j == rb.n ? -1 : strcmp(ra.row[i], rb.row[j]);
		if (c == 0) {
			i++, j++;
			continue;
		}
		fprintf(stderr, "%s only: %.200s\n", c < 0 ? a : b, c < 0 ? ra.row[i] : rb.row[j]);
		shown++;
		c < 0 ? i++ : j++;
	}
	bool same = shown == 0 && ra.n > 0;
	rows_free(&ra);
	rows_free(&rb);
	return same;
}

/* Whether the files at a and b hold the same tables. */
static inline bool db_same(const char *a, const char *b)
{
	return db_same_but(a, b, NULL);
}

#endif
