/* A new replica's first copy of its file, from a peer's /snapshot (replica.h, replica_seed). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/file_owner.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/replica/replica.h"
#include "server/replica/seed_fetch.h"
#include "storage/db_update.h"

int replica_source_text(const struct syncrepl_conf *s, char *out, size_t cap)
{
	static const char *const types[] = {"refreshOnly", "refreshAndPersist", "dirSync",
	                                    "usnChanged"};
	int n = snprintf(out, cap, "provider=%s searchbase=%s scope=%d filter=%s attrs=%s type=%s",
	                 s->provider, s->searchbase, syncrepl_ldap_scope(s),
	                 s->filter[0] ? s->filter : "(objectClass=*)",
	                 s->attrs[0] ? s->attrs : "*,+", types[s->type]);
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* Whether the file at path is a database, whole, with a cookie and what it replicates,
 * of cfg's suffix when cfg has one and the source cfg's syncrepl key makes when it has
 * one. 0 (got's entries, suffix and source set), or -1 with why. */
static int check_copy(const struct config *cfg, const char *path, struct seed_result *got,
                      char *why, size_t cap)
{
	struct db db;
	char err[512], want[4096];
	if (db_open(&db, path, false, cfg->suffix, NULL, 0, err, sizeof(err)) < 0) {
		snprintf(why, cap, "the copy is no database: %s", err);
		return -1;
	}
	snprintf(got->suffix, sizeof(got->suffix), "%.*s", (int)db.suffix.len,
	         (const char *)db.suffix.data);
	struct db_read *rd = NULL;
	const void *cookie, *src;
	size_t cookielen, srclen;
	int rc = db_read_begin(&db, &rd);
	if (rc == 0 && cfg->suffix[0] && !db_holds_suffix(&db, cfg->suffix))
		snprintf(why, cap, "the copy holds suffix \"%s\", not \"%s\"", got->suffix,
		         cfg->suffix),
		    rc = -1;
	else if (rc == 0 &&
	         (rc = db_update_get_cookie(&db, rd, &cookie, &cookielen)) == DB_NOTFOUND)
		snprintf(why, cap,
		         "the copy holds no cookie (its server is no replica, or has "
		         "not finished a refresh)");
	else if (rc == 0 && (rc = db_update_get_source(&db, rd, &src, &srclen)) == DB_NOTFOUND)
		snprintf(why, cap,
		         "the copy does not say what it replicates (its server is older)");
	else if (rc == 0 && cfg->syncrepl.set &&
	         replica_source_text(&cfg->syncrepl, want, sizeof(want)) < 0)
		snprintf(why, cap, "the syncrepl key is too long to compare"), rc = -1;
	else if (rc == 0 && cfg->syncrepl.set &&
	         (srclen != strlen(want) || memcmp(src, want, srclen) != 0))
		snprintf(why, cap, "the copy replicates \"%.*s\", this replica \"%s\"",
		         (int)(srclen > 1000 ? 1000 : srclen), (const char *)src, want),
		    rc = -1;
	else if (rc == 0 && (rc = db_entry_count(&db, rd, &got->entries)) != 0)
		snprintf(why, cap, "counting its entries: %s", db_error_text(rc));
	else if (rc && rc != DB_NOTFOUND)
		snprintf(why, cap, "reading the copy: %s", db_error_text(rc));
	if (rc == 0)
		snprintf(got->source, sizeof(got->source), "%.*s", (int)srclen, (const char *)src);
	if (rd)
		db_read_end(rd);
	db_close(&db);
	return rc ? -1 : 0;
}

/* fsync of path's directory, so that a rename into it survives a crash. */
static int sync_dir(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	int fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

int replica_seed_file(const struct config *cfg, const char *url, const char *path,
                      const struct file_owner *owner, struct seed_result *got, char *why,
                      size_t cap)
{
	const struct syncrepl_conf *s = &cfg->syncrepl;
	struct seed_peer peer = {
	    .url = url,
	    .cafile = s->tls_cacert[0] ? s->tls_cacert : cfg->tls_ca_file,
	    .no_verify = s->tls_reqcert_never,
	    .connect_timeout_s = s->set ? s->network_timeout : 30,
	};
	char tmp[4200];
	*got = (struct seed_result){0};
	if (snprintf(tmp, sizeof(tmp), "%s.seed", path) >= (int)sizeof(tmp)) {
		snprintf(why, cap, "%.200s...: the path is too long", path);
		return -1;
	}
	struct stat st;
	if (stat(path, &st) == 0) {
		snprintf(why, cap, "%s exists: it is not replaced", path);
		return -1;
	}
	unlink(tmp); /* a copy an earlier try left half made */
	/* Written past the page cache where the file system allows it: a gigabyte of new
	 * page-cache pages cost more than its transfer here (bench/results, 2026-12-07), and
	 * the server reads the pages it needs back from the disk. */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, DB_FILE_MODE);
	if (fd < 0 && errno == EINVAL) { /* no O_DIRECT here (made the file first, it may) */
		unlink(tmp);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, DB_FILE_MODE);
	}
	if (fd < 0) {
		snprintf(why, cap, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	int rc = seed_fetch(&peer, fd, &got->bytes, why, cap);
	/* Given away before the fsync and the rename: no moment where FILE is there, root's. */
	if (rc == 0 && owner && owner->chown && fchown(fd, owner->uid, owner->gid) < 0)
		rc = -1, snprintf(why, cap, "%s: chown to uid %ld: %s", tmp, (long)owner->uid,
		                  strerror(errno));
	if (rc == 0 && fsync(fd) < 0)
		rc = -1, snprintf(why, cap, "%s: fsync: %s", tmp, strerror(errno));
	close(fd);
	if (rc == 0)
		rc = check_copy(cfg, tmp, got, why, cap);
	/* Never over a file that is there (one made meanwhile): RENAME_NOREPLACE. */
	if (rc == 0 && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0)
		rc = -1, snprintf(why, cap, "renaming %s to %s: %s", tmp, path, strerror(errno));
	if (rc < 0) {
		unlink(tmp);
		return -1;
	}
	if (sync_dir(path) < 0)
		log_warning("seed: syncing the directory of %s failed: %s", path, strerror(errno));
	return 0;
}

int replica_seed(const struct config *cfg, char *why, size_t cap)
{
	const char *url = cfg->syncrepl.seed;
	uint64_t start = clock_ns();
	struct seed_result got;
	log_info("syncrepl seed=%s: taking a copy of the peer's database into %s.seed", url,
	         cfg->database);
	if (replica_seed_file(cfg, url, cfg->database, NULL, &got, why, cap) < 0)
		return -1;
	log_info("syncrepl seed=%s: %llu bytes, %zu entries, in %.1f s; following the provider "
	         "from the copy's cookie",
	         url, (unsigned long long)got.bytes, got.entries,
	         (double)(clock_ns() - start) / 1e9);
	return 0;
}

/* The part of a source text (replica_source_text) that says which entries and attributes
 * the file holds: from " searchbase=" to the last " type=" (a provider's URL has no
 * spaces; a filter may, so the type is found from the end). Its start into *part, its
 * length returned; the whole text when it is not of that form. */
static size_t content_part(const char *text, size_t len, const char **part)
{
	const char *base = memmem(text, len, " searchbase=", 12), *type = NULL;
	for (const char *t = base; t && (t = memmem(t, len - (size_t)(t - text), " type=", 6)); t++)
		type = t;
	if (!base || !type) {
		*part = text;
		return len;
	}
	*part = base;
	return (size_t)(type - base);
}

void replica_source_follow(const struct config *cfg, struct db *db)
{
	char want[4096];
	const void *src;
	size_t len;
	struct db_write *wr = NULL;
	if (replica_source_text(&cfg->syncrepl, want, sizeof(want)) < 0)
		return; /* never compared: check_copy refuses such a seed */
	int rc = db_write_begin(db, &wr);
	if (rc == 0)
		rc = db_update_get_source(db, db_write_reads(wr), &src, &len);
	if (rc == 0 && len == strlen(want) && memcmp(src, want, len) == 0) {
		db_write_abort(wr);
		return;
	}
	const char *had, *now;
	size_t hadlen = rc == 0 ? content_part(src, len, &had) : 0;
	size_t nowlen = content_part(want, strlen(want), &now);
	/* Other entries or attributes (a base, scope, filter or attrs of its own, or a copy
	 * seeded without the config's check): the provider's changes since the cookie would
	 * leave out what the new key adds, so the cookie goes and a full refresh follows.
	 * Another provider URL or type keeps it (a provider's peer serves the same cookie). */
	bool other_content = rc == 0 && (hadlen != nowlen || memcmp(had, now, nowlen) != 0);
	if (other_content)
		log_warning("%s replicated \"%.*s\"; the syncrepl key replicates \"%s\": its "
		            "cookie is dropped, a full refresh follows",
		            cfg->database, (int)(len > 1000 ? 1000 : len), (const char *)src, want);
	else if (rc == 0)
		log_info("%s replicated \"%.*s\"; it now replicates \"%s\" (the syncrepl key "
		         "changed)",
		         cfg->database, (int)(len > 1000 ? 1000 : len), (const char *)src, want);
	if (other_content)
		rc = db_update_set_cookie(db, wr, NULL, 0);
	if (rc == 0 || rc == DB_NOTFOUND)
		rc = db_update_set_source(db, wr, want, strlen(want));
	if (rc == 0)
		rc = db_write_commit(wr);
	else if (wr)
		db_write_abort(wr);
	if (rc)
		log_error("%s: recording what it replicates: %s", cfg->database, db_error_text(rc));
}
