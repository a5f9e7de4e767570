/* A peer's /snapshot fetched over HTTP or HTTPS (seed_fetch.h). */
#include "server/replica/seed_fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/replica/seed_writer.h"

/* A transfer that moves fewer than SEED_LOW_SPEED bytes a second for SEED_LOW_SPEED_S
 * seconds is given up: a stalled peer does not hold a new replica for ever. */
#define SEED_LOW_SPEED 1024
#define SEED_LOW_SPEED_S 60

/* libcurl's receive buffer (16 KiB by default): the copy's writes and digest updates
 * in 1 MiB steps, a sixty-fourth as many. */
#define SEED_RECV_BYTES (1024 * 1024)

/* The trailers a peer's /snapshot ends with (server/monitor/snapshot.c). */
#define TRAILER_BYTES "X-Snapshot-Bytes:"
#define TRAILER_SHA256 "X-Snapshot-Sha256:"

struct fetch {
	struct seed_writer *out; /* the file's writer */
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
	size_t len = size * n;
	if (seed_writer_put(f->out, p, len) < 0) { /* written behind, by the writer's thread */
		f->write_errno = errno;
		return 0; /* libcurl stops: CURLE_WRITE_ERROR */
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

int seed_fetch(const struct seed_peer *peer, int fd, uint64_t *bytes, char *why, size_t cap)
{
	struct fetch f = {.md = EVP_MD_CTX_new()};
	CURL *curl = curl_easy_init();
	char err[CURL_ERROR_SIZE] = "";
	int rc = -1;
	if (!curl || !f.md || EVP_DigestInit_ex(f.md, EVP_sha256(), NULL) != 1) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	if (!(f.out = seed_writer_start(fd))) {
		snprintf(why, cap, "starting the copy's writer: %s", strerror(errno));
		goto out;
	}
	curl_easy_setopt(curl, CURLOPT_URL, peer->url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)peer->connect_timeout_s);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, (long)SEED_LOW_SPEED);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, (long)SEED_LOW_SPEED_S);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, (long)SEED_RECV_BYTES);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &f);
	if (peer->cafile && peer->cafile[0])
		curl_easy_setopt(curl, CURLOPT_CAINFO, peer->cafile);
	if (peer->no_verify) {
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	CURLcode cc = curl_easy_perform(curl);
	int end_rc = seed_writer_end(f.out);
	f.out = NULL;
	if (end_rc < 0 && !f.write_errno)
		f.write_errno = errno;
	long status = 0;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char hex[65] = "";
	if (f.write_errno)
		snprintf(why, cap, "writing the copy: %s", strerror(f.write_errno));
	else if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
		snprintf(why, cap, "the peer's certificate did not verify against %s: %s",
		         peer->cafile && peer->cafile[0] ? peer->cafile : "the system's CAs",
		         err[0] ? err : curl_easy_strerror(cc));
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
	if (f.out)
		(void)seed_writer_end(f.out);
	EVP_MD_CTX_free(f.md);
	return rc;
}
