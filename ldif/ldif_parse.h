/*
 * One LDIF record (RFC 2849, as ldif/ldif_reader.h frames it) checked strictly and
 * split into its DN and attributes in a single scan: what libldap's
 * ldap_parse_ldif_record(LDIF_DEFAULT_ADD | LDIF_NO_CONTROLS) gives for an entry, byte
 * for byte, without reading the text three times (framing, checking, parsing) and with
 * no allocation per record once the buffers have grown.
 *
 * The checks: libldap takes some mistakes silently or with only a warning on stderr: a
 * record whose first line is not "dn:" is dropped, a "dn:" line inside a record (a
 * missing blank line) becomes an attribute, a "control:" line is dropped, base64 with bad
 * characters or padding decodes to garbage, a version other than 1 is ignored. Each of
 * these is an error here, at the exact line, as are NUL bytes, a line without ':', a
 * character that cannot stand in an attribute description, and a file that ends in the
 * middle of a folded or base64 value.
 *
 * What libldap would parse: the values are its values (FILL and any leading white space
 * dropped, a CR anywhere in a plain value dropped, folded lines joined, base64 decoded),
 * the attributes its attributes: each type once, in order of first appearance, spelled as
 * first written, with every value of that type (compared case-insensitively, options
 * included) in file order. The few records it handles otherwise are left to it
 * (LDIF_PARSE_LIBLDAP): a "changetype:" line, a folded attribute description, a value
 * whose ':' or '<' after the FILL libldap would read as its first character.
 *
 * A "type:< URL" value (libldap reads the file, whatever it is and however large) is an
 * error at its line unless e->url_max is set; then the file is read here
 * (ldif/ldif_url.h), at most url_max bytes for the record's URL values together. A
 * URL value in a record left to libldap, or for the DN, is always an error.
 *
 * Thread rules: a struct ldif_entry belongs to one thread at a time.
 */
#ifndef MINIDIR_LDIF_LDIF_PARSE_H
#define MINIDIR_LDIF_LDIF_PARSE_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>

#include "ldif/ldif_entry.h"
#include "protocol/buf.h"

enum ldif_parse_result {
	LDIF_PARSE_ERROR = -1,  /* *line and why say what is wrong */
	LDIF_PARSE_NONE = 0,    /* no entry: only "version: 1" or comments */
	LDIF_PARSE_ENTRY = 1,   /* e->dn and e->mods hold the entry */
	LDIF_PARSE_LIBLDAP = 2, /* checked, but for ldap_parse_ldif_record to parse */
};

/*
 * Checks and parses text[0..len) (borrowed; not modified; it may end without a LF when
 * cut is set: its last line is the file's last and lacks one), whose first line is the
 * physical line first_line; first is true for the file's first record (which may be, or
 * start with, "version: 1"). e->dn and e->mods point into e's buffers, valid until the
 * next call. On LDIF_PARSE_ERROR, *line is the physical line at fault and why
 * (NUL-terminated, whylen bytes) says what is wrong; an error is the first of the
 * record's problems in file order, as a scan line by line finds them. Out of memory is
 * an error too ("out of memory").
 */
enum ldif_parse_result ldif_parse_record(struct ldif_entry *e, const char *text, size_t len,
                                         unsigned long first_line, bool cut, bool first,
                                         unsigned long *line, char *why, size_t whylen);

/*
 * For LDIF_PARSE_LIBLDAP: appends text[0..len) to out as ldap_parse_ldif_record takes it
 * (each line ending in LF alone, then a NUL). Returns 0 or -1 (out of memory).
 */
int ldif_record_text(const char *text, size_t len, struct buf *out);

/*
 * The physical line of the n-th line (from 0) of a record's text that gives an
 * attribute of type `type` (compared case-insensitively, options included, as
 * written before the colon), or 0 when there is none. text is what ldif_record_text
 * made, before ldap_parse_ldif_record (which writes into it), and first_line its first
 * physical line.
 */
unsigned long ldif_record_type_line(const char *text, unsigned long first_line, const char *type,
                                    int n);

#endif
