/*
 * The values of an entry's RDN that its attributes lack, added as slapadd adds them
 * (slapd's naming check at an add): "dn: ou=x,dc=example,dc=com" with only "ou: y" gets
 * "ou: x" too, each AVA of a multi-valued RDN alike, so that (ou=x) finds the entry. A
 * value is there already when the entry holds it under the type's equality rule
 * ("CN=Mixed" and "cn: mixed"), in the attribute without options; an alias or OID in
 * the DN names the same attribute as its schema name does. The added values are then
 * checked with the rest (storage/entry_schema.h: an RDN type no class allows, a second
 * value of a SINGLE-VALUE type). Import without schema checking (-s) adds nothing, as
 * slapadd -s does not. An AVA in #hex (BER) form is left alone.
 *
 * Thread rules: a struct entry_rdn belongs to one thread at a time; the schema is only
 * read.
 */
#ifndef MINIDIR_STORAGE_ENTRY_RDN_H
#define MINIDIR_STORAGE_ENTRY_RDN_H

#include <ldap.h>
#include <stddef.h>

#include "protocol/buf.h"

/* The arrays a completed entry lives in, reused from one entry to the next. A zeroed
 * struct is empty. */
struct entry_rdn {
	struct buf arrays;    /* the new LDAPMod* array, copied and new LDAPMods, value arrays */
	struct buf bytes;     /* the added values and new types (NUL-terminated) */
	struct buf text;      /* the DN as libldap parses it */
	struct buf norm;      /* normal forms being compared */
	struct buf miss;      /* the AVAs missing */
	LDAPMod *copies;      /* [0..ncopies): the mods made here */
	const LDAPMod **orig; /* each copy's mod in the input, NULL for a new attribute */
	size_t ncopies;
};

/*
 * Sets *out to mods (borrowed, NULL-terminated LDAP_MOD_BVALUES, as import parses them)
 * with the values of the first RDN of dn (NUL-terminated, a DN dn_normalize took) that
 * they lack: *out is mods itself when none is missing, else an array in r (valid until the
 * next call or entry_rdn_free) that shares mods' unchanged LDAPMods and values. An added
 * value goes last in its attribute's values (a new attribute: last in the entry).
 * Returns 0; -1 when dn does not parse or memory runs out (*out is then mods).
 */
int entry_rdn_complete(struct entry_rdn *r, const char *dn, LDAPMod **mods, LDAPMod ***out);

/* The mod of the input that mod (one of the last *out) stands for: mod itself when it is
 * the input's, the one it copies, or NULL for an attribute entry_rdn_complete added. */
const LDAPMod *entry_rdn_original(const struct entry_rdn *r, const LDAPMod *mod);

void entry_rdn_free(struct entry_rdn *r);

#endif
