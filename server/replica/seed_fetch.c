/* A peer's /snapshot fetched over HTTP or HTTPS (seed_fetch.h). */
#include "server/replica/seed_fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/copy_digest.h"
#include "server/replica/seed_writer.h"

/* A transfer that moves fewer than SEED_LOW_SPEED bytes a second for SEED_LOW_SPEED_S
 * seconds is given up: a stalled peer does not hold a new replica for ever. */
#define SEED_LOW_SPEED 1024
#define SEED_LOW_SPEED_S 60

/* libcurl's receive buffer (16 KiB by default): the copy's writes and digest updates
 * in 1 MiB steps, a sixty-fourth as many. */
#define SEED_RECV_BYTES (1024 * 1024)

/* The length trailer a peer's /snapshot ends with (server/monitor/snapshot.c); its
 * checksum's is copy_digest_trailer's. */
#define TRAILER_BYTES "X-Snapshot-Bytes:"

/* What the fetch asks for: the cheaper checksum (copy_digest.h). A peer that does not know
 * it (an older minidir) sends SHA-256, and its Trailer header says so. */
#define SEED_DIGEST_ASK COPY_DIGEST_ASK ": xxh3-128"

struct fetch {
	struct seed_writer *out; /* the file's writer */
	struct copy_digest md;   /* started by the Trailer header or the first body bytes */
	bool md_started, md_failed;
	uint64_t bytes;
	int write_errno;
	bool said_bytes, said_sum;
	uint64_t bytes_said;
	char sum_said[COPY_DIGEST_HEX_MAX + 1];
};

/* Starts f's digest of kind, once (the first to come, the Trailer header or the body,
 * picks it). */
static void digest_start(struct fetch *f, enum copy_digest_kind kind)
{
	if (f->md_started)
		return;
	f->md_started = true;
	f->md_failed = copy_digest_start(&f->md, kind) < 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct fetch *f = arg;
	size_t len = size * n;
	if (seed_writer_put(f->out, p, len) < 0) { /* written behind, by the writer's thread */
		f->write_errno = errno;
		return 0; /* libcurl stops: CURLE_WRITE_ERROR */
	}
	digest_start(f, COPY_DIGEST_SHA256); /* no Trailer header: the peer's default */
	if (!f->md_failed)
		copy_digest_add(&f->md, p, len);
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
	if (strncasecmp(line, "Trailer:", 8) == 0 && !f->bytes) {
		/* Names the checksum the copy will end with, so it is made as the bytes come. */
		bool xxh = strcasestr(line + 8, copy_digest_trailer(COPY_DIGEST_XXH3_128));
		digest_start(f, xxh ? COPY_DIGEST_XXH3_128 : COPY_DIGEST_SHA256);
		return len;
	}
	if (strncasecmp(line, TRAILER_BYTES, strlen(TRAILER_BYTES)) == 0) {
		unsigned long long v;
		if (sscanf(line + strlen(TRAILER_BYTES), " %llu", &v) == 1) {
			f->bytes_said = v;
			f->said_bytes = true;
		}
		return len;
	}
	/* The checksum's trailer: the one of the kind being made, in lowercase hex. */
	const char *name = f->md_started ? copy_digest_trailer(f->md.kind) : NULL;
	size_t nlen = name ? strlen(name) : 0;
	if (name && strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
		size_t want = f->md.kind == COPY_DIGEST_XXH3_128 ? 32 : 64;
		const char *v = line + nlen + 1 + strspn(line + nlen + 1, " \t");
		size_t vlen = strspn(v, "0123456789abcdef");
		f->said_sum = vlen == want && (v[vlen] == '\0' || v[vlen] == ' ');
		if (f->said_sum)
			memcpy(f->sum_said, v, vlen), f->sum_said[vlen] = '\0';
	}
	return len;
}

int seed_fetch(const struct seed_peer *peer, int fd, uint64_t *bytes, char *why, size_t cap)
{
	struct fetch f = {0};
	CURL *curl = curl_easy_init();
	char err[CURL_ERROR_SIZE] = "";
	int rc = -1;
	struct curl_slist *ask = curl_slist_append(NULL, SEED_DIGEST_ASK);
	if (!curl || !ask) {
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
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, ask);
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
	char hex[COPY_DIGEST_HEX_MAX + 1] = "";
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
	else if (f.md_failed)
		snprintf(why, cap, "out of memory for its checksum");
	else if (!f.said_bytes || !f.said_sum)
		snprintf(why, cap, "the copy ended without its length and checksum (cut short)");
	else if (f.bytes != f.bytes_said)
		snprintf(why, cap, "%llu bytes came, the peer sent %llu",
		         (unsigned long long)f.bytes, (unsigned long long)f.bytes_said);
	else if (copy_digest_hex(&f.md, hex) < 0)
		snprintf(why, cap, "computing its %s failed", copy_digest_name(f.md.kind));
	else if (strcmp(hex, f.sum_said) != 0)
		snprintf(why, cap, "its %s is %s, the peer's %s", copy_digest_name(f.md.kind), hex,
		         f.sum_said);
	else
		rc = 0;
	*bytes = f.bytes;
out:
	if (curl)
		curl_easy_cleanup(curl);
	if (f.out)
		(void)seed_writer_end(f.out);
	curl_slist_free_all(ask);
	copy_digest_free(&f.md);
	return rc;
}
