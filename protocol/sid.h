/*
 * Windows security identifiers ([MS-DTYP] 2.4.2): the binary form Active Directory stores
 * in objectSid (revision, sub-authority count, 48-bit identifier authority big-endian,
 * then each sub-authority as 32 bits little-endian) and the string form
 * "S-1-5-21-1004336348-1177238915-682003330-512" AD also takes in a filter on a SID
 * attribute, as SSSD's AD schema sends it. Pure functions; no state.
 */
#ifndef MINIDIR_PROTOCOL_SID_H
#define MINIDIR_PROTOCOL_SID_H

#include <stdbool.h>
#include <stddef.h>

/* The most sub-authorities a SID has (the count is one byte, Windows uses at most 15). */
#define SID_MAX_SUBAUTH 15
/* Bytes of the longest binary SID. */
#define SID_MAX_BYTES (8 + 4 * SID_MAX_SUBAUTH)

/*
 * The binary form of the string s[0..len) ("S-" revision "-" authority, then up to
 * SID_MAX_SUBAUTH "-" sub-authorities, each a decimal number in range; "S" in either case)
 * into out (SID_MAX_BYTES). Returns the bytes written, or -1 when s is not one.
 */
int sid_from_string(const char *s, size_t len, unsigned char *out);

/* Whether attr[0..len) names one of AD's SID attributes whose filters take the string
 * form (objectSid, sIDHistory, securityIdentifier, tokenGroups), compared without case. */
bool sid_attribute(const char *attr, size_t len);

#endif
