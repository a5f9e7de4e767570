/*
 * Test helper: a directory kept as plain text (each entry a UUID, a DN and its
 * "type: value" lines), written out as LDIF for minidir-import and as BER attributes
 * for storage/db_update.h, so a test can apply the same changes to both and compare.
 * DNs are built as "RDN,PARENT DN" with no escaped commas.
 */
#ifndef TESTS_STORAGE_DIR_MODEL_H
#define TESTS_STORAGE_DIR_MODEL_H

#include <check.h>
#include <lber.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/tlv.h"
#include "storage/db_impl.h"
#include "storage/db_update.h"

#define MODEL_MAX 12000

struct mentry {
	unsigned char uuid[16];
	char *dn;
	char *attrs; /* "type: value\n" lines, the values of one type together */
	bool live;
};

struct model {
	struct mentry e[MODEL_MAX];
	size_t n;
	unsigned long seed;
};

static unsigned long model_rand(struct model *m)
{
	m->seed = m->seed * 6364136223846793005UL + 1442695040888963407UL;
	return m->seed >> 33;
}

static struct mentry *model_add(struct model *m, const char *dn, const char *attrs)
{
	ck_assert_uint_lt(m->n, MODEL_MAX);
	struct mentry *e = &m->e[m->n++];
	for (int i = 0; i < 16; i++)
		e->uuid[i] = (unsigned char)model_rand(m);
	e->uuid[6] = (unsigned char)((e->uuid[6] & 0x0f) | 0x40);
	e->uuid[8] = (unsigned char)((e->uuid[8] & 0x3f) | 0x80);
	e->dn = strdup(dn);
	e->attrs = strdup(attrs);
	e->live = true;
	return e;
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].dn);
		free(m->e[i].attrs);
	}
	m->n = 0;
}

static struct mentry *model_find(struct model *m, const char *dn)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].live && strcmp(m->e[i].dn, dn) == 0)
			return &m->e[i];
	return NULL;
}

/* Whether dn is base or below it. */
static bool dn_under(const char *dn, const char *base)
{
	size_t n = strlen(dn), b = strlen(base);
	return n == b ? strcmp(dn, base) == 0
	              : n > b && dn[n - b - 1] == ',' && strcmp(dn + n - b, base) == 0;
}

static bool model_has_children(struct model *m, const struct mentry *p)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].live && &m->e[i] != p && dn_under(m->e[i].dn, p->dn))
			return true;
	return false;
}

static int depth(const char *dn)
{
	int d = 1;
	for (; *dn; dn++)
		d += *dn == ',';
	return d;
}

/* Moves every entry at or below from to to (DN strings). */
static void model_rename(struct model *m, const char *from, const char *to)
{
	char *old = strdup(from);
	size_t ol = strlen(old);
	for (size_t i = 0; i < m->n; i++) {
		struct mentry *e = &m->e[i];
		if (!e->live || !dn_under(e->dn, old))
			continue;
		size_t keep = strlen(e->dn) - ol;
		char *dn = malloc(keep + strlen(to) + 1);
		memcpy(dn, e->dn, keep);
		strcpy(dn + keep, to);
		free(e->dn);
		e->dn = dn;
	}
	free(old);
}

/* The LDIF of every live entry, parents first. */
static void model_write_ldif(struct model *m, const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int d = 1; d < 64; d++)
		for (size_t i = 0; i < m->n; i++) {
			struct mentry *e = &m->e[i];
			if (!e->live || depth(e->dn) != d)
				continue;
			char u[37];
			entry_uuid_format(e->uuid, u);
			fprintf(f, "dn: %s\n%sentryUUID: %s\n\n", e->dn, e->attrs, u);
		}
	ck_assert_int_eq(fclose(f), 0);
}

/* The PartialAttributeList content of attrs lines, as a provider sends it; malloc'd. */
static unsigned char *model_ber(const char *attrs, size_t *len)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ck_assert_ptr_nonnull(ber);
	ck_assert_int_ge(ber_printf(ber, "{"), 0);
	char type[128] = "";
	const char *p = attrs;
	while (*p) {
		const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');
		ck_assert(colon && nl && colon < nl);
		if (strlen(type) != (size_t)(colon - p) || strncmp(type, p, (size_t)(colon - p))) {
			if (type[0])
				ck_assert_int_ge(ber_printf(ber, "]}"), 0);
			snprintf(type, sizeof(type), "%.*s", (int)(colon - p), p);
			ck_assert_int_ge(ber_printf(ber, "{s[", type), 0);
		}
		struct berval v = {(ber_len_t)(nl - colon - 2), (char *)colon + 2};
		ck_assert_int_ge(ber_printf(ber, "O", &v), 0);
		p = nl + 1;
	}
	if (type[0])
		ck_assert_int_ge(ber_printf(ber, "]}"), 0);
	ck_assert_int_ge(ber_printf(ber, "}"), 0);
	struct berval *flat;
	ck_assert_int_ge(ber_flatten(ber, &flat), 0);
	ber_free(ber, 1);
	/* The content of the outer SEQUENCE. */
	const unsigned char *q = (const unsigned char *)flat->bv_val, *content;
	unsigned char tag;
	size_t clen;
	ck_assert(tlv_read(&q, q + flat->bv_len, &tag, &content, &clen));
	unsigned char *out = malloc(clen + 1);
	memcpy(out, content, clen);
	*len = clen;
	ber_bvfree(flat);
	return out;
}

/* Applies e (its DN and attributes now) to the database; returns db_update_put's code. */
static int model_put(struct db *db, MDB_txn *txn, const struct mentry *e,
                     struct db_update_error *err)
{
	size_t len;
	unsigned char *ber = model_ber(e->attrs, &len);
	int rc =
	    db_update_put(db, db_write_of(txn), e->uuid, e->dn, strlen(e->dn), ber, len, 0, err);
	free(ber);
	return rc;
}

/* A database file the changes go to: opened with db_open_rw for suffix and index. */
struct model_file {
	const char *path, *suffix;
	char *const *index;
	int nindex;
};

/* Applies e (its DN and attributes now; with del its delete, with flags) to f in a
 * transaction of its own; returns db_update's result code. */
static int model_apply(const struct model_file *f, const struct mentry *e, bool del, unsigned flags,
                       struct db_update_error *err)
{
	struct db db;
	MDB_txn *txn;
	char msg[512];
	ck_assert_msg(db_open_rw(&db, f->path, f->suffix, f->index, f->nindex, msg, sizeof(msg)) ==
	                  0,
	              "%s", msg);
	/* Its records move as it changes: where each was read is not remembered. */
	ck_assert_ptr_null(db.records_at);
	ck_assert_int_eq(mdb_txn_begin(db.env, NULL, 0, &txn), 0);
	int rc = del ? db_update_delete(&db, db_write_of(txn), e->uuid, flags, err)
	             : model_put(&db, txn, e, err);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	db_close(&db);
	return rc;
}

/* model_apply of a put that must succeed. */
static void model_put_ok(const struct model_file *f, const struct mentry *e)
{
	struct db_update_error err;
	int rc = model_apply(f, e, false, 0, &err);
	ck_assert_msg(rc == 0, "put %s: %d %s", e->dn, rc, err.msg);
}

#endif
