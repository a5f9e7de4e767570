/*
 * Normal forms of attribute values under every matching rule but
 * distinguishedNameMatch, and the equality rule of an attribute.
 *
 * Sits between the schema (below: attribute types, rule names) and dn.h
 * (above: an RDN's values take the normal form of their type's equality rule
 * here). match.h, above dn.h, adds distinguishedNameMatch and is what code
 * outside protocol/ calls; this header is for dn.c and match.c.
 *
 * Thread rules: every function may run in any thread at once, provided the
 * schema is not being loaded or freed (schema.h). The first case folding of a
 * non-ASCII character opens the C.UTF-8 locale once (pthread_once); without
 * that locale non-ASCII characters are kept as they are.
 */
#ifndef MINIDIR_PROTOCOL_VALUE_H
#define MINIDIR_PROTOCOL_VALUE_H

#include <stddef.h>

#include "protocol/match_rule.h"
#include "protocol/buf.h"

/*
 * The equality rule of the attribute description name[0..len) (any case;
 * options such as ";lang-en" ignored).
 *
 * name: borrowed, need not be NUL-terminated.
 * Returns: with a schema loaded, the type's EQUALITY rule (inherited through
 * SUP), MATCH_NONE for a type it does not define or one without an equality
 * rule; without a schema, a built-in table of the non-caseIgnore attributes of
 * core/cosine/inetorgperson/nis (member: MATCH_DN, uidNumber: MATCH_INTEGER,
 * ...) and MATCH_CASE_IGNORE for any other name.
 */
enum match_rule value_rule_for(const char *name, size_t len);

/*
 * Appends the normal form of in[0..len) under rule to out (not NUL-terminated):
 *   MATCH_CASE_IGNORE  leading/trailing spaces dropped, inner runs of spaces
 *                      folded to one, case folded (ASCII, and UTF-8 through
 *                      towlower in C.UTF-8; invalid UTF-8, or a character whose
 *                      lower case is longer, is kept byte for byte)
 *   MATCH_CASE_EXACT   spaces as above, case kept
 *   MATCH_TELEPHONE    spaces and hyphens dropped, case folded
 *   MATCH_NUMERIC      spaces dropped
 *   MATCH_INTEGER      surrounding spaces dropped; must then be "0" or an
 *                      optional "-" and digits without a leading zero
 *   MATCH_OCTET        the bytes as they are
 *   MATCH_OID          surrounding spaces dropped, a schema name replaced by
 *                      its OID (object classes first), else lowercased; not empty
 *   MATCH_OID_FIRST    the first component of "( OID ..." under MATCH_OID
 * The normal form is never longer than the input.
 *
 * in: borrowed, any bytes (NUL included). out: the caller's, grown as needed.
 * Returns: 0; -1 when the value is not valid for the rule (a bad INTEGER, an
 * empty OID), for MATCH_DN (use match_normalize or dn_normalize), MATCH_NONE,
 * or out of memory. On -1 out->len is as it was (out->data may have grown).
 */
int value_normalize(enum match_rule rule, const char *in, size_t len, struct buf *out);

/* Lowercases the ASCII letters of s[0..len) in place (attribute types, names); other bytes kept. */
void value_lower(char *s, size_t len);

#endif
