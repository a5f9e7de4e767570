/*
 * The value of an LDIF "type:< URL" line (RFC 2849): the contents of a local file, read
 * only when the importer was told to (minidir-import --allow-url-values), and never more
 * than a cap. By default such a line is an error (ldif/ldif_parse.h): libldap, and so
 * slapadd, read any file the URL names, so an LDIF file from elsewhere could copy
 * /etc/shadow into an entry anyone may read, or make the importer read /dev/zero until
 * memory runs out.
 *
 * The URLs libldap's ldif_fetch_url reads, read the same way: "file:" (any case), an
 * optional "//", then a path with %XX escapes ("file:///etc/motd"). Other schemes, and
 * files that are not regular files (devices, FIFOs, directories), are refused.
 *
 * Thread rules: none (no state).
 */
#ifndef MINIDIR_LDIF_LDIF_URL_H
#define MINIDIR_LDIF_LDIF_URL_H

#include <stddef.h>

#include "protocol/buf.h"

/*
 * Appends the contents of the file url[0..len) names to out (owned by the caller), at
 * most max bytes. Returns 0; or -1 with why (NUL-terminated, whylen bytes) saying what is
 * wrong: not a file: URL, the file cannot be opened or read (strerror), it is not a
 * regular file, it holds more than max bytes, out of memory. out's length is then as it
 * was (its capacity may have grown).
 */
int ldif_url_read(const char *url, size_t len, size_t max, struct buf *out, char *why,
                  size_t whylen);

#endif
