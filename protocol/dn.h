/*
 * Distinguished names: parsing with libldap (ldap_bv2dn, LDAPv3 syntax), the
 * normal form, and the reversed key that storage indexes DNs by.
 *
 * Normal form: RFC 4514 string (ldap_dn2bv, LDAPv3) in which each AVA has
 *   - its type as the schema's primary name, lowercased ("2.5.4.11" and
 *     "organizationalUnitName" become "ou"); without a loaded schema the type
 *     as given, lowercased; with one, a type it does not define makes the DN
 *     invalid;
 *   - its value in the normal form of the type's equality rule (value.h:
 *     caseIgnore for cn, ou, dc..., telephoneNumber, integer, ...), with
 *     caseIgnoreMatch standing in where that rule is distinguishedNameMatch or
 *     none; a value in #hex (BER) form is kept as given.
 * The AVAs of a multi-valued RDN are then sorted by their normalized type,
 * byte by byte (a type that is a prefix of another first), and AVAs of one type
 * by normalized value, the same way: "CN=b+sn=x+cn=A" becomes "cn=a+cn=b+sn=x".
 * So two spellings of one DN give the same bytes.
 *
 * Reversed key: the normalized RDNs from the root down, each followed by a NUL
 * byte ("dc=com\0dc=example\0ou=people\0"). Every entry below a base has the
 * base's key as a prefix, so a subtree is one range scan. "" is the root DSE.
 *
 * Layering: uses schema.h and value.h; match.h (distinguishedNameMatch) uses
 * this header, never the other way round.
 *
 * Thread rules: any thread, at once, while the schema is neither loaded nor
 * freed (schema.h); no state kept between calls.
 */
#ifndef MINIDIR_PROTOCOL_DN_H
#define MINIDIR_PROTOCOL_DN_H

#include <stddef.h>

#include "protocol/buf.h"

/*
 * Normalizes dn[0..len) (borrowed, need not be NUL-terminated; copied before
 * libldap parses it). Appends the normal form to ndn (if not NULL, no NUL
 * terminator) and the reversed key to key (if not NULL); both are the
 * caller's. len 0 is the root DSE: nothing appended, returns 0.
 * Returns 0; -1 if dn is not a valid DN (libldap rejects it, it holds a NUL
 * byte, a type the loaded schema does not define, a value invalid for its
 * rule such as a bad INTEGER) or memory ran out. On -1 ndn->len and key->len
 * are as they were.
 */
int dn_normalize(const char *dn, size_t len, struct buf *ndn, struct buf *key);

/*
 * Appends to ndn (the caller's) the normal form of the DN whose reversed key is
 * key[0..len) (a key dn_normalize made, borrowed): its RDNs in the other order, joined by
 * ',', the bytes dn_normalize's ndn would hold, without libldap. Returns 0, or -1 out of
 * memory (ndn->len as it was).
 */
int dn_key_normal(const unsigned char *key, size_t len, struct buf *ndn);

/*
 * Length of the parent's reversed key within key[0..len) (a key dn_normalize
 * made, borrowed): key[0..result) is the parent's key. 0 for a top entry or an
 * empty key. Pure.
 */
size_t dn_key_parent_len(const unsigned char *key, size_t len);

/*
 * True (1) if key[0..len) is base[0..blen) or lies below it, i.e. base is a
 * prefix of key; every key lies below the empty base (root DSE, base may be
 * NULL then). Both borrowed. Returns 0 otherwise. Pure.
 */
int dn_key_in_subtree(const unsigned char *key, size_t len, const unsigned char *base, size_t blen);

#endif
