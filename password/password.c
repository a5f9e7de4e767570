#include "password/password.h"

#include <argon2.h>
#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Checks base64(digest(given || salt) || salt) (salt empty when unsalted). */
static bool check_digest(const struct password_scheme *s, const char *b64, size_t b64len,
                         const char *given, size_t glen)
{
	if (b64len == 0 || b64len % 4 || b64len > 1024)
		return false;
	unsigned char raw[800], md[EVP_MAX_MD_SIZE];
	int n = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)b64len);
	if (n < 0)
		return false;
	n -= (b64[b64len - 1] == '=') + (b64[b64len - 2] == '='); /* DecodeBlock counts padding */
	const EVP_MD *type = EVP_get_digestbyname(s->digest);
	int mdlen = type ? EVP_MD_get_size(type) : 0;
	if (mdlen <= 0 || n < mdlen || (!s->salted && n != mdlen))
		return false;
	unsigned int outlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx && EVP_DigestInit_ex(ctx, type, NULL) && EVP_DigestUpdate(ctx, given, glen) &&
	          EVP_DigestUpdate(ctx, raw + mdlen, (size_t)(n - mdlen)) &&
	          EVP_DigestFinal_ex(ctx, md, &outlen);
	EVP_MD_CTX_free(ctx);
	return ok && outlen == (unsigned)mdlen && CRYPTO_memcmp(md, raw, (size_t)mdlen) == 0;
}

static bool check_crypt(const char *hash, size_t hlen, const char *given, size_t glen)
{
	char *h = strndup(hash, hlen), *g = strndup(given, glen);
	bool ok = false;
	if (h && g && strlen(g) == glen) {
		struct crypt_data data;
		memset(&data, 0, sizeof(data));
		const char *out = crypt_r(g, h, &data);
		ok =
		    out && out[0] != '*' && strlen(out) == hlen && CRYPTO_memcmp(out, h, hlen) == 0;
	}
	free(h);
	free(g);
	return ok;
}

/*
 * {ARGON2} as OpenLDAP's argon2 module (and slappasswd -h {ARGON2}) writes it: the
 * PHC string "$argon2id$v=19$m=65536,t=2,p=1$SALT$HASH" after the scheme. libargon2
 * decodes it, derives with its parameters and compares in constant time.
 */
static bool check_argon2(const char *hash, size_t hlen, const char *given, size_t glen)
{
	static const struct {
		const char *prefix;
		argon2_type type;
	} types[] = {{"$argon2id$", Argon2_id}, {"$argon2i$", Argon2_i}, {"$argon2d$", Argon2_d}};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t plen = strlen(types[i].prefix);
		if (hlen <= plen || memcmp(hash, types[i].prefix, plen) != 0)
			continue;
		char *h = strndup(hash, hlen);
		bool ok = h && strlen(h) == hlen &&
		          argon2_verify(h, given, glen, types[i].type) == ARGON2_OK;
		free(h);
		return ok;
	}
	return false;
}

bool password_check(const char *stored, size_t slen, const char *given, size_t glen)
{
	if (glen == 0)
		return false;
	size_t n;
	const struct password_scheme *s = password_classify(stored, slen, &n);
	if (!s)
		return false; /* an unknown scheme never matches */
	switch (s->kind) {
	case PASSWORD_CLEARTEXT:
		return slen == glen && CRYPTO_memcmp(stored, given, glen) == 0;
	case PASSWORD_DIGEST:
		return check_digest(s, stored + n, slen - n, given, glen);
	case PASSWORD_CRYPT:
		return check_crypt(stored + n, slen - n, given, glen);
	case PASSWORD_ARGON2:
		return check_argon2(stored + n, slen - n, given, glen);
	}
	return false;
}
