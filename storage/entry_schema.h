/*
 * Schema checking of an entry at import, as slapd (and slapadd without -s)
 * does it against the loaded schema (protocol/schema.h):
 *
 *   - every attribute type and object class is defined;
 *   - the structural object classes form one chain (one is a subclass of all
 *     the others), and there is one;
 *   - every MUST attribute of every class and its superclasses is present;
 *   - every attribute is allowed (MUST or MAY) by one of the classes, unless
 *     the entry is an extensibleObject; operational attributes are not checked
 *     here (the importer decides which it keeps);
 *   - a SINGLE-VALUE attribute has one value;
 *   - every value is valid for its syntax (storage/value_syntax.h).
 */
#ifndef MINIDIR_STORAGE_ENTRY_SCHEMA_H
#define MINIDIR_STORAGE_ENTRY_SCHEMA_H

#include <ldap.h>
#include <stddef.h>

/* Where a schema problem lies: a value of one of the entry's attributes, or the
 * entry as a whole (mod NULL: a missing MUST attribute, no structural class). */
struct schema_fault {
	const LDAPMod *mod; /* one of the mods checked, or NULL */
	int value;          /* the index of the value at fault in mod->mod_bvalues */
};

/*
 * Checks the attributes mods (as ldap_parse_ldif_record returns them, with
 * LDAP_MOD_BVALUES values) against the loaded schema. Returns 0 (also when no
 * schema is loaded), or -1 with the first problem in why (whylen bytes,
 * NUL-terminated) and where it lies in *fault. mods are not modified.
 */
int entry_schema_check(LDAPMod **mods, struct schema_fault *fault, char *why, size_t whylen);

#endif
