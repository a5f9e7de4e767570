/*
 * Password checking for simple binds against userPassword or rootpw values
 * (RFC 2307 "{SCHEME}" syntax): plaintext, {MD5}, {SMD5}, {SHA}, {SSHA}, {SHA256},
 * {SSHA256}, {SHA512}, {SSHA512} (OpenSSL), {CRYPT} (crypt(3): $6$, $y$, ...) and
 * {ARGON2} (libargon2: the "$argon2id$v=19$m=...,t=...,p=...$salt$hash" form of
 * OpenLDAP's argon2 module and slappasswd). Comparisons take constant time in the
 * digest. Checking costs what the stored value's parameters say: an {ARGON2} value
 * with m=1048576 allocates 1 GiB for each check (the admin who stores it chooses).
 * Thread-safe; nothing is kept between calls.
 */
#ifndef MINIDIR_SERVER_OPS_PASSWORD_H
#define MINIDIR_SERVER_OPS_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

/* True if the password given[0..glen) matches the stored value stored[0..slen).
 * False for an empty password, an unknown scheme and a malformed hash. */
bool password_check(const char *stored, size_t slen, const char *given, size_t glen);

/* True if stored's scheme is one password_check verifies (no "{...}" prefix: plaintext);
 * false for one no password can match ("{FOO}..."). Says nothing of the hash itself. */
bool password_scheme_known(const char *stored, size_t slen);

/*
 * The part of a stored value that decides how long checking a password against
 * it takes: the scheme, and for {CRYPT} the method and its cost parameters
 * ("{CRYPT}$6$rounds=5000$", "{CRYPT}$2b$12$", "{CRYPT}$y$j9T$"; not the salt or
 * the hash; for {ARGON2} the type, version and "m=,t=,p=" parameters). Values of
 * one class cost the same to check. Writes it, NUL-
 * terminated and truncated to outlen - 1 bytes, to out; returns its length.
 */
size_t password_cost_class(const char *stored, size_t slen, char *out, size_t outlen);

#endif
