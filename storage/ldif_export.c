/* LDIF export: every entry of a database, in ID order (parents first). */
#include <stdio.h>
#include <string.h>

#include <lber.h>
#include <ldif.h> /* needs stdio.h and lber.h first */

#include "storage/db.h"
#include "storage/ldif_import.h"

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

static int put_entry(FILE *out, const struct entry_view *e)
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
		for (const unsigned char *r = vals; r < vals + vlen;) {
			if (!tlv_read(&r, vals + vlen, &tag, &v, &len) ||
			    put_line(out, type, v, len) < 0)
				return -1;
		}
	}
	static const unsigned char none[16];
	if (memcmp(e->uuid, none, 16) != 0) {
		char uuid[37];
		entry_uuid_format(e->uuid, uuid);
		if (put_line(out, "entryUUID", (const unsigned char *)uuid, 36) < 0)
			return -1;
	}
	return fputc('\n', out) == EOF ? -1 : 0;
}

/* Entries between two calls of the progress callback. */
#define EXPORT_PROGRESS_ENTRIES 1024

struct exporter {
	FILE *out;
	size_t done, total;
	void (*progress)(void *arg, size_t done, size_t total);
	void *arg;
};

static int export_one(const struct entry_view *e, void *arg)
{
	struct exporter *x = arg;
	if (x->progress && ++x->done % EXPORT_PROGRESS_ENTRIES == 0)
		x->progress(x->arg, x->done, x->total);
	return put_entry(x->out, e);
}

int ldif_export(const char *db_path, FILE *out, char *err, size_t errlen,
                void (*progress)(void *arg, size_t done, size_t total), void *progress_arg)
{
	struct db db;
	if (db_open(&db, db_path, false, NULL, NULL, 0, err, errlen) < 0)
		return -1;
	fprintf(out, "# minidir-export of %.*s, %zu entries\nversion: 1\n\n", (int)db.suffix.len,
	        (char *)db.suffix.data, db.entries);
	struct exporter x = {
	    .out = out, .total = db.entries, .progress = progress, .arg = progress_arg};
	int rc = db_foreach_entry(&db, export_one, &x);
	if (rc == DB_STOPPED)
		snprintf(err, errlen, "%s: cannot write entry: output error", db_path);
	else if (rc)
		snprintf(err, errlen, "%s: %s", db_path, mdb_strerror(rc));
	if (!rc && fflush(out) != 0) {
		snprintf(err, errlen, "writing LDIF: output error");
		rc = -1;
	}
	db_close(&db);
	return rc ? -1 : 0;
}
