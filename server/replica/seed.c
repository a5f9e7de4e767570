/* A new replica's first copy of its file, from a peer's /snapshot (replica.h, replica_seed). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/clock.h"
#include "server/log.h"
#include "server/replica/replica.h"
#include "storage/db_update.h"

/* A transfer that moves fewer than SEED_LOW_SPEED bytes a second for SEED_LOW_SPEED_S
 * seconds is given up: a stalled peer does not hold a new replica for ever. */
#define SEED_LOW_SPEED 1024
#define SEED_LOW_SPEED_S 60

/* The trailers a peer's /snapshot ends with (server/monitor/snapshot.c). */
#define TRAILER_BYTES "X-Snapshot-Bytes:"
#define TRAILER_SHA256 "X-Snapshot-Sha256:"

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

struct fetch {
	int fd;
	EVP_MD_CTX *md;
	uint64_t bytes;
	int write_errno;
	bool said_bytes, said_sha;
	uint64_t bytes_said;
	char sha_said[65];
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct fetch *f = arg;
	size_t len = size * n, off = 0;
	while (off < len) {
		ssize_t k = write(f->fd, p + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			f->write_errno = errno;
			return 0; /* libcurl stops: CURLE_WRITE_ERROR */
		}
		off += (size_t)k;
	}
	EVP_DigestUpdate(f->md, p, len);
	f->bytes += len;
	return len;
}

/* A header line or, after the body, a trailer (libcurl hands both here). */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct fetch *f = arg;
	size_t len = size * n;
	char line[256];
	if (len >= sizeof(line))
		return len;
	memcpy(line, p, len);
	line[len] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strncasecmp(line, TRAILER_BYTES, strlen(TRAILER_BYTES)) == 0) {
		unsigned long long v;
		if (sscanf(line + strlen(TRAILER_BYTES), " %llu", &v) == 1) {
			f->bytes_said = v;
			f->said_bytes = true;
		}
	} else if (strncasecmp(line, TRAILER_SHA256, strlen(TRAILER_SHA256)) == 0) {
		f->said_sha =
		    sscanf(line + strlen(TRAILER_SHA256), " %64[0-9a-f]", f->sha_said) == 1 &&
		    strlen(f->sha_said) == 64;
	}
	return len;
}

/* GETs url into the open file fd, checking its length and SHA-256 against the
 * trailers. 0, or -1 with why. */
static int fetch(const struct syncrepl_conf *s, const char *url, int fd, uint64_t *bytes, char *why,
                 size_t cap)
{
	struct fetch f = {.fd = fd, .md = EVP_MD_CTX_new()};
	CURL *curl = curl_easy_init();
	char err[CURL_ERROR_SIZE] = "";
	int rc = -1;
	if (!curl || !f.md || EVP_DigestInit_ex(f.md, EVP_sha256(), NULL) != 1) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)s->network_timeout);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, (long)SEED_LOW_SPEED);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, (long)SEED_LOW_SPEED_S);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &f);
	if (s->tls_cacert[0])
		curl_easy_setopt(curl, CURLOPT_CAINFO, s->tls_cacert);
	if (s->tls_reqcert_never) {
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	CURLcode cc = curl_easy_perform(curl);
	long status = 0;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char hex[65] = "";
	if (cc != CURLE_OK && f.write_errno)
		snprintf(why, cap, "writing the copy: %s", strerror(f.write_errno));
	else if (cc != CURLE_OK)
		snprintf(why, cap, "%s", err[0] ? err : curl_easy_strerror(cc));
	else if (status != 200)
		snprintf(why, cap, "the peer answered HTTP %ld%s", status,
		         status == 403 ? " (is this replica's address in its snapshot_allow?)"
		                       : "");
	else if (!f.said_bytes || !f.said_sha)
		snprintf(why, cap, "the copy ended without its length and checksum (cut short)");
	else if (f.bytes != f.bytes_said)
		snprintf(why, cap, "%llu bytes came, the peer sent %llu",
		         (unsigned long long)f.bytes, (unsigned long long)f.bytes_said);
	else if (EVP_DigestFinal_ex(f.md, md, &mdlen) != 1 || mdlen != 32)
		snprintf(why, cap, "computing its SHA-256 failed");
	else
		rc = 0;
	for (unsigned i = 0; rc == 0 && i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	if (rc == 0 && strcmp(hex, f.sha_said) != 0) {
		snprintf(why, cap, "its SHA-256 is %s, the peer's %s", hex, f.sha_said);
		rc = -1;
	}
	*bytes = f.bytes;
out:
	if (curl)
		curl_easy_cleanup(curl);
	EVP_MD_CTX_free(f.md);
	return rc;
}

/* Whether the file at path is a database of cfg's replica: whole, with a cookie and the
 * source the config makes. 0 (*entries set), or -1 with why. */
static int check_copy(const struct config *cfg, const char *path, size_t *entries, char *why,
                      size_t cap)
{
	struct db db;
	char err[512], want[4096];
	if (db_open(&db, path, false, cfg->suffix, NULL, 0, err, sizeof(err)) < 0) {
		snprintf(why, cap, "the copy is no database: %s", err);
		return -1;
	}
	struct db_read *rd = NULL;
	const void *cookie, *src;
	size_t cookielen, srclen;
	int rc = db_read_begin(&db, &rd);
	if (rc == 0 && (rc = db_update_get_cookie(&db, rd, &cookie, &cookielen)) == DB_NOTFOUND)
		snprintf(why, cap,
		         "the copy holds no cookie (its server is no replica, or has "
		         "not finished a refresh)");
	else if (rc == 0 && (rc = db_update_get_source(&db, rd, &src, &srclen)) == DB_NOTFOUND)
		snprintf(why, cap,
		         "the copy does not say what it replicates (its server is older)");
	else if (rc == 0 && replica_source_text(&cfg->syncrepl, want, sizeof(want)) < 0)
		snprintf(why, cap, "the syncrepl key is too long to compare"), rc = -1;
	else if (rc == 0 && (srclen != strlen(want) || memcmp(src, want, srclen) != 0))
		snprintf(why, cap, "the copy replicates \"%.*s\", this replica \"%s\"",
		         (int)(srclen > 1000 ? 1000 : srclen), (const char *)src, want),
		    rc = -1;
	else if (rc == 0 && (rc = db_entry_count(&db, rd, entries)) != 0)
		snprintf(why, cap, "counting its entries: %s", db_error_text(rc));
	else if (rc && rc != DB_NOTFOUND)
		snprintf(why, cap, "reading the copy: %s", db_error_text(rc));
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

int replica_seed(const struct config *cfg, char *why, size_t cap)
{
	const char *url = cfg->syncrepl.seed;
	char tmp[sizeof(cfg->database) + 8];
	snprintf(tmp, sizeof(tmp), "%s.seed", cfg->database);
	uint64_t start = clock_ns(), bytes = 0;
	size_t entries = 0;
	unlink(tmp); /* a copy an earlier start left half made */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, DB_FILE_MODE);
	if (fd < 0) {
		snprintf(why, cap, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	log_info("syncrepl seed=%s: taking a copy of the peer's database into %s", url, tmp);
	int rc = fetch(&cfg->syncrepl, url, fd, &bytes, why, cap);
	if (rc == 0 && fsync(fd) < 0)
		rc = -1, snprintf(why, cap, "%s: fsync: %s", tmp, strerror(errno));
	close(fd);
	if (rc == 0)
		rc = check_copy(cfg, tmp, &entries, why, cap);
	if (rc == 0 && rename(tmp, cfg->database) < 0)
		rc = -1, snprintf(why, cap, "renaming %s: %s", tmp, strerror(errno));
	if (rc < 0) {
		unlink(tmp);
		return -1;
	}
	if (sync_dir(cfg->database) < 0)
		log_warning("syncrepl seed: syncing the directory of %s failed: %s", cfg->database,
		            strerror(errno));
	log_info("syncrepl seed=%s: %llu bytes, %zu entries, in %.1f s; following the provider "
	         "from the copy's cookie",
	         url, (unsigned long long)bytes, entries, (double)(clock_ns() - start) / 1e9);
	return 0;
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
	if (rc == 0)
		log_info("%s replicated \"%.*s\"; it now replicates \"%s\" (the syncrepl key "
		         "changed)",
		         cfg->database, (int)(len > 1000 ? 1000 : len), (const char *)src, want);
	if (rc == 0 || rc == DB_NOTFOUND)
		rc = db_update_set_source(db, wr, want, strlen(want));
	if (rc == 0)
		rc = db_write_commit(wr);
	else if (wr)
		db_write_abort(wr);
	if (rc)
		log_error("%s: recording what it replicates: %s", cfg->database, db_error_text(rc));
}
