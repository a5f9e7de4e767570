#include "server/password.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct scheme {
	const char *name; /* with braces */
	const char *digest;
	bool salted;
};

static const struct scheme schemes[] = {
    {"{MD5}", "MD5", false},       {"{SMD5}", "MD5", true},       {"{SHA}", "SHA1", false},
    {"{SSHA}", "SHA1", true},      {"{SHA256}", "SHA256", false}, {"{SSHA256}", "SHA256", true},
    {"{SHA512}", "SHA512", false}, {"{SSHA512}", "SHA512", true},
};

/* Checks base64(digest(given || salt) || salt) (salt empty when unsalted). */
static bool check_digest(const struct scheme *s, const char *b64, size_t b64len, const char *given,
                         size_t glen)
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

bool password_check(const char *stored, size_t slen, const char *given, size_t glen)
{
	if (glen == 0)
		return false;
	if (slen > 0 && stored[0] == '{') {
		const char *close = memchr(stored, '}', slen);
		if (close) {
			size_t nlen = (size_t)(close - stored) + 1;
			const char *rest = close + 1;
			size_t rlen = slen - nlen;
			if (nlen == 7 && strncasecmp(stored, "{CRYPT}", 7) == 0)
				return check_crypt(rest, rlen, given, glen);
			for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
				if (strlen(schemes[i].name) == nlen &&
				    strncasecmp(stored, schemes[i].name, nlen) == 0)
					return check_digest(&schemes[i], rest, rlen, given, glen);
			return false; /* an unknown scheme never matches */
		}
	}
	return slen == glen && CRYPTO_memcmp(stored, given, glen) == 0;
}

/* crypt(3) methods whose second field holds cost parameters rather than the salt. */
static bool crypt_has_params(const char *id, size_t len)
{
	static const char *const ids[] = {"2a", "2b", "2y", "y", "gy", "7"};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (strlen(ids[i]) == len && memcmp(ids[i], id, len) == 0)
			return true;
	return false;
}

size_t password_cost_class(const char *stored, size_t slen, char *out, size_t outlen)
{
	size_t n = 0;
	const char *close = slen && stored[0] == '{' ? memchr(stored, '}', slen) : NULL;
	if (close) {
		n = (size_t)(close - stored) + 1;
		if (n == 7 && strncasecmp(stored, "{CRYPT}", 7) == 0 && n < slen &&
		    stored[n] == '$') {
			/* "$id$", then the next field too when it is parameters */
			const char *id = stored + n + 1, *end = stored + slen;
			const char *d1 = memchr(id, '$', (size_t)(end - id));
			if (d1) {
				n = (size_t)(d1 - stored) + 1;
				const char *d2 = memchr(d1 + 1, '$', (size_t)(end - d1 - 1));
				bool rounds =
				    (size_t)(end - d1 - 1) > 7 && memcmp(d1 + 1, "rounds=", 7) == 0;
				if (d2 && (rounds || crypt_has_params(id, (size_t)(d1 - id))))
					n = (size_t)(d2 - stored) + 1;
			}
		}
	}
	if (outlen == 0)
		return 0;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, stored, n);
	out[n] = '\0';
	return n;
}
