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

#endif
