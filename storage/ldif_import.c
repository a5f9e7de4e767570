#include "storage/ldif_import.h"

#include <errno.h>
#include <fcntl.h>
#include <ldap.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "protocol/dn.h"
#include "protocol/schema.h"
#include "storage/db.h"
#include "storage/entry_index.h"
#include "storage/entry_mods.h"
#include "storage/entry_schema.h"
#include "storage/ldif_check.h"
#include "storage/ldif_reader.h"
#include "storage/import_memberof.h"
#include "storage/import_stale.h"

/* Entries per write transaction: bounds the memory of dirty pages. */
#define IMPORT_TXN_ENTRIES 20000
/* Entries between two calls of the progress callback. */
#define IMPORT_PROGRESS_ENTRIES 1024

/* The file being built, removed if the import is interrupted. */
static char tmp_path[4096];

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

struct importer {
	const char *file;
	const struct import_opts *opts;
	struct db db;
	MDB_txn *txn;
	entry_id next_id;
	unsigned long line;       /* line of the current record's "dn:" */
	unsigned long first_line; /* physical line of the current record's first line */
	struct buf raw; /* the current record's text as read (the parser writes into it) */
	struct buf ndn, key, rec, val, names;
	struct memberships members; /* resolved into memberOf once every entry is stored */
};

static void report(struct importer *im, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(im->opts->err, "%s:%lu: ", im->file, line);
	vfprintf(im->opts->err, fmt, ap);
	fputc('\n', im->opts->err);
	va_end(ap);
}

static bool has_objectclass(LDAPMod **mods)
{
	for (int i = 0; mods && mods[i]; i++)
		if (strcasecmp(mods[i]->mod_type, "objectClass") == 0 && mods[i]->mod_bvalues &&
		    mods[i]->mod_bvalues[0])
			return true;
	return false;
}

/* The entry's entryUUID: from the LDIF (an export keeps it) or a new random one. */
static int take_uuid(struct importer *im, LDAPMod **mods, unsigned char uuid[16])
{
	for (int i = 0; mods && mods[i]; i++) {
		if (strcasecmp(mods[i]->mod_type, "entryUUID") != 0)
			continue;
		struct berval *v = mods[i]->mod_bvalues[0];
		if (!v || mods[i]->mod_bvalues[1] ||
		    entry_uuid_parse(v->bv_val, v->bv_len, uuid) < 0) {
			report(im, im->line, "entryUUID must be one RFC 4122 UUID");
			return -1;
		}
		return 0;
	}
	if (getrandom(uuid, 16, 0) != 16) {
		report(im, im->line, "no random bytes for entryUUID: %s", strerror(errno));
		return -1;
	}
	uuid[6] = (unsigned char)((uuid[6] & 0x0f) | 0x40); /* version 4 */
	uuid[8] = (unsigned char)((uuid[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	return 0;
}

/* Checks and stores one parsed add record. */
static int add_entry(struct importer *im, LDIFRecord *lr)
{
	im->ndn.len = im->key.len = im->rec.len = 0;
	if (dn_normalize(lr->lr_dn.bv_val, lr->lr_dn.bv_len, &im->ndn, &im->key) < 0 ||
	    im->key.len == 0) {
		report(im, im->line, "invalid DN \"%s\"", lr->lr_dn.bv_val);
		return -1;
	}
	const struct buf *sk = &im->db.suffix_key;
	if (!dn_key_in_subtree(im->key.data, im->key.len, sk->data, sk->len)) {
		report(im, im->line, "DN \"%s\" is outside the suffix \"%.*s\"", lr->lr_dn.bv_val,
		       (int)im->db.suffix.len, (char *)im->db.suffix.data);
		return -1;
	}
	entry_id id = im->next_id, parent = 0, existing;
	if (db_dn2id(&im->db, im->txn, im->key.data, im->key.len, &existing) == 0) {
		report(im, im->line, "duplicate entry \"%s\"", lr->lr_dn.bv_val);
		return -1;
	}
	if (im->key.len != sk->len) {
		size_t plen = dn_key_parent_len(im->key.data, im->key.len);
		if (db_dn2id(&im->db, im->txn, im->key.data, plen, &parent) != 0) {
			const char *comma = strchr(lr->lr_dn.bv_val, ',');
			report(im, im->line,
			       "parent entry \"%s\" does not exist (parents must come first)",
			       comma ? comma + 1 : "");
			return -1;
		}
	}
	if (!has_objectclass(lr->lrop_mods)) {
		report(im, im->line, "entry \"%s\" has no objectClass", lr->lr_dn.bv_val);
		return -1;
	}
	char why[512];
	struct schema_fault fault;
	if (!im->opts->skip_schema &&
	    entry_schema_check(lr->lrop_mods, &fault, why, sizeof(why)) < 0) {
		/* At the line of the value at fault when there is one, else at "dn:". */
		unsigned long at =
		    fault.mod ? ldif_record_type_line((const char *)im->raw.data, im->first_line,
		                                      fault.mod->mod_type, fault.value)
		              : 0;
		report(im, at ? at : im->line, "entry \"%s\": %s", lr->lr_dn.bv_val, why);
		return -1;
	}
	unsigned char uuid[16];
	if (take_uuid(im, lr->lrop_mods, uuid) < 0)
		return -1;
	if (entry_mods_canonical(lr->lrop_mods, &im->names) < 0) {
		report(im, im->line, "out of memory");
		return -1;
	}
	if (entry_encode_uuid(&im->rec, parent, uuid, im->key.data, im->key.len, &lr->lr_dn,
	                      lr->lrop_mods) < 0) {
		report(im, im->line, "entry \"%s\" is too large to encode", lr->lr_dn.bv_val);
		return -1;
	}
	if (im->rec.len > ENTRY_MAX_BYTES) {
		report(im, im->line,
		       "entry \"%s\" is too large: %zu bytes encoded, more than %d (16 MiB)",
		       lr->lr_dn.bv_val, im->rec.len, ENTRY_MAX_BYTES);
		return -1;
	}
	MDB_val k = {sizeof(id), &id}, v = {im->rec.len, im->rec.data};
	MDB_val dk = {im->key.len, im->key.data}, dv = {sizeof(id), &id};
	MDB_val pk = {sizeof(parent), &parent}, uk = {16, uuid};
	int rc = mdb_put(im->txn, im->db.id2entry, &k, &v, MDB_APPEND);
	if (!rc)
		rc = mdb_put(im->txn, im->db.dn2id, &dk, &dv, MDB_NOOVERWRITE);
	if (!rc)
		rc = mdb_put(im->txn, im->db.children, &pk, &dv, MDB_APPENDDUP);
	if (!rc &&
	    (rc = mdb_put(im->txn, im->db.uuid2id, &uk, &dv, MDB_NOOVERWRITE)) == MDB_KEYEXIST) {
		char text[37];
		entry_uuid_format(uuid, text);
		report(im, im->line, "entry \"%s\": entryUUID %s is another entry's too",
		       lr->lr_dn.bv_val, text);
		return -1;
	}
	if (rc) {
		report(im, im->line, "storing \"%s\" in %s: %s", lr->lr_dn.bv_val, tmp_path,
		       mdb_strerror(db_write_error(&im->db, rc)));
		return -1;
	}
	struct entry_view e;
	if (entry_parse(im->rec.data, im->rec.len, &e) < 0 ||
	    (rc = entry_index_write(&im->db, im->txn, id, &e, true, &im->val, why, sizeof(why)))) {
		report(im, im->line, "%s",
		       rc > 0 ? mdb_strerror(db_write_error(&im->db, rc)) : why);
		return -1;
	}
	if (memberships_add(&im->members, id, lr->lrop_mods) < 0) {
		report(im, im->line, "out of memory");
		return -1;
	}
	im->next_id++;
	return 0;
}

static int commit_and_renew(struct importer *im, bool renew)
{
	int rc = mdb_txn_commit(im->txn);
	im->txn = NULL;
	if (!rc && renew)
		rc = mdb_txn_begin(im->db.env, NULL, 0, &im->txn);
	if (rc)
		report(im, im->line, "writing %s: %s", tmp_path,
		       mdb_strerror(db_write_error(&im->db, rc)));
	return rc ? -1 : 0;
}

/* Parses one checked record and stores its entry. */
static int import_record(struct importer *im, struct ldif_record *rec)
{
	unsigned long at = im->line ? im->line : rec->first_line;
	/* Kept as read, to find an attribute's line if the entry breaks the schema. */
	im->raw.len = im->raw.off = 0;
	if (buf_append(&im->raw, rec->text, rec->len + 1) < 0) {
		report(im, at, "out of memory");
		return -1;
	}
	im->first_line = rec->first_line;
	struct berval bv = {rec->len, rec->text};
	LDIFRecord lr;
	memset(&lr, 0, sizeof(lr));
	int rc = 0;
	if (ldap_parse_ldif_record(&bv, at, &lr, "minidir-import",
	                           LDIF_DEFAULT_ADD | LDIF_NO_CONTROLS) != 0) {
		report(im, at, "LDIF syntax error");
		rc = -1;
	} else if (lr.lr_op == 0 && lr.lr_dn.bv_val == NULL) {
		/* A "version: 1" line or comments only. */
	} else if (lr.lr_op != LDAP_REQ_ADD) {
		report(im, at,
		       "changetype records are not supported (minidir imports entries only)");
		rc = -1;
	} else if (add_entry(im, &lr) < 0) {
		rc = -1;
	} else if ((im->next_id - 1) % IMPORT_TXN_ENTRIES == 0) {
		rc = commit_and_renew(im, true);
	}
	ldap_ldif_record_done(&lr);
	return rc;
}

/* Reads, checks and stores every record of the file. */
static int import_records(struct importer *im, struct ldif_reader *rd)
{
	struct ldif_record rec;
	unsigned long bad = 0;
	char why[256];
	int got, rc = 0;
	bool first = true;
	struct stat st;
	long long total = fstat(fileno(rd->fp), &st) == 0 ? (long long)st.st_size : 0;
	while (rc == 0 && (got = ldif_reader_next(rd, &rec, &bad, why, sizeof(why))) > 0) {
		if (ldif_check_record(&rec, first, &im->line, &bad, why, sizeof(why)) < 0) {
			report(im, bad, "LDIF syntax error: %s", why);
			return -1;
		}
		first = false;
		rc = import_record(im, &rec);
		if (im->opts->progress && im->next_id % IMPORT_PROGRESS_ENTRIES == 0)
			im->opts->progress(im->opts->progress_arg, im->next_id - 1,
			                   (long long)ftello(rd->fp), total);
	}
	if (rc == 0 && got < 0) {
		report(im, bad, "%s", why);
		rc = -1;
	}
	if (rc == 0 && im->next_id == 1) {
		report(im, rd->line, "no entries to import");
		rc = -1;
	}
	return rc;
}

int ldif_import(const char *ldif_path, const char *db_path, const struct import_opts *opts,
                size_t *count)
{
	struct importer im = {.file = ldif_path, .opts = opts, .next_id = 1};
	char err[512];
	struct ldif_reader rd;
	if (ldif_reader_open(&rd, ldif_path) < 0) {
		fprintf(opts->err, "%s: %s\n", ldif_path, strerror(errno));
		return -1;
	}
	import_remove_stale(db_path, opts->err);
	snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.%ld", db_path, (long)getpid());
	unlink(tmp_path);
	void (*old_int)(int) = signal(SIGINT, on_signal);
	void (*old_term)(int) = signal(SIGTERM, on_signal);
	/* A file size limit (RLIMIT_FSIZE) is a write error to report, not a signal to die of. */
	void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
	int rc = -1;
	if (db_open(&im.db, tmp_path, true, opts->suffix, opts->index, opts->nindex, err,
	            sizeof(err)) < 0) {
		fprintf(opts->err, "%s\n", err);
		goto out;
	}
	if ((rc = mdb_txn_begin(im.db.env, NULL, 0, &im.txn)) != 0) {
		fprintf(opts->err, "%s: %s\n", tmp_path, mdb_strerror(rc));
		rc = -1;
		goto out;
	}
	rc = import_records(&im, &rd);
	if (rc == 0 && memberships_store(&im.members, &im.db, &im.txn, err, sizeof(err)) < 0) {
		fprintf(opts->err, "%s: %s\n", tmp_path, err);
		rc = -1;
	}
	if (rc == 0) {
		size_t n = im.next_id - 1;
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%SZ", &tm);
		const char *creator = opts->creator ? opts->creator : "";
		MDB_val k = {7, "entries"}, v = {sizeof(n), &n};
		MDB_val kc = {7, "created"}, vc = {strlen(stamp), stamp};
		MDB_val kw = {7, "creator"}, vw = {strlen(creator), (void *)creator};
		if ((rc = mdb_put(im.txn, im.db.meta, &k, &v, 0)) != 0 ||
		    (rc = mdb_put(im.txn, im.db.meta, &kc, &vc, 0)) != 0 ||
		    (rc = mdb_put(im.txn, im.db.meta, &kw, &vw, 0)) != 0)
			report(&im, im.line, "writing %s: %s", tmp_path,
			       mdb_strerror(db_write_error(&im.db, rc)));
		else
			rc = commit_and_renew(&im, false);
		*count = n;
	}
	if (rc == 0 && (rc = mdb_env_sync(im.db.env, 1)) != 0)
		fprintf(opts->err, "%s: sync: %s\n", tmp_path, mdb_strerror(rc));
out:
	if (im.txn)
		mdb_txn_abort(im.txn);
	if (im.db.env)
		db_close(&im.db);
	ldif_reader_close(&rd);
	if (rc == 0 && rename(tmp_path, db_path) < 0) {
		fprintf(opts->err, "%s: %s\n", db_path, strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		unlink(tmp_path);
	tmp_path[0] = '\0';
	signal(SIGINT, old_int);
	signal(SIGTERM, old_term);
	signal(SIGXFSZ, old_xfsz);
	buf_free(&im.ndn);
	buf_free(&im.key);
	buf_free(&im.rec);
	buf_free(&im.val);
	buf_free(&im.names);
	buf_free(&im.raw);
	memberships_free(&im.members);
	return rc ? -1 : 0;
}
