/* Password schemes and their cost classes, read from stored values (password_class.h). */
#include "password/password_class.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "password/b64.h"

/* {CLEARTEXT} last: password_check reads a value without a prefix as cleartext, and
 * classify looks only at the prefixed schemes before it. */
const struct password_scheme password_schemes[] = {
    {"{SSHA}", PASSWORD_DIGEST, "SHA1", true},
    {"{SHA}", PASSWORD_DIGEST, "SHA1", false},
    {"{SSHA256}", PASSWORD_DIGEST, "SHA256", true},
    {"{SHA256}", PASSWORD_DIGEST, "SHA256", false},
    {"{SSHA512}", PASSWORD_DIGEST, "SHA512", true},
    {"{SHA512}", PASSWORD_DIGEST, "SHA512", false},
    {"{SMD5}", PASSWORD_DIGEST, "MD5", true},
    {"{MD5}", PASSWORD_DIGEST, "MD5", false},
    {"{CRYPT}", PASSWORD_CRYPT, NULL, false},
    {"{ARGON2}", PASSWORD_ARGON2, NULL, false},
    {"{PBKDF2-SHA512}", PASSWORD_PBKDF2, "SHA512", true},
    {"{PBKDF2-SHA256}", PASSWORD_PBKDF2, "SHA256", true},
    {"{PBKDF2-SHA1}", PASSWORD_PBKDF2, "SHA1", true},
    {"{PBKDF2}", PASSWORD_PBKDF2, "SHA1", true},
    {"{PBKDF2_SHA256}", PASSWORD_PBKDF2_DS, "SHA256", true},
    {"{CLEARTEXT}", PASSWORD_CLEARTEXT, NULL, false},
};
const size_t password_nschemes = sizeof(password_schemes) / sizeof(password_schemes[0]);

const struct password_scheme *password_scheme_find(const char *name)
{
	size_t len = strlen(name);
	bool braces = len >= 2 && name[0] == '{' && name[len - 1] == '}';
	for (size_t i = 0; i < password_nschemes; i++) {
		const char *n = password_schemes[i].name;
		size_t nlen = strlen(n);
		if (braces ? nlen == len && strcasecmp(n, name) == 0
		           : nlen == len + 2 && strncasecmp(n + 1, name, len) == 0)
			return &password_schemes[i];
	}
	return NULL;
}

const struct password_scheme *password_classify(const char *stored, size_t slen, size_t *nlen)
{
	const char *close = slen && stored[0] == '{' ? memchr(stored, '}', slen) : NULL;
	*nlen = 0;
	if (!close)
		return &password_schemes[password_nschemes - 1];
	size_t n = *nlen = (size_t)(close - stored) + 1;
	for (size_t i = 0; i + 1 < password_nschemes; i++)
		if (strlen(password_schemes[i].name) == n &&
		    strncasecmp(stored, password_schemes[i].name, n) == 0)
			return &password_schemes[i];
	return NULL;
}

bool password_scheme_known(const char *stored, size_t slen)
{
	size_t n;
	return password_classify(stored, slen, &n) != NULL;
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

/*
 * Where the cost parameters of an {ARGON2} value end: the PHC fields "$argon2id",
 * "$v=19" (absent in version 1.0) and "$m=...,t=...,p=..." from from on, through the
 * "$" after the m= field. Without one, from (the scheme alone).
 */
static size_t argon2_params_end(const char *stored, size_t slen, size_t from)
{
	const char *end = stored + slen;
	for (const char *f = stored + from; f < end && *f == '$';) {
		const char *next = memchr(f + 1, '$', (size_t)(end - f - 1));
		if (!next)
			break;
		if (next - f > 2 && f[1] == 'm' && f[2] == '=')
			return (size_t)(next - stored) + 1;
		f = next;
	}
	return from;
}

/* Where the method and cost parameters of a {CRYPT} value end ("$id$", then the next
 * field too when it holds parameters), from from on; from when it has none (DES). */
static size_t crypt_params_end(const char *stored, size_t slen, size_t from)
{
	if (from >= slen || stored[from] != '$')
		return from;
	const char *id = stored + from + 1, *end = stored + slen;
	const char *d1 = memchr(id, '$', (size_t)(end - id));
	if (!d1)
		return from;
	const char *d2 = memchr(d1 + 1, '$', (size_t)(end - d1 - 1));
	bool rounds = (size_t)(end - d1 - 1) > 7 && memcmp(d1 + 1, "rounds=", 7) == 0;
	if (d2 && (rounds || crypt_has_params(id, (size_t)(d1 - id))))
		return (size_t)(d2 - stored) + 1;
	return (size_t)(d1 - stored) + 1;
}

/* The iteration count of a {PBKDF2_SHA256} value, from its first 8 base64 characters (the
 * count's 4 bytes, big-endian, first); 0 when they are not base64. */
static unsigned long pbkdf2_ds_iterations(const char *b64, size_t len)
{
	unsigned char raw[6];
	if (len < 8 || b64_decode(b64, 8, raw, sizeof(raw), false) < 4)
		return 0;
	return (unsigned long)raw[0] << 24 | (unsigned long)raw[1] << 16 |
	       (unsigned long)raw[2] << 8 | raw[3];
}

size_t password_cost_class(const char *stored, size_t slen, char *out, size_t outlen)
{
	size_t n;
	const struct password_scheme *s = password_classify(stored, slen, &n);
	if (s && s->kind == PASSWORD_PBKDF2_DS && outlen > 0) {
		int w = snprintf(out, outlen, "%s%lu", s->name,
		                 pbkdf2_ds_iterations(stored + n, slen - n));
		return w < 0 ? 0 : (size_t)w < outlen ? (size_t)w : outlen - 1;
	}
	if (s && s->kind == PASSWORD_PBKDF2) {
		const char *d = memchr(stored + n, '$', slen - n);
		n = d ? (size_t)(d - stored) + 1 : n;
	} else if (s && s->kind == PASSWORD_CRYPT)
		n = crypt_params_end(stored, slen, n);
	else if (s && s->kind == PASSWORD_ARGON2)
		n = argon2_params_end(stored, slen, n);
	if (outlen == 0)
		return 0;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, stored, n);
	out[n] = '\0';
	return n;
}
