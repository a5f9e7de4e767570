/*
 * Password checking for simple binds against userPassword or rootpw values
 * (RFC 2307 "{SCHEME}" syntax): plaintext, {MD5}, {SMD5}, {SHA}, {SSHA}, {SHA256},
 * {SSHA256}, {SHA512}, {SSHA512} (OpenSSL) and {CRYPT} (crypt(3): $6$, $y$,
 * ...). Comparisons take constant time in the digest.
 */
#ifndef MINIDIR_SERVER_PASSWORD_H
#define MINIDIR_SERVER_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

/* True if the password given[0..glen) matches the stored value stored[0..slen). */
bool password_check(const char *stored, size_t slen, const char *given, size_t glen);

/*
 * The part of a stored value that decides how long checking a password against
 * it takes: the scheme, and for {CRYPT} the method and its cost parameters
 * ("{CRYPT}$6$rounds=5000$", "{CRYPT}$2b$12$", "{CRYPT}$y$j9T$"; not the salt or
 * the hash). Values of one class cost the same to check. Writes it, NUL-
 * terminated and truncated to outlen - 1 bytes, to out; returns its length.
 */
size_t password_cost_class(const char *stored, size_t slen, char *out, size_t outlen);

#endif
