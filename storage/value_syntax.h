/*
 * Whether a value is valid for an attribute syntax (RFC 4517), for the
 * syntaxes directories use most: INTEGER, Boolean, DN, Generalized Time,
 * IA5 String, Directory String, OID, Telephone Number, Numeric String,
 * Printable String, Country String. Other syntaxes (octet strings, JPEG,
 * certificates...) accept any value.
 */
#ifndef MINIDIR_STORAGE_VALUE_SYNTAX_H
#define MINIDIR_STORAGE_VALUE_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/*
 * Checks v[0..len) against the syntax with OID syntax (NULL: any value).
 * Returns NULL when it is valid, else a static string naming what the value
 * should be ("an INTEGER", "valid UTF-8"...).
 */
const char *value_syntax_check(const char *syntax, const char *v, size_t len);

/*
 * A Generalized Time value v[0..len) (RFC 4517 3.3.13, the form value_syntax_check
 * accepts) as seconds since the epoch, UTC, into *t:
 *   YYYYMMDDHH[MM[SS]][(.|,)FRACTION](Z|(+|-)HH[MM])
 * - minutes and seconds left out are 0; a second of 60 (a leap second) is the next
 *   minute's first; a day is checked against 1..31, not its month's length (timegm
 *   carries 20260231 into March);
 * - a fraction (one digit at least) is checked and dropped: the time is truncated to the
 *   last unit written (2026120612.5Z is 12:00, not 12:30);
 * - a differential +HH or +HHMM (hours 0..23, minutes 0..59) is taken off: 13:00+0100 is
 *   12:00Z; a value with no zone is not one;
 * - year 0000 is a time before year 1 (callers that give it a meaning, as slapd's
 *   000001010000Z "locked for good", test for it themselves).
 * Returns false (*t left alone) when v is not one.
 */
bool value_gentime(const char *v, size_t len, time_t *t);

#endif
