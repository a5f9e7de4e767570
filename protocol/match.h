/*
 * Matching rules: how two values of an attribute compare. Values are brought
 * to a normal form once (at import for indexes, at decode for filter
 * assertions) and then compared byte for byte.
 *
 * The rules of an attribute come from the schema (protocol/schema.h) when one
 * is loaded, else from a small built-in table (DN-valued, telephone, integer,
 * octet-string attributes) with caseIgnoreMatch for the rest. Case folding
 * covers ASCII letters; other UTF-8 is compared as is.
 */
#ifndef MINIDIR_PROTOCOL_MATCH_H
#define MINIDIR_PROTOCOL_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/match_rule.h"
#include "protocol/tlv.h"

/* The equality rule for the attribute named name[0..len) (any case). */
enum match_rule match_rule_for(const char *name, size_t len);

/*
 * Appends the normal form of in[0..len) under rule to out (not NUL-terminated).
 * Returns 0, or -1 when the value is not valid for the rule (e.g. a bad DN),
 * in which case out is left as it was.
 */
int match_normalize(enum match_rule rule, const char *in, size_t len, struct buf *out);

/* Orders two normal forms of rule: integers by value, the rest byte by byte. <0, 0, >0. */
int match_compare(enum match_rule rule, const void *a, size_t alen, const void *b, size_t blen);

/*
 * Whether the attribute description want ("description" or
 * "description;lang-en") selects the stored description have: the same type,
 * and every option of want among have's (so "description" also selects its
 * subtypes "description;lang-en", RFC 4512 2.5). Types compare case-insensitively.
 */
bool match_desc(const char *want, size_t wlen, const char *have, size_t hlen);

/* Lowercases ASCII letters of s[0..len) in place (attribute descriptions). */
void match_lower(char *s, size_t len);

#endif
