/*
 * Strict checks of one LDIF record (the text ldif_reader gives) before
 * libldap's ldap_parse_ldif_record reads it. That parser takes some mistakes
 * silently or with only a warning on stderr: a record whose first line is
 * not "dn:" is dropped, a "dn:" line inside a record (a missing blank line)
 * becomes an attribute, a "control:" line is dropped, base64 with bad
 * characters or padding decodes to garbage, a version other than 1 is
 * ignored. Each of these is an error here, at the exact line.
 */
#ifndef MINIDIR_STORAGE_LDIF_CHECK_H
#define MINIDIR_STORAGE_LDIF_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/ldif_reader.h"

/*
 * Checks rec; first is true for the file's first record (which may be, or
 * start with, "version: 1"). Returns 0 with *dn_line set to the line of the
 * record's "dn:" (0 when the record holds no entry: only a version line), or
 * -1 with *line set to the physical line at fault and why (NUL-terminated,
 * whylen bytes) saying what is wrong. rec is not modified.
 */
int ldif_check_record(const struct ldif_record *rec, bool first, unsigned long *dn_line,
                      unsigned long *line, char *why, size_t whylen);

#endif
