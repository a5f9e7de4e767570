/* The checksum of a /snapshot copy (copy_digest.h). */
#include "server/copy_digest.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

const char *copy_digest_name(enum copy_digest_kind kind)
{
	return kind == COPY_DIGEST_XXH3_128 ? "xxh3-128" : "sha-256";
}

const char *copy_digest_trailer(enum copy_digest_kind kind)
{
	return kind == COPY_DIGEST_XXH3_128 ? "X-Snapshot-Xxh3-128" : "X-Snapshot-Sha256";
}

bool copy_digest_by_name(const char *name, enum copy_digest_kind *kind)
{
	name += strspn(name, " \t");
	size_t len = strlen(name);
	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
		len--;
	for (int k = COPY_DIGEST_SHA256; k <= COPY_DIGEST_XXH3_128; k++) {
		const char *known = copy_digest_name((enum copy_digest_kind)k);
		if (len == strlen(known) && strncasecmp(name, known, len) == 0) {
			*kind = (enum copy_digest_kind)k;
			return true;
		}
	}
	return false;
}

int copy_digest_start(struct copy_digest *d, enum copy_digest_kind kind)
{
	*d = (struct copy_digest){.kind = kind};
	if (kind == COPY_DIGEST_XXH3_128) {
		XXH3_state_t *x = XXH3_createState();
		if (!x || XXH3_128bits_reset(x) != XXH_OK) {
			XXH3_freeState(x);
			return -1;
		}
		d->state = x;
		return 0;
	}
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return -1;
	}
	d->state = md;
	return 0;
}

void copy_digest_add(struct copy_digest *d, const void *p, size_t len)
{
	if (d->kind == COPY_DIGEST_XXH3_128)
		(void)XXH3_128bits_update(d->state, p, len); /* fails only on a NULL state */
	else
		(void)EVP_DigestUpdate(d->state, p, len);
}

static void to_hex(const unsigned char *b, size_t n, char *hex)
{
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	hex[2 * n] = '\0';
}

int copy_digest_hex(struct copy_digest *d, char hex[COPY_DIGEST_HEX_MAX + 1])
{
	if (d->kind == COPY_DIGEST_XXH3_128) {
		XXH128_canonical_t c;
		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(d->state));
		to_hex(c.digest, sizeof(c.digest), hex);
		return 0;
	}
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	if (EVP_DigestFinal_ex(d->state, sum, &len) != 1 || len != 32)
		return -1;
	to_hex(sum, len, hex);
	return 0;
}

void copy_digest_free(struct copy_digest *d)
{
	if (!d->state)
		return;
	if (d->kind == COPY_DIGEST_XXH3_128)
		XXH3_freeState(d->state);
	else
		EVP_MD_CTX_free(d->state);
	d->state = NULL;
}
