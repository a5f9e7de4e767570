/*
 * Distinguished names: parsing with libldap (ldap_bv2dn), normal form, and the
 * reversed key that storage indexes DNs by.
 *
 * Normal form: RFC 4514 string (ldap_dn2bv, LDAPv3), attribute types
 * lowercased, values normalized with caseIgnoreMatch (all naming attributes in
 * the bundled schemas use it), AVAs of a multi-valued RDN sorted by type.
 *
 * Reversed key: the normalized RDNs from the root down, each followed by a NUL
 * byte ("dc=com\0dc=example\0ou=people\0"). Every entry below a base has the
 * base's key as a prefix, so a subtree is one range scan. "" is the root DSE.
 */
#ifndef MINIDIR_PROTOCOL_DN_H
#define MINIDIR_PROTOCOL_DN_H

#include <stddef.h>

#include "protocol/tlv.h"

/*
 * Normalizes dn[0..len). Appends the normal form to ndn (if not NULL, no NUL
 * terminator) and the reversed key to key (if not NULL). Returns 0, or -1 if dn
 * is not a valid DN (outputs then unchanged).
 */
int dn_normalize(const char *dn, size_t len, struct buf *ndn, struct buf *key);

/* Length of the parent's reversed key within key[0..len); 0 for a top entry. */
size_t dn_key_parent_len(const unsigned char *key, size_t len);

/* True if key[0..len) is base[0..blen) or lies below it. */
int dn_key_in_subtree(const unsigned char *key, size_t len, const unsigned char *base, size_t blen);

#endif
