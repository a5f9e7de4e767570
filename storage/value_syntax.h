/*
 * Whether a value is valid for an attribute syntax (RFC 4517), for the
 * syntaxes directories use most: INTEGER, Boolean, DN, Generalized Time,
 * IA5 String, Directory String, OID, Telephone Number, Numeric String,
 * Printable String, Country String. Other syntaxes (octet strings, JPEG,
 * certificates...) accept any value.
 */
#ifndef MINIDIR_STORAGE_VALUE_SYNTAX_H
#define MINIDIR_STORAGE_VALUE_SYNTAX_H

#include <stddef.h>

/*
 * Checks v[0..len) against the syntax with OID syntax (NULL: any value).
 * Returns NULL when it is valid, else a static string naming what the value
 * should be ("an INTEGER", "valid UTF-8"...).
 */
const char *value_syntax_check(const char *syntax, const char *v, size_t len);

#endif
