#include "ldif/ldif_import.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "storage/db.h"
#include "storage/db_load.h"
#include "storage/db_passwords.h"
#include "storage/dyngroup.h"
#include "storage/entry_opattrs.h"
#include "storage/memberof.h"
#include "storage/memberof_nested.h"
#include "ldif/import_parse.h"
#include "ldif/import_prefault.h"
#include "ldif/import_queue.h"
#include "ldif/import_stale.h"

/* Parsing threads at the most (opts->threads). */
#define IMPORT_MAX_THREADS 16
/* Entries between two calls of the progress callback. */
#define IMPORT_PROGRESS_ENTRIES 1024
/* Entries between two notes of where the writer is (import_prefault_note): 16 of
 * bench/gen-ldif.sh's are about 10 KB, against the thread's 8 MB ahead. */
#define IMPORT_PREFAULT_NOTE_ENTRIES 16

/* The file being built, removed if the import is interrupted. */
static char tmp_path[4096];

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The new file is written through LMDB's writable map (MDB_WRITEMAP, storage/db.h), in one
 * transaction: no page is copied twice, and the dirty pages are the file's page cache, not
 * the process's memory. A page the file system cannot back (a full disk) is a SIGBUS on
 * the writer's store into the map; the writer catches it (siglongjmp back to
 * build_guarded) and reports it as a write error.
 */
static _Thread_local sigjmp_buf *bus_jump;
static void *volatile bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (bus_jump) {
		bus_addr = si->si_addr;
		siglongjmp(*bus_jump, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The writer: the one thread that touches the database. */
struct importer {
	const char *file;
	const struct import_opts *opts;
	struct db db;
	struct db_load *load; /* the write transaction, or NULL */
	entry_id next_id;
	unsigned long line;          /* the record being stored (or the last one) */
	unsigned long last_line;     /* where "no entries to import" is reported */
	struct import_parser parser; /* read under read_lock */
	pthread_mutex_t read_lock;
	bool eof; /* the last record was read (under read_lock) */
	struct import_queue queue;
	pthread_t threads[IMPORT_MAX_THREADS];
	int nthreads;                    /* parsing threads running */
	struct import_prefault prefault; /* the new file's page faults, ahead of the writer */
	/* The last parent looked up, and the last entry stored (often the next one's parent):
	 * their dn2id keys and IDs, so most entries need no dn2id look-up. */
	struct buf parent_key, prev_key;
	entry_id parent_id, prev_id;
	struct password_record passwords; /* the entries' password classes, stored in meta */
};

__attribute__((format(printf, 3, 4))) static void report(struct importer *im, unsigned long line,
                                                         const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(im->opts->err, "%s:%lu: ", im->file, line);
	vfprintf(im->opts->err, fmt, ap);
	fputc('\n', im->opts->err);
	va_end(ap);
}

/* Reports the problem the parser found in it; returns -1. */
static int report_fault(struct importer *im, const struct import_item *it)
{
	report(im, it->fault_line, "%s",
	       it->msg.len ? (const char *)it->msg.data : "out of memory");
	return -1;
}

/* Whether b holds key[0..len). */
static bool same_key(const struct buf *b, const unsigned char *key, size_t len)
{
	return b->len == len && (len == 0 || memcmp(b->data, key, len) == 0);
}

/*
 * Files the entry's DN under id in dn2id (a duplicate DN is found so, with no look-up
 * before) and finds its parent's ID (0 for the suffix entry). An LMDB error of that put is
 * left in *put_rc, reported where put_entry reports its own, after the parent's checks.
 */
static int find_parent(struct importer *im, const struct import_item *it, entry_id id,
                       entry_id *parent, int *put_rc)
{
	const unsigned char *key = it->key.data;
	const char *dn = (const char *)it->dn.data;
	*parent = 0;
	*put_rc = db_load_dn(im->load, it->key.data, it->key.len, id);
	if (*put_rc == DB_KEYEXIST) {
		report(im, it->line, "duplicate entry \"%s\"", dn);
		return -1;
	}
	if (it->key.len == im->db.suffix_key.len)
		return 0;
	size_t plen = dn_key_parent_len(key, it->key.len);
	if (im->prev_id && same_key(&im->prev_key, key, plen)) {
		*parent = im->prev_id;
		return 0;
	}
	if (im->parent_id && same_key(&im->parent_key, key, plen)) {
		*parent = im->parent_id;
		return 0;
	}
	if (db_dn2id(&im->db, db_write_reads(db_load_write(im->load)), key, plen, parent) != 0) {
		const char *comma = strchr(dn, ',');
		report(im, it->line, "parent entry \"%s\" does not exist (parents must come first)",
		       comma ? comma + 1 : "");
		return -1;
	}
	im->parent_key.len = im->parent_key.off = 0;
	im->parent_id = buf_append(&im->parent_key, key, plen) < 0 ? 0 : *parent;
	return 0;
}

/* The entry's other tables: id2entry, children, uuid2id (dn2id: find_parent). */
static int put_entry(struct importer *im, struct import_item *it, entry_id id, entry_id parent,
                     int rc)
{
	memcpy(it->rec.data, &parent, sizeof(parent)); /* the record's first field */
	/* where the writer is, for the thread that populates the pages ahead of it: the
	 * record's end, on one of the newest pages */
	const void *end = NULL;
	bool note = id % IMPORT_PREFAULT_NOTE_ENTRIES == 0;
	if (!rc)
		rc = db_load_entry(im->load, id, it->rec.data, it->rec.len, note ? &end : NULL);
	if (!rc && end)
		import_prefault_note(&im->prefault, end);
	if (!rc)
		rc = db_load_child(im->load, parent, id);
	if (!rc && (rc = db_load_uuid(im->load, it->uuid, id)) == DB_KEYEXIST) {
		char text[37];
		entry_uuid_format(it->uuid, text);
		report(im, it->line, "entry \"%s\": entryUUID %s is another entry's too",
		       (const char *)it->dn.data, text);
		return -1;
	}
	if (rc) {
		report(im, it->line, "storing \"%s\" in %s: %s", (const char *)it->dn.data,
		       tmp_path, db_error_text(db_write_error(&im->db, rc)));
		return -1;
	}
	im->prev_key.len = im->prev_key.off = 0;
	im->prev_id = buf_append(&im->prev_key, it->key.data, it->key.len) < 0 ? 0 : id;
	return 0;
}

/* The index keys and member values the parser listed. */
static int put_keys(struct importer *im, const struct import_item *it, entry_id id)
{
	int rc = 0;
	const unsigned char *p = it->keys.data, *end = p ? p + it->keys.len : p;
	for (; rc == 0 && p < end;) {
		uint16_t len;
		memcpy(&len, p + 1, sizeof(len));
		const struct db_index *ix = &im->db.index[p[0]];
		rc = db_load_index_key(im->load, ix, p + 3, len, id);
		p += 3 + len;
		if (rc)
			report(im, it->line, "index %s: %s", ix->attr,
			       db_error_text(db_write_error(&im->db, rc)));
	}
	p = it->members.data;
	for (end = p ? p + it->members.len : p; rc == 0 && p < end;) {
		uint32_t len;
		memcpy(&len, p, sizeof(len));
		if ((rc = memberof_put_dn(&im->db, db_load_write(im->load), p + sizeof(len), len,
		                          id)) != 0)
			report(im, it->line, "memberOf: %s",
			       db_error_text(db_write_error(&im->db, rc)));
		p += sizeof(len) + len;
	}
	return rc ? -1 : 0;
}

/* The entry's userPassword values, counted into the record meta will hold. */
static int count_passwords(struct importer *im, const struct import_item *it)
{
	const unsigned char *vals = it->rec.data + it->pw_off, *v;
	size_t len;
	for (const unsigned char *r = vals;
	     it->pw_len && entry_next_value(&r, vals + it->pw_len, &v, &len);)
		if (password_record_value(&im->passwords, (const char *)v, len,
		                          (const char *)it->dn.data, it->dn.len - 1, 1) != 0) {
			report(im, it->line, "out of memory");
			return -1;
		}
	return 0;
}

/* Stores one parsed record, or reports why it cannot be; in the order one thread checks. */
/* The operational attributes the LDIF gave the entry, into opattrs. */
static int put_opattrs(struct importer *im, const struct import_item *it, entry_id id)
{
	int rc = it->opattrs.len
	             ? entry_opattrs_put(&im->db, db_load_write(im->load), id, &it->opattrs)
	             : 0;
	if (rc)
		report(im, it->line, "storing \"%s\" in %s: %s", (const char *)it->dn.data,
		       tmp_path, db_error_text(db_write_error(&im->db, rc)));
	return rc ? -1 : 0;
}

static int store_item(struct importer *im, struct import_item *it)
{
	im->line = it->line;
	if (it->kind == IMPORT_ITEM_END)
		im->last_line = it->line;
	if (it->fault == IMPORT_FAULT_FIRST)
		return report_fault(im, it);
	if (it->kind != IMPORT_ITEM_ENTRY)
		return 0;
	entry_id id = im->next_id, parent;
	int put_rc;
	if (find_parent(im, it, id, &parent, &put_rc) < 0)
		return -1;
	if (it->fault == IMPORT_FAULT_ENTRY)
		return report_fault(im, it);
	if (put_entry(im, it, id, parent, put_rc) < 0)
		return -1;
	if (it->fault == IMPORT_FAULT_INDEX)
		return report_fault(im, it);
	if (put_keys(im, it, id) < 0 || count_passwords(im, it) < 0 || put_opattrs(im, it, id) < 0)
		return -1;
	im->next_id++;
	if (im->opts->progress && im->next_id % IMPORT_PROGRESS_ENTRIES == 0)
		im->opts->progress(im->opts->progress_arg, im->next_id - 1, it->offset,
		                   im->parser.size);
	return 0;
}

/* Reads records into b until it is full or the file ends; true at the end. */
static bool frame_batch(struct import_parser *p, struct import_batch *b)
{
	while (b->n < IMPORT_BATCH_ITEMS)
		if (import_frame(p, &b->items[b->n++]))
			return true;
	return false;
}

/* Parses the records of b, up to the first with a problem (the writer stops there). */
static void parse_batch(struct import_worker *w, struct import_batch *b)
{
	for (int i = 0; i < b->n; i++) {
		import_parse(w, &b->items[i]);
		if (b->items[i].fault != IMPORT_FAULT_NONE) {
			b->n = i + 1;
			return;
		}
	}
}

/* A parsing thread: claims the next batch and reads its records (in file order, under
 * read_lock), parses them, hands the batch over; until the file ends or the writer stops. */
static void *parse_thread(void *arg)
{
	struct importer *im = arg;
	struct import_worker w;
	import_worker_init(&w, &im->db, im->opts->skip_schema, im->opts->url_values);
	for (;;) {
		pthread_mutex_lock(&im->read_lock);
		struct import_batch *b = im->eof ? NULL : import_queue_claim(&im->queue);
		if (b && frame_batch(&im->parser, b))
			im->eof = true;
		pthread_mutex_unlock(&im->read_lock);
		if (!b)
			break;
		parse_batch(&w, b);
		import_queue_ready(&im->queue, b);
	}
	import_worker_free(&w);
	return NULL;
}

/* Stores the items of b: -1 at the first problem, 1 at the end of the file, else 0. */
static int store_batch(struct importer *im, struct import_batch *b)
{
	for (int i = 0; i < b->n; i++) {
		if (store_item(im, &b->items[i]) < 0)
			return -1;
		if (b->items[i].kind == IMPORT_ITEM_END)
			return 1;
	}
	return 0;
}

/* Stops the parsing threads and waits for them. */
static void stop_parsers(struct importer *im)
{
	import_queue_stop(&im->queue);
	for (; im->nthreads > 0; im->nthreads--)
		pthread_join(im->threads[im->nthreads - 1], NULL);
}

/* Every record through one thread: read, parse, store, a batch at a time. */
static int import_alone(struct importer *im)
{
	struct import_worker w;
	import_worker_init(&w, &im->db, im->opts->skip_schema, im->opts->url_values);
	struct import_batch *b = &im->queue.batches[0];
	int rc = 0;
	while (rc == 0) {
		b->n = 0;
		frame_batch(&im->parser, b);
		parse_batch(&w, b);
		rc = store_batch(im, b);
	}
	import_worker_free(&w);
	return rc;
}

/* Reads, checks and stores every record of the file: parsing on opts->threads threads of
 * their own when it is 2 or more, else on this one between the writes. */
static int import_records(struct importer *im)
{
	int want = im->opts->threads, rc = 0;
	if (want < 2) {
		rc = import_alone(im);
	} else {
		for (; im->nthreads < want && im->nthreads < IMPORT_MAX_THREADS; im->nthreads++)
			if ((rc = pthread_create(&im->threads[im->nthreads], NULL, parse_thread,
			                         im)))
				break;
		if (im->nthreads == 0) {
			fprintf(im->opts->err, "%s: no parsing thread: %s\n", im->file,
			        strerror(rc));
			return -1;
		}
		rc = 0;
		while (rc == 0) {
			rc = store_batch(im, import_queue_take(&im->queue));
			import_queue_release(&im->queue);
		}
		stop_parsers(im);
	}
	if (rc < 0)
		return -1;
	if (im->next_id == 1) {
		report(im, im->last_line, "no entries to import");
		return -1;
	}
	return 0;
}

/* meta's "entries", "created", "creator", "passwords" and, with a schema loaded, "schema"
 * (DB_META_SCHEMA). Returns 0 or an LMDB error. */
static int put_meta(struct importer *im, size_t n)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%SZ", &tm);
	const char *creator = im->opts->creator ? im->opts->creator : "";
	const char *digest = schema_digest();
	int rc = db_load_meta(im->load, "entries", &n, sizeof(n));
	if (rc == 0)
		rc = db_load_meta(im->load, "created", stamp, strlen(stamp));
	if (rc == 0)
		rc = db_load_meta(im->load, "creator", creator, strlen(creator));
	if (rc == 0 && digest[0])
		rc = db_load_meta(im->load, DB_META_SCHEMA, digest, strlen(digest));
	return rc ? rc : db_passwords_put(&im->db, db_load_write(im->load), &im->passwords);
}

/* Stops the page-populating thread, then commits, cuts and syncs the file (db_load_finish).
 * Returns 0 or an LMDB error / errno value. */
static int finish_file(struct importer *im)
{
	import_prefault_stop(&im->prefault);
	int rc = db_load_finish(im->load);
	im->load = NULL;
	return rc;
}

/* Everything that writes the new file: the entries, dynamic groups, memberOf, meta, the commit. */
static int build(struct importer *im, size_t *count)
{
	char err[512];
	int rc = import_records(im);
	if (rc == 0 && im->opts->dynamic_groups &&
	    dyngroup_resolve(&im->db, db_load_write(im->load), (size_t)im->opts->dynamic_groups_max,
	                     im->opts->err, "warning", err, sizeof(err)) < 0) {
		fprintf(im->opts->err, "%s: dynamic groups: %s\n", tmp_path, err);
		rc = -1;
	}
	if (rc == 0 && memberof_resolve(&im->db, db_load_write(im->load), err, sizeof(err)) < 0) {
		fprintf(im->opts->err, "%s: %s\n", tmp_path, err);
		rc = -1;
	}
	if (rc == 0 && im->opts->memberof_nested &&
	    memberof_nested_resolve(&im->db, db_load_write(im->load), im->opts->err, err,
	                            sizeof(err)) < 0) {
		fprintf(im->opts->err, "%s: %s\n", tmp_path, err);
		rc = -1;
	}
	/* Recorded only when on: a file without the key holds direct memberOf. */
	if (rc == 0 && im->opts->memberof_nested &&
	    (rc = memberof_nested_set(&im->db, db_load_write(im->load), true)) != 0) {
		report(im, im->last_line, "writing %s: %s", tmp_path,
		       db_error_text(db_write_error(&im->db, rc)));
		rc = -1;
	}
	if (rc == 0 && ((rc = put_meta(im, im->next_id - 1)) != 0 || (rc = finish_file(im)) != 0)) {
		report(im, im->last_line, "writing %s: %s", tmp_path,
		       db_error_text(db_write_error(&im->db, rc)));
		rc = -1;
	}
	*count = im->next_id - 1;
	return rc;
}

/* build, with a SIGBUS from the map (a full disk) reported as the write error it is. */
static int build_guarded(struct importer *im, size_t *count)
{
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	sigjmp_buf jb;
	int rc;
	if (sigsetjmp(jb, 1) == 0) {
		bus_jump = &jb;
		rc = build(im, count);
	} else {
		stop_parsers(im);
		report(im, im->line, "writing %s: %s", tmp_path,
		       strerror(db_load_page_error(&im->db, bus_addr)));
		db_load_drop(im->load, true); /* closing the environment ends the transaction */
		im->load = NULL;
		rc = -1;
	}
	bus_jump = NULL;
	sigaction(SIGBUS, &old, NULL);
	return rc;
}

int ldif_import(const char *ldif_path, const char *db_path, const struct import_opts *opts,
                size_t *count)
{
	struct importer im = {.file = ldif_path, .opts = opts, .next_id = 1};
	char err[512];
	if (import_parser_open(&im.parser, ldif_path) < 0) {
		fprintf(opts->err, "%s: %s\n", ldif_path, strerror(errno));
		return -1;
	}
	int rc = import_queue_init(&im.queue);
	if (rc == 0 && (rc = pthread_mutex_init(&im.read_lock, NULL)) != 0)
		import_queue_free(&im.queue);
	if (rc != 0) {
		fprintf(opts->err, "%s: %s\n", ldif_path, strerror(rc));
		import_parser_close(&im.parser);
		return -1;
	}
	import_remove_stale(db_path, opts->err);
	snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.%ld", db_path, (long)getpid());
	unlink(tmp_path);
	void (*old_int)(int) = signal(SIGINT, on_signal);
	void (*old_term)(int) = signal(SIGTERM, on_signal);
	/* A file size limit (RLIMIT_FSIZE) is a write error to report, not a signal to die of. */
	void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
	rc = -1;
	if (db_open(&im.db, tmp_path, true, opts->suffix, opts->index, opts->nindex, err,
	            sizeof(err)) < 0) {
		fprintf(opts->err, "%s\n", err);
	} else if ((rc = db_load_begin(&im.db, &im.load)) != 0) {
		fprintf(opts->err, "%s: %s\n", tmp_path, db_error_text(rc));
		rc = -1;
	} else {
		void *map;
		size_t maplen;
		int mapfd = db_file_fd(&im.db);
		if (db_map(&im.db, &map, &maplen) == 0 && mapfd >= 0)
			import_prefault_start(&im.prefault, map, maplen, mapfd);
		rc = build_guarded(&im, count);
		import_prefault_stop(&im.prefault); /* stopped already unless it failed */
	}
	int fd;
	/* On LMDB's descriptor, not the name: the directory may be writable by the user the
	 * file is given to, who could otherwise swap the name for a link to another file. */
	if (rc == 0 && opts->chown &&
	    ((fd = db_file_fd(&im.db)) < 0 || fchown(fd, opts->uid, opts->gid) < 0)) {
		fprintf(opts->err, "%s: chown to %ld:%ld: %s\n", tmp_path, (long)opts->uid,
		        (long)opts->gid, strerror(errno));
		rc = -1;
	}
	if (im.load)
		db_load_drop(im.load, false);
	if (im.db.env)
		db_close(&im.db);
	import_parser_close(&im.parser);
	import_queue_free(&im.queue);
	buf_free(&im.parent_key);
	buf_free(&im.prev_key);
	password_record_free(&im.passwords);
	pthread_mutex_destroy(&im.read_lock);
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
	return rc ? -1 : 0;
}
