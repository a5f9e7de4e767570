/*
 * base64 as password values carry it (RFC 4648's alphabet, through OpenSSL's block
 * coder): the digest schemes' padded form, and the adapted form of the PBKDF2 schemes
 * ("ITERATIONS$SALT$KEY": '.' for '+', no padding). Private to password/. Pure functions
 * of the bytes given; thread-safe.
 */
#ifndef MINIDIR_PASSWORD_B64_H
#define MINIDIR_PASSWORD_B64_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Decodes in[0..len) into out (cap bytes). Strict (adapted false): the standard
 * alphabet, padded to a multiple of 4 characters. Adapted: '.' read as '+', padding
 * optional. Returns the bytes decoded, or -1 when in is empty, not base64 of that form,
 * or would not fit in cap.
 */
int b64_decode(const char *in, size_t len, unsigned char *out, size_t cap, bool adapted);

/*
 * Encodes raw[0..n) at out, which has room for 4 * ((n + 2) / 3) + 1 bytes, NUL-terminated;
 * adapted: '.' for '+' and no padding. Returns the length written (no NUL).
 */
size_t b64_encode(const unsigned char *raw, size_t n, char *out, bool adapted);

#endif
