/* LDIF export: every entry of a database, in ID order, parents first. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lber.h>
#include <ldif.h> /* needs stdio.h and lber.h first */

#include "protocol/array.h"
#include "protocol/tlv.h"
#include "storage/candidates.h"
#include "storage/db.h"
#include "storage/db_check.h"
#include "storage/dyngroup_computed.h"
#include "storage/dyngroup_url.h"
#include "storage/db_update.h"
#include "storage/entry_opattrs.h"
#include "storage/entry_schema.h"
#include "ldif/ldif_import.h"

/* Writes one "name: value" line (base64 when LDIF requires it). */
static int put_line(FILE *out, const char *name, const unsigned char *v, size_t len)
{
	char *s = ldif_put_wrap(LDIF_PUT_VALUE, name, (const char *)v, len, LDIF_LINE_WIDTH);
	if (!s)
		return -1;
	int rc = fputs(s, out) < 0 ? -1 : 0;
	ber_memfree(s);
	return rc;
}

/* Writes e, less the member values of computed (NULL: none) the server found for it. */
static int put_entry(FILE *out, const struct entry_view *e, struct dyngroup_computed *computed)
{
	char type[256];
	if (put_line(out, "dn", e->dn, e->dnlen) < 0)
		return -1;
	unsigned char tag;
	const unsigned char *p = e->attrs, *end = e->attrs + e->attrslen, *seq, *t, *vals, *v;
	size_t slen, tlen, vlen, len;
	while (p < end) {
		if (!tlv_read(&p, end, &tag, &seq, &slen))
			return -1;
		const unsigned char *q = seq;
		if (!tlv_read(&q, seq + slen, &tag, &t, &tlen) || tlen >= sizeof(type) ||
		    !tlv_read(&q, seq + slen, &tag, &vals, &vlen))
			return -1;
		memcpy(type, t, tlen);
		type[tlen] = '\0';
		bool member = computed && strcasecmp(type, "member") == 0;
		for (const unsigned char *r = vals; r < vals + vlen;) {
			if (!tlv_read(&r, vals + vlen, &tag, &v, &len))
				return -1;
			if (member &&
			    dyngroup_computed_take(computed, &(struct berval){len, (char *)v}))
				continue;
			if (put_line(out, type, v, len) < 0)
				return -1;
		}
	}
	return 0;
}

/* Writes the contextCSN values of the replication cookie ("rid=001,csn=A;B,..."): the
 * provider's state the file holds, as slapcat writes it on the suffix entry. */
static int put_context_csn(FILE *out, const char *cookie, size_t len)
{
	const char *p = memmem(cookie, len, "csn=", 4), *end = cookie + len;
	if (!p)
		return 0;
	for (p += 4; p < end && *p != ',';) {
		size_t n = 0;
		while (p + n < end && p[n] != ',' && p[n] != ';')
			n++;
		if (n && put_line(out, "contextCSN", (const unsigned char *)p, n) < 0)
			return -1;
		p += n + (p + n < end && p[n] == ';');
	}
	return 0;
}

/*
 * Writes the operational attributes of entry id as slapcat writes them, with the values
 * the server answers (server/ops/computed_attrs.c): structuralObjectClass (from the
 * loaded schema), entryUUID, the provider's or the import's timestamps and names, entryCSN
 * when the file holds one, and on the suffix entry of a replica contextCSN. Returns 0, -1
 * (output error) or an LMDB error.
 */
static int put_operational(FILE *out, const struct db *db, struct db_read *txn, entry_id id,
                           const struct entry_view *e)
{
	const struct schema_oc *oc = entry_structural_class(e);
	if (oc && put_line(out, "structuralObjectClass", (const unsigned char *)oc->name,
	                   strlen(oc->name)) < 0)
		return -1;
	struct entry_view kept = {0};
	int rc = entry_opattrs_get(db, txn, id, &kept);
	if (rc && rc != DB_NOTFOUND)
		return rc;
	unsigned char buf[16];
	const unsigned char *u = entry_opattrs_uuid(rc == 0 ? &kept : NULL, e->uuid, buf);
	if (u) {
		char uuid[37];
		entry_uuid_format(u, uuid);
		if (put_line(out, "entryUUID", (const unsigned char *)uuid, 36) < 0)
			return -1;
	}
	for (int i = 0; entry_opattrs_names[i]; i++) {
		if (i == ENTRY_OPATTRS_UUID)
			continue; /* written above */
		struct berval bv[ENTRY_OPATTRS_VALUES_MAX];
		int n = entry_opattrs_values(db, rc == 0 ? &kept : NULL, i, bv,
		                             ENTRY_OPATTRS_VALUES_MAX);
		for (int j = 0; j < n; j++)
			if (put_line(out, entry_opattrs_names[i],
			             (const unsigned char *)bv[j].bv_val, bv[j].bv_len) < 0)
				return -1;
	}
	const void *cookie;
	size_t len;
	if (e->parent == 0 && (rc = db_update_get_cookie(db, txn, &cookie, &len)) == 0 &&
	    put_context_csn(out, cookie, len) < 0)
		return -1;
	return rc == DB_NOTFOUND ? 0 : rc;
}

/* Entries between two calls of the progress callback. */
#define EXPORT_PROGRESS_ENTRIES 1024

/*
 * Entries go out in ID (import) order, but for one whose parent has not gone out yet: a
 * replica's subtree moved under a parent added after it (storage/db_update.h) has IDs
 * below its new parent's. Such an entry is held back (its ID in held, in ID order) and
 * goes out right after its parent, with what is held below it, so every parent comes
 * before its children and the LDIF imports again. An entry whose parent has an ID below
 * its own and is not held has gone out already.
 */
struct held {
	entry_id id;
	bool out; /* written since */
};

struct exporter {
	FILE *out;
	const struct db *db;
	size_t done, total;
	void (*progress)(void *arg, size_t done, size_t total);
	void *arg;
	entry_id now;      /* the walk's position: the ID of its entry */
	struct held *held; /* entries held back, in ID order */
	size_t nheld, capheld;
	size_t waiting; /* held and not written yet */
	/* A dynamic group's member values the server computed, left out: the export is what
	 * the LDIF or the provider gave, and an import computes them again. */
	struct dyngroup_computed computed;
	int rc; /* why the walk stopped: DB_STOPPED (output), ENOMEM, LMDB's */
};

/* The entry id if it is held back and not written yet, else NULL. */
static struct held *held_waiting(struct exporter *x, entry_id id)
{
	size_t lo = 0, hi = x->nheld;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->held[mid].id == id)
			return x->held[mid].out ? NULL : &x->held[mid];
		if (x->held[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int write_entry(struct exporter *x, struct db_read *txn, entry_id id,
                       const struct entry_view *e);

/* Writes the held children of parent (all have IDs below the walk's position), each
 * followed by its own. Returns 0, DB_STOPPED (output error) or an LMDB error. */
static int write_held_children(struct exporter *x, struct db_read *txn, entry_id parent)
{
	struct candidates c;
	cand_init_children(&c, x->db, parent);
	cand_begin(&c, txn, NULL);
	int rc = 0;
	entry_id child = 0;
	while (rc == 0 && x->waiting && (rc = cand_next(&c, &child)) == 0 && child < x->now) {
		struct held *h = held_waiting(x, child);
		struct entry_view e;
		if (!h)
			continue;
		h->out = true;
		x->waiting--;
		if ((rc = db_get_entry(x->db, txn, child, &e)) == 0)
			rc = write_entry(x, txn, child, &e);
	}
	cand_end(&c, NULL);
	cand_free(&c);
	return rc == DB_NOTFOUND ? 0 : rc;
}

static int write_entry(struct exporter *x, struct db_read *txn, entry_id id,
                       const struct entry_view *e)
{
	if (x->progress && ++x->done % EXPORT_PROGRESS_ENTRIES == 0)
		x->progress(x->arg, x->done, x->total);
	bool dynamic = dyngroup_is_dynamic(e);
	int rc = dynamic ? dyngroup_computed_load(x->db, txn, id, &x->computed) : 0;
	if (rc)
		return rc;
	if (put_entry(x->out, e, dynamic ? &x->computed : NULL) < 0 ||
	    (rc = put_operational(x->out, x->db, txn, id, e)) == -1 || fputc('\n', x->out) == EOF)
		return DB_STOPPED;
	if (rc)
		return rc;
	return x->waiting ? write_held_children(x, txn, id) : 0;
}

static int export_one(struct db_read *txn, entry_id id, const struct entry_view *e, void *arg)
{
	struct exporter *x = arg;
	x->now = id;
	if (e->parent == 0 || (e->parent < id && !held_waiting(x, e->parent))) {
		x->rc = write_entry(x, txn, id, e); /* its parent has gone out */
		return x->rc != 0;
	}
	if (!ARRAY_ROOM_FOR(x->held, x->capheld, x->nheld, 256)) {
		x->rc = ENOMEM;
		return 1;
	}
	x->held[x->nheld++] = (struct held){id, false};
	x->waiting++;
	return 0;
}

int ldif_export(const char *db_path, FILE *out, char *err, size_t errlen,
                void (*progress)(void *arg, size_t done, size_t total), void *progress_arg)
{
	struct db db;
	if (db_open(&db, db_path, false, NULL, NULL, 0, err, errlen) < 0)
		return -1;
	/* Every page first: a damaged one would abort the walk below inside LMDB (an
	 * assertion), after a part of the entries was written. */
	char why[400];
	size_t records;
	if (db_check_pages(&db, &records, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s: a damaged page: %s; nothing exported", db_path, why);
		db_close(&db);
		return -1;
	}
	/* No "version: 1" line: slapadd refuses one ("could not parse entry (line=1)"), and
	 * the output is to be slapadd's input as slapcat's is; minidir-import takes either. */
	fprintf(out, "# minidir-export of %.*s, %zu entries\n\n", (int)db.suffix.len,
	        (char *)db.suffix.data, db.entries);
	struct exporter x = {
	    .out = out, .db = &db, .total = db.entries, .progress = progress, .arg = progress_arg};
	int rc = db_foreach_entry(&db, export_one, &x);
	if (rc == DB_STOPPED)
		rc = x.rc;
	if (rc == DB_STOPPED)
		snprintf(err, errlen, "%s: cannot write entry: output error", db_path);
	else if (rc)
		snprintf(err, errlen, "%s: %s", db_path,
		         rc == ENOMEM ? "out of memory" : db_error_text(rc));
	else if (x.waiting) {
		for (size_t i = 0; i < x.nheld; i++)
			if (!x.held[i].out) {
				snprintf(err, errlen,
				         "%s: %zu entries (the first: ID %u) under a parent "
				         "that is not in the database",
				         db_path, x.waiting, (unsigned)x.held[i].id);
				break;
			}
		rc = -1;
	}
	if (!rc && fflush(out) != 0) {
		snprintf(err, errlen, "writing LDIF: output error");
		rc = -1;
	}
	free(x.held);
	dyngroup_computed_free(&x.computed);
	db_close(&db);
	return rc ? -1 : 0;
}
