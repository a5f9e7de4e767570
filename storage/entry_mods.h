/*
 * An entry's attributes as an LDAPMod array (LDAP_MOD_BVALUES values, NULL-terminated,
 * what ldap_parse_ldif_record gives import), and the steps import and storage/db_update.h
 * share to turn them into what a record stores.
 *
 * Thread rules: none kept; a struct entry_mods is its caller's.
 */
#ifndef MINIDIR_STORAGE_ENTRY_MODS_H
#define MINIDIR_STORAGE_ENTRY_MODS_H

#include <ldap.h>
#include <stddef.h>

#include "protocol/buf.h"

/* Attributes decoded from BER: owns the arrays and the type names (one allocation, at
 * mod); the values point into the bytes decoded (borrowed: they must outlive the mods).
 * A zeroed struct is empty. */
struct entry_mods {
	LDAPMod **mods; /* NULL-terminated */
	LDAPMod *mod;
	struct berval **vptrs;
	struct berval *vals;
	char *types;      /* NUL-terminated copies */
	struct buf names; /* canonical names longer than the types they replace */
};

/*
 * Decodes the content of a PartialAttributeList (the bytes inside its SEQUENCE OF, as
 * a SearchResultEntry carries them: SEQUENCE { type OCTET STRING, vals SET OF OCTET
 * STRING }, definite lengths). An attribute with no values is left out; the same type
 * twice stays two mods (the record merges them). Returns 0; -1 when the bytes are not
 * such a list (a wrong tag, a length past the end, an empty type or one with a NUL or
 * of 256 bytes or more, trailing bytes); -2 when out of memory. m is reset first.
 */
int entry_mods_decode(struct entry_mods *m, const unsigned char *attrs, size_t len);
void entry_mods_free(struct entry_mods *m);

/*
 * What import does to an entry's attributes before storing them: operational
 * attributes (slapcat writes them; the server computes its own) are dropped but
 * entryUUID, and every type is named as the loaded schema names it ("commonName" is
 * kept as "cn", "CN;Lang-EN" as "cn;lang-en"). Types are rewritten in place or, when
 * longer, point into names (so names must outlive mods). Returns 0 or -1 (out of memory).
 */
int entry_mods_canonical(LDAPMod **mods, struct buf *names);

struct schema_attr;
/* entry_mods_canonical with each mod's type known already: types[i] is
 * schema_attr_find(mods[i]->mod_type) (NULL for one the schema lacks), as
 * entry_schema_memo_check found them; no look-up is made again. */
int entry_mods_canonical_typed(LDAPMod **mods, const struct schema_attr *const *types,
                               struct buf *names);

#endif
