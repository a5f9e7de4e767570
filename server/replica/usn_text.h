/*
 * The text forms uSNChanged polling (usn.h) reads and writes: its cookie, as stored in the
 * replica's file, and the ";range=LO-HI" option a DC puts on a value list it cut at its
 * MaxValRange. Pure functions: no state, no allocation; any thread.
 */
#ifndef MINIDIR_SERVER_REPLICA_USN_TEXT_H
#define MINIDIR_SERVER_REPLICA_USN_TEXT_H

#include <stddef.h>

/*
 * The cookie c[0..len) (not a C string), "usn=N;invocationId=GUID" (GUID may be empty: a
 * DC whose invocationId the account could not read): N into *usn, GUID into inv (cap
 * bytes with the NUL). 0, or -1 when it is not one (nothing else said).
 */
int usn_cookie_parse(const char *c, size_t len, long long *usn, char *inv, size_t cap);

/* The cookie of usn and inv into out (cap bytes with the NUL): its length, or -1 when it
 * does not fit. */
int usn_cookie_format(long long usn, const char *inv, char *out, size_t cap);

/*
 * The ";range=LO-HI" option of attribute description t (a C string; the option's name in
 * any case): 1 with *hi set when HI is a number (the DC has more past it), 0 when HI is
 * "*" (the last window), -1 when t has no such option; *blen (when not -1) the length of
 * t before it.
 */
int usn_range_end(const char *t, size_t *blen, long long *hi);

#endif
