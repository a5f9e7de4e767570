/*
 * Matching rules: how two values of an attribute compare. Values are brought
 * to a normal form once (at import for indexes, at decode for filter
 * assertions) and then compared byte for byte, integers by value.
 *
 * The rules of an attribute come from the schema (schema.h) when one is
 * loaded, else from a small built-in table (DN-valued, telephone, integer,
 * octet-string attributes) with caseIgnoreMatch for the rest. Case folding is
 * Unicode simple case folding of UTF-8 (towlower in the C.UTF-8 locale); bytes
 * that are not valid UTF-8 are compared as they are (value.h has the details).
 *
 * Layering: this is the top of the matching code. It uses value.h (every rule
 * but distinguishedNameMatch) and dn.h (distinguishedNameMatch); dn.h itself
 * uses value.h, never this header. Callers outside protocol/ use this one.
 *
 * Thread rules: as value.h: any thread, at once, while the schema is neither
 * loaded nor freed. Nothing here keeps state between calls.
 */
#ifndef MINIDIR_PROTOCOL_MATCH_H
#define MINIDIR_PROTOCOL_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/match_rule.h"
#include "protocol/buf.h"

/*
 * The equality rule for the attribute named name[0..len) (any case, options
 * ignored; borrowed, need not be NUL-terminated). Same as value_rule_for
 * (value.h): the schema's rule, MATCH_NONE for a type the loaded schema does
 * not define, else the built-in table or MATCH_CASE_IGNORE.
 */
enum match_rule match_rule_for(const char *name, size_t len);

/*
 * Appends the normal form of in[0..len) under rule to out (not NUL-terminated):
 * MATCH_DN as dn_normalize's normal form (dn.h), every other rule as
 * value_normalize (value.h). in is borrowed, any bytes; out is the caller's.
 * Returns 0; -1 when the value is not valid for the rule (a bad DN or
 * INTEGER, an empty OID), for MATCH_NONE, or out of memory; out->len is then
 * as it was.
 */
int match_normalize(enum match_rule rule, const char *in, size_t len, struct buf *out);

/*
 * Orders two normal forms a[0..alen) and b[0..blen) of rule (borrowed; NULL
 * allowed with length 0): MATCH_INTEGER by numeric value, every other rule
 * byte by byte, a prefix first. Returns <0, 0 or >0. Pure.
 */
int match_compare(enum match_rule rule, const void *a, size_t alen, const void *b, size_t blen);

/*
 * Whether the attribute description want ("description" or
 * "description;lang-en") selects the stored description have: the same type,
 * and every option of want among have's (so "description" also selects its
 * subtypes "description;lang-en", RFC 4512 2.5); a language range option of want
 * ("lang-en-", RFC 3866 2.3) selects "lang-en" and every "lang-en-*" tag, "lang-"
 * every language tag. Types and options compare
 * case-insensitively (ASCII); names are not resolved through the schema (an
 * alias does not select its type). Both borrowed, not NUL-terminated.
 * Returns false when either is empty. Pure.
 */
bool match_desc(const char *want, size_t wlen, const char *have, size_t hlen);

/* The option half of match_desc: every option of want ("cn;lang-en") is among have's,
 * whatever the types. Both borrowed, not NUL-terminated. Pure. */
bool match_desc_options(const char *want, size_t wlen, const char *have, size_t hlen);

/* Lowercases the ASCII letters of s[0..len) in place (attribute descriptions). As value_lower. */
void match_lower(char *s, size_t len);

#endif
