/*
 * Password checking for simple binds against userPassword or rootpw values
 * (RFC 2307 "{SCHEME}" syntax): plaintext, {MD5}, {SMD5}, {SHA}, {SSHA}, {SHA256},
 * {SSHA256}, {SHA512}, {SSHA512} (OpenSSL), {CRYPT} (crypt(3): $6$, $y$, ...) and
 * {ARGON2} (libargon2: the "$argon2id$v=19$m=...,t=...,p=...$salt$hash" form of
 * OpenLDAP's argon2 module and slappasswd). Comparisons take constant time in the
 * digest. Checking costs what the stored value's parameters say: an {ARGON2} value
 * with m=1048576 allocates 1 GiB for each check (the admin who stores it chooses).
 * The schemes' table and the cost classes are password/password_class.h's (the
 * importer and the replica's writes class values too). Thread-safe; nothing is kept
 * between calls. password_hash.c makes values of the same schemes, from the same table
 * (password_schemes), for minidir-passwd. The password room (password/) holds the
 * schemes and nothing of the server: OpenSSL, crypt(3) and libargon2 below it, storage,
 * server/ops (binds) and tools/minidir_passwd.c above it.
 */
#ifndef MINIDIR_PASSWORD_PASSWORD_H
#define MINIDIR_PASSWORD_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "password/password_class.h"

/* True if the password given[0..glen) matches the stored value stored[0..slen).
 * False for an empty password, an unknown scheme and a malformed hash. */
bool password_check(const char *stored, size_t slen, const char *given, size_t glen);

/* --- password_hash.c: values made for a password (minidir-passwd) --------------------- */

/* What password_hash may be told beyond the scheme; zero for the defaults. */
struct password_hash_opts {
	/* {CRYPT}: slappasswd's -c, a salt format with one "%s" or "%.Ns" (N random
	 * characters of [./0-9A-Za-z], at most 31 as slappasswd) and "%%"; NULL:
	 * crypt_gensalt's default method (yescrypt on Debian 12). */
	const char *crypt_salt_format;
	/* {ARGON2}: argon2id's costs; 0: slappasswd's argon2 module's (t=3, m=4096 KiB, p=1) */
	uint32_t argon2_t, argon2_m_kib, argon2_p;
};

#define PASSWORD_ARGON2_T 3
#define PASSWORD_ARGON2_M_KIB 4096
#define PASSWORD_ARGON2_P 1

/*
 * A value of scheme s for the password secret[0..len): "{SSHA}..." (for {CLEARTEXT}
 * the password itself), with a fresh salt from OpenSSL's CSPRNG (RAND_bytes; crypt(3)'s
 * own for crypt_gensalt), checked with password_check before it is returned. Returns it
 * NUL-terminated in malloc'd memory the caller frees, or NULL with the reason in
 * err[0..errlen): an empty password (no bind can use one), a NUL byte where the scheme
 * cannot hold one ({CRYPT}), a cleartext value that would read as a scheme or span
 * lines, a bad salt format or one crypt(3) refuses, argon2 costs libargon2 refuses,
 * no random bytes, out of memory. o may be NULL (the defaults).
 */
char *password_hash(const struct password_scheme *s, const char *secret, size_t len,
                    const struct password_hash_opts *o, char *err, size_t errlen);

#endif
