/*
 * Password schemes as stored values name them (RFC 2307 "{SCHEME}" prefixes), and the
 * cost class of a value: what the server's checks (password/password.h) cost for it.
 * The password room's lowest file, below storage so that the importer and a replica's
 * writes can count the classes a file holds as they store entries
 * (storage/db_passwords.h). Pure functions of the
 * bytes given; static tables; thread-safe.
 */
#ifndef MINIDIR_PASSWORD_PASSWORD_CLASS_H
#define MINIDIR_PASSWORD_PASSWORD_CLASS_H

#include <stdbool.h>
#include <stddef.h>

/* How a scheme's value is made and checked. */
enum password_kind {
	PASSWORD_CLEARTEXT, /* the password itself, no prefix */
	PASSWORD_DIGEST,    /* base64(digest(password || salt) || salt), salt empty if unsalted */
	PASSWORD_CRYPT,     /* crypt(3)'s string */
	PASSWORD_ARGON2,    /* libargon2's PHC string */
	/* PBKDF2-HMAC with the scheme's digest, as slapd's pw-pbkdf2 module and 389-ds's
	 * pwdchan plugin write it: "ITERATIONS$SALT$KEY", salt and derived key in adapted
	 * base64 ('.' for '+', no padding; '+' and padding also read) */
	PASSWORD_PBKDF2,
	/* 389-ds's own {PBKDF2_SHA256}: base64 of a 4-byte big-endian iteration count, a
	 * 64-byte salt and a 256-byte PBKDF2-HMAC-SHA256 key, 324 bytes in all */
	PASSWORD_PBKDF2_DS,
};

/* The iteration counts a PBKDF2 value may carry: checking takes about a second at the
 * top of the range on this project's machines, so a stored value cannot make one bind
 * cost more (a larger count never matches, as an unknown scheme). 389-ds writes 10,000
 * ({PBKDF2-SHA512}) and 8,192 or more ({PBKDF2_SHA256}). */
#define PASSWORD_PBKDF2_MIN_ITER 1
#define PASSWORD_PBKDF2_MAX_ITER 1000000
/* What password_hash writes: 389-ds's count for its default scheme, and salt bytes. */
#define PASSWORD_PBKDF2_ITER 10000
#define PASSWORD_PBKDF2_SALT 16

struct password_scheme {
	const char *name; /* with braces, as written before the value: "{SSHA}" */
	enum password_kind kind;
	const char *digest; /* PASSWORD_DIGEST, PASSWORD_PBKDF2*: OpenSSL's name of the digest */
	bool salted;        /* PASSWORD_DIGEST: a salt follows the digest */
};

/*
 * The one list of schemes: the prefixed ones password_check verifies and password_hash
 * writes, then {CLEARTEXT} (a value with no prefix), password_nschemes of them. Static.
 */
extern const struct password_scheme password_schemes[];
extern const size_t password_nschemes;

/* The scheme named name ("{SSHA}" or "SSHA", any case), or NULL. */
const struct password_scheme *password_scheme_find(const char *name);

/* True if stored's scheme is one password_check verifies (no "{...}" prefix: plaintext);
 * false for one no password can match ("{FOO}..."). Says nothing of the hash itself. */
bool password_scheme_known(const char *stored, size_t slen);

/*
 * The part of a stored value that decides how long checking a password against
 * it takes: the scheme, and for {CRYPT} the method and its cost parameters
 * ("{CRYPT}$6$rounds=5000$", "{CRYPT}$2b$12$", "{CRYPT}$y$j9T$"; not the salt or
 * the hash; for {ARGON2} the type, version and "m=,t=,p=" parameters; for the PBKDF2
 * schemes the iteration count: "{PBKDF2-SHA512}10000$", and for {PBKDF2_SHA256}, whose
 * count is inside its base64, "{PBKDF2_SHA256}" and the count in decimal). Values of
 * one class cost the same to check. Writes it, NUL-
 * terminated and truncated to outlen - 1 bytes, to out; returns its length.
 */
size_t password_cost_class(const char *stored, size_t slen, char *out, size_t outlen);

/* A stored value's scheme, by its "{SCHEME}" prefix: the {CLEARTEXT} entry when it has
 * none, NULL for an unknown one; *nlen is the prefix's length with braces (0: none). */
const struct password_scheme *password_classify(const char *stored, size_t slen, size_t *nlen);

#endif
