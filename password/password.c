#include "password/password.h"

#include <argon2.h>
#include <crypt.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "password/b64.h"

/* Checks base64(digest(given || salt) || salt) (salt empty when unsalted). */
static bool check_digest(const struct password_scheme *s, const char *b64, size_t b64len,
                         const char *given, size_t glen)
{
	unsigned char raw[800], md[EVP_MAX_MD_SIZE];
	int n = b64_decode(b64, b64len, raw, sizeof(raw), false);
	if (n < 0)
		return false;
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

/* PBKDF2-HMAC(digest) of given with salt and iterations, compared in constant time with
 * key[0..keylen). */
static bool check_pbkdf2_key(const char *digest, unsigned long iter, const unsigned char *salt,
                             int saltlen, const unsigned char *key, int keylen, const char *given,
                             size_t glen)
{
	unsigned char derived[512];
	const EVP_MD *md = EVP_get_digestbyname(digest);
	if (!md || iter < PASSWORD_PBKDF2_MIN_ITER || iter > PASSWORD_PBKDF2_MAX_ITER ||
	    saltlen <= 0 || keylen <= 0 || keylen > (int)sizeof(derived) || glen > INT_MAX)
		return false;
	return PKCS5_PBKDF2_HMAC(given, (int)glen, salt, saltlen, (int)iter, md, keylen, derived) ==
	           1 &&
	       CRYPTO_memcmp(derived, key, (size_t)keylen) == 0;
}

/* "ITERATIONS$SALT$KEY" (PASSWORD_PBKDF2). */
static bool check_pbkdf2(const struct password_scheme *s, const char *v, size_t vlen,
                         const char *given, size_t glen)
{
	const char *end = v + vlen, *d1 = memchr(v, '$', vlen);
	const char *d2 = d1 ? memchr(d1 + 1, '$', (size_t)(end - d1 - 1)) : NULL;
	if (!d1 || !d2 || d1 == v || d1 - v > 9)
		return false;
	unsigned long iter = 0;
	for (const char *p = v; p < d1; p++) {
		if (*p < '0' || *p > '9')
			return false;
		iter = iter * 10 + (unsigned long)(*p - '0');
	}
	unsigned char salt[256], key[512];
	int saltlen = b64_decode(d1 + 1, (size_t)(d2 - d1 - 1), salt, sizeof(salt), true);
	int keylen = b64_decode(d2 + 1, (size_t)(end - d2 - 1), key, sizeof(key), true);
	return saltlen > 0 && keylen > 0 &&
	       check_pbkdf2_key(s->digest, iter, salt, saltlen, key, keylen, given, glen);
}

/* 389-ds's {PBKDF2_SHA256} (PASSWORD_PBKDF2_DS): count, 64-byte salt, 256-byte key. */
static bool check_pbkdf2_ds(const struct password_scheme *s, const char *v, size_t vlen,
                            const char *given, size_t glen)
{
	unsigned char raw[4 + 64 + 256 + 3];
	if (b64_decode(v, vlen, raw, sizeof(raw), false) != 4 + 64 + 256)
		return false;
	unsigned long iter = (unsigned long)raw[0] << 24 | (unsigned long)raw[1] << 16 |
	                     (unsigned long)raw[2] << 8 | raw[3];
	return check_pbkdf2_key(s->digest, iter, raw + 4, 64, raw + 68, 256, given, glen);
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
	case PASSWORD_PBKDF2:
		return check_pbkdf2(s, stored + n, slen - n, given, glen);
	case PASSWORD_PBKDF2_DS:
		return check_pbkdf2_ds(s, stored + n, slen - n, given, glen);
	}
	return false;
}
