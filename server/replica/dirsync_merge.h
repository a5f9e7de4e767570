/*
 * An entry's attributes as a DirSync change leaves them (dirsync.h): the stored record's
 * attributes, then the DC's message merged in: a type it sends replaces the stored values
 * of that type, its ";range=1-1" values are added and ";range=0-0" ones removed (a linked
 * attribute's incremental values), and the naming attribute follows the DN; then encoded
 * again as the content of a PartialAttributeList (what storage/db_update.h stores).
 *
 * Owns: its arrays (merged_free). Borrows: every type and value points into bytes the
 * caller keeps until the merge is encoded (a copy of the stored record, the DC's message,
 * the parsed DNs of merged_set_rdn). Thread rules: none shared; one user at a time.
 */
#ifndef MINIDIR_SERVER_REPLICA_DIRSYNC_MERGE_H
#define MINIDIR_SERVER_REPLICA_DIRSYNC_MERGE_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"

/* One attribute type and its values. */
struct merged_attr {
	const char *type;
	size_t tlen;
	struct berval *v;
	size_t n, cap;
};

struct merged {
	struct merged_attr *a;
	size_t n, cap;
};

/* Empties m (its arrays kept for reuse) / frees them. */
void merged_clear(struct merged *m);
void merged_free(struct merged *m);

/* The attribute type t[0..tlen) (compared without case), added with no value when absent;
 * NULL when out of memory. */
struct merged_attr *merged_attr_of(struct merged *m, const char *t, size_t tlen);

/* Adds value v[0..len) once (bytes compared). 0, or -1 when out of memory. */
int merged_value_add(struct merged_attr *a, const char *v, size_t len);

/*
 * Merges the content of a PartialAttributeList p[0..len) into m: from_dc, as a DirSync
 * change (ranged values added or removed, the other types replacing the stored values);
 * else every value added (the stored record). 0, or -1 (bad BER, out of memory).
 */
int merged_add(struct merged *m, const unsigned char *p, size_t len, bool from_dc);

/*
 * The first RDN's values: those of old_dn (NULL: none) removed, those of dn added (a DC
 * never sends the naming attribute, and renames by the RDN). *old and *now are the parsed
 * DNs the values point into, the caller's to ldap_dnfree (also on failure). 0, or -1 (a DN
 * that does not parse, out of memory).
 */
int merged_set_rdn(struct merged *m, const char *old_dn, const char *dn, LDAPDN *old, LDAPDN *now);

/* m as the content of a PartialAttributeList into out (reset first), set and seq the
 * caller's scratch; a type with no value left out. 0, or -1 when out of memory. */
int merged_encode(const struct merged *m, struct buf *out, struct buf *set, struct buf *seq);

#endif
