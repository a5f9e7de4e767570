/*
 * Values made for a password, in the schemes password.c verifies (its table,
 * password_schemes): what minidir-passwd prints, as slappasswd(8) would for the same
 * scheme. Each value is checked with password_check before it is returned, so what is
 * printed is what a bind accepts.
 */
#include <argon2.h>
#include <crypt.h>
#include <limits.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "password/b64.h"
#include "password/password.h"

/* Salt bytes of the salted digests: pw-sha2's 8 (slappasswd's {SSHA} takes 4). */
#define DIGEST_SALT 8
/* argon2: OpenLDAP's argon2 module's salt and hash lengths. */
#define ARGON2_SALT 16
#define ARGON2_HASH 32
/* slappasswd's crypt salt: 31 characters of crypt(3)'s alphabet at most. */
#define CRYPT_SALT_MAX 31

__attribute__((format(printf, 3, 4))) static char *fail(char *err, size_t errlen, const char *fmt,
                                                        ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return NULL;
}

static bool random_bytes(unsigned char *out, size_t n)
{
	return n <= (size_t)INT32_MAX && RAND_bytes(out, (int)n) == 1;
}

/* "{SCHEME}" then base64(digest(secret || salt) || salt). */
static char *hash_digest(const struct password_scheme *s, const char *secret, size_t len, char *err,
                         size_t errlen)
{
	unsigned char raw[EVP_MAX_MD_SIZE + DIGEST_SALT];
	const EVP_MD *type = EVP_get_digestbyname(s->digest);
	unsigned int mdlen = 0;
	size_t saltlen = s->salted ? DIGEST_SALT : 0;
	if (!type)
		return fail(err, errlen, "OpenSSL has no digest %s", s->digest);
	unsigned char *salt = raw + EVP_MD_get_size(type);
	if (saltlen && !random_bytes(salt, saltlen))
		return fail(err, errlen, "no random bytes for the salt (OpenSSL's RAND_bytes)");
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx && EVP_DigestInit_ex(ctx, type, NULL) && EVP_DigestUpdate(ctx, secret, len) &&
	          EVP_DigestUpdate(ctx, salt, saltlen) && EVP_DigestFinal_ex(ctx, raw, &mdlen);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return fail(err, errlen, "%s: the digest failed", s->name);
	size_t rawlen = mdlen + saltlen, nlen = strlen(s->name);
	char *out = malloc(nlen + 4 * ((rawlen + 2) / 3) + 1);
	if (!out)
		return fail(err, errlen, "out of memory");
	memcpy(out, s->name, nlen);
	b64_encode(raw, rawlen, out + nlen, false);
	return out;
}

/*
 * The salt slappasswd's -c FORMAT makes: FORMAT with its one "%s" or "%.Ns" replaced by
 * random characters of crypt(3)'s alphabet (N of them, at most 31) and "%%" by "%".
 * Parsed here rather than handed to snprintf: a format from the command line is text,
 * not code. Returns false with the reason in err.
 */
static bool salt_from_format(const char *fmt, char *out, size_t outlen, char *err, size_t errlen)
{
	static const char alphabet[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                               "abcdefghijklmnopqrstuvwxyz"; /* 64: a byte & 63 is fair */
	size_t o = 0;
	int conversions = 0;
	for (const char *p = fmt; *p; p++) {
		size_t n = 1;
		char buf[CRYPT_SALT_MAX];
		const char *piece = p;
		if (*p == '%' && p[1] == '%') {
			p++;
		} else if (*p == '%') {
			size_t want = CRYPT_SALT_MAX;
			const char *q = p + 1;
			if (*q == '.') {
				char *end;
				unsigned long v = strtoul(q + 1, &end, 10);
				if (end == q + 1 || v == 0) {
					fail(err, errlen,
					     "-c %s: expected a precision after \"%%.\"", fmt);
					return false;
				}
				want = v < CRYPT_SALT_MAX ? v : CRYPT_SALT_MAX;
				q = end;
			}
			if (*q != 's') {
				fail(err, errlen, "-c %s: only %%s, %%.Ns and %%%% may follow a %%",
				     fmt);
				return false;
			}
			if (++conversions > 1) {
				fail(err, errlen, "-c %s: more than one %%s", fmt);
				return false;
			}
			unsigned char r[CRYPT_SALT_MAX];
			if (!random_bytes(r, want)) {
				fail(err, errlen,
				     "no random bytes for the salt (OpenSSL's RAND_bytes)");
				return false;
			}
			for (size_t i = 0; i < want; i++)
				buf[i] = alphabet[r[i] & 63];
			piece = buf;
			n = want;
			p = q;
		}
		if (o + n >= outlen) {
			fail(err, errlen, "-c %s: the salt is too long", fmt);
			return false;
		}
		memcpy(out + o, piece, n);
		o += n;
	}
	out[o] = '\0';
	if (conversions == 0) {
		fail(err, errlen, "-c %s: no %%s, so every value would have the same salt", fmt);
		return false;
	}
	return true;
}

/* "{CRYPT}" then crypt(3) of the secret with a salt from o's format or crypt_gensalt. */
static char *hash_crypt(const char *secret, size_t len, const struct password_hash_opts *o,
                        char *err, size_t errlen)
{
	if (memchr(secret, '\0', len))
		return fail(err, errlen,
		            "{CRYPT}: crypt(3) cannot hash a password with a NUL byte");
	char salt[CRYPT_GENSALT_OUTPUT_SIZE + 256];
	if (o->crypt_salt_format) {
		if (!salt_from_format(o->crypt_salt_format, salt, sizeof(salt), err, errlen))
			return NULL;
	} else if (!crypt_gensalt_rn(NULL, 0, NULL, 0, salt, (int)sizeof(salt))) {
		return fail(err, errlen, "{CRYPT}: crypt_gensalt found no default method");
	}
	char *pw = strndup(secret, len);
	struct crypt_data *data = calloc(1, sizeof(*data));
	const char *h = pw && data ? crypt_r(pw, salt, data) : NULL;
	char *out = NULL;
	if (!pw || !data)
		fail(err, errlen, "out of memory");
	else if (!h || h[0] == '*')
		fail(err, errlen, "{CRYPT}: crypt(3) refuses the salt \"%s\" (see crypt(5))", salt);
	else if ((out = malloc(strlen("{CRYPT}") + strlen(h) + 1)))
		strcat(strcpy(out, "{CRYPT}"), h);
	else
		fail(err, errlen, "out of memory");
	if (pw)
		explicit_bzero(pw, len);
	free(pw);
	if (data)
		explicit_bzero(data, sizeof(*data));
	free(data);
	return out;
}

/* "{ARGON2}" then argon2id's PHC string, "$argon2id$v=19$m=...,t=...,p=...$SALT$HASH". */
static char *hash_argon2(const char *secret, size_t len, const struct password_hash_opts *o,
                         char *err, size_t errlen)
{
	uint32_t t = o->argon2_t ? o->argon2_t : PASSWORD_ARGON2_T;
	uint32_t m = o->argon2_m_kib ? o->argon2_m_kib : PASSWORD_ARGON2_M_KIB;
	uint32_t p = o->argon2_p ? o->argon2_p : PASSWORD_ARGON2_P;
	unsigned char salt[ARGON2_SALT];
	if (!random_bytes(salt, sizeof(salt)))
		return fail(err, errlen, "no random bytes for the salt (OpenSSL's RAND_bytes)");
	size_t enclen = argon2_encodedlen(t, m, p, ARGON2_SALT, ARGON2_HASH, Argon2_id);
	char *out = malloc(strlen("{ARGON2}") + enclen);
	if (!out)
		return fail(err, errlen, "out of memory");
	strcpy(out, "{ARGON2}");
	int rc = argon2id_hash_encoded(t, m, p, secret, len, salt, sizeof(salt), ARGON2_HASH,
	                               out + strlen("{ARGON2}"), enclen);
	if (rc != ARGON2_OK) {
		free(out);
		return fail(err, errlen, "{ARGON2}: t=%u m=%u p=%u: %s", (unsigned)t, (unsigned)m,
		            (unsigned)p, argon2_error_message(rc));
	}
	return out;
}

/* {PBKDF2-SHA512} and the other "ITERATIONS$SALT$KEY" schemes, or 389-ds's
 * {PBKDF2_SHA256}: PASSWORD_PBKDF2_ITER iterations (389-ds's count for its default
 * scheme), a new salt (16 bytes; 64 in 389-ds's own form, as it writes). */
static char *hash_pbkdf2(const struct password_scheme *s, const char *secret, size_t len, char *err,
                         size_t errlen)
{
	const EVP_MD *md = EVP_get_digestbyname(s->digest);
	bool ds = s->kind == PASSWORD_PBKDF2_DS;
	/* 389-ds's form: the count, the salt, the key, base64'd together */
	unsigned char raw[4 + 64 + 256];
	size_t saltlen = ds ? 64 : PASSWORD_PBKDF2_SALT;
	int keylen = ds ? 256 : md ? EVP_MD_get_size(md) : 0;
	unsigned char *salt = raw + 4, *key = raw + 4 + saltlen;
	if (!md || keylen <= 0 || len > INT_MAX)
		return fail(err, errlen, "%s: OpenSSL has no digest %s", s->name, s->digest);
	if (!random_bytes(salt, saltlen))
		return fail(err, errlen, "no random bytes for the salt (OpenSSL's RAND_bytes)");
	if (PKCS5_PBKDF2_HMAC(secret, (int)len, salt, (int)saltlen, PASSWORD_PBKDF2_ITER, md,
	                      keylen, key) != 1)
		return fail(err, errlen, "%s: PBKDF2 failed", s->name);
	char *out = malloc(strlen(s->name) + 16 + 2 * 4 * (sizeof(raw) + 2) / 3 + 4);
	if (!out)
		return fail(err, errlen, "out of memory");
	size_t at = (size_t)sprintf(out, "%s", s->name);
	if (ds) {
		raw[0] = PASSWORD_PBKDF2_ITER >> 24 & 0xff,
		raw[1] = PASSWORD_PBKDF2_ITER >> 16 & 0xff;
		raw[2] = PASSWORD_PBKDF2_ITER >> 8 & 0xff, raw[3] = PASSWORD_PBKDF2_ITER & 0xff;
		b64_encode(raw, sizeof(raw), out + at, false);
		return out;
	}
	at += (size_t)sprintf(out + at, "%d$", PASSWORD_PBKDF2_ITER);
	at += b64_encode(salt, saltlen, out + at, true);
	out[at++] = '$';
	b64_encode(key, (size_t)keylen, out + at, true);
	return out;
}

/* The password itself: refused when a bind would read it otherwise. */
static char *hash_cleartext(const char *secret, size_t len, char *err, size_t errlen)
{
	if (secret[0] == '{' && memchr(secret, '}', len))
		return fail(err, errlen,
		            "{CLEARTEXT}: a password starting with \"{...}\" would be read as a "
		            "scheme");
	if (memchr(secret, '\n', len) || memchr(secret, '\r', len) || memchr(secret, '\0', len))
		return fail(
		    err, errlen,
		    "{CLEARTEXT}: the password holds a line break or NUL byte; it cannot be "
		    "written as one line");
	char *out = strndup(secret, len);
	return out ? out : fail(err, errlen, "out of memory");
}

char *password_hash(const struct password_scheme *s, const char *secret, size_t len,
                    const struct password_hash_opts *o, char *err, size_t errlen)
{
	static const struct password_hash_opts defaults;
	if (!o)
		o = &defaults;
	if (len == 0)
		return fail(err, errlen, "the password is empty: no bind can use it");
	char *out = NULL;
	switch (s->kind) {
	case PASSWORD_DIGEST:
		out = hash_digest(s, secret, len, err, errlen);
		break;
	case PASSWORD_CRYPT:
		out = hash_crypt(secret, len, o, err, errlen);
		break;
	case PASSWORD_ARGON2:
		out = hash_argon2(secret, len, o, err, errlen);
		break;
	case PASSWORD_CLEARTEXT:
		out = hash_cleartext(secret, len, err, errlen);
		break;
	case PASSWORD_PBKDF2:
	case PASSWORD_PBKDF2_DS:
		out = hash_pbkdf2(s, secret, len, err, errlen);
		break;
	}
	if (out && !password_check(out, strlen(out), secret, len)) {
		free(out);
		return fail(err, errlen, "%s: the value made does not verify (a bug)", s->name);
	}
	return out;
}
