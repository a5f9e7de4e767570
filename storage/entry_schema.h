/*
 * Schema checking of an entry at import, as slapd (and slapadd without -s)
 * does it against the loaded schema (protocol/schema.h):
 *
 *   - every attribute type and object class is defined;
 *   - the structural object classes form one chain (one is a subclass of all
 *     the others), and there is one;
 *   - every MUST attribute of every class and its superclasses is present;
 *   - every attribute is allowed (MUST or MAY) by one of the classes, unless
 *     the entry is an extensibleObject or the attribute is operational (the
 *     importer decides which of those it keeps);
 *   - a SINGLE-VALUE attribute has one value;
 *   - every value is valid for its syntax (storage/value_syntax.h).
 */
#ifndef MINIDIR_STORAGE_ENTRY_SCHEMA_H
#define MINIDIR_STORAGE_ENTRY_SCHEMA_H

#include <ldap.h>
#include <stddef.h>

#include "protocol/schema.h"
#include "protocol/buf.h"
#include "storage/entry.h"

/* Where a schema problem lies: a value of one of the entry's attributes, or the
 * entry as a whole (mod NULL: a missing MUST attribute, no structural class). */
struct schema_fault {
	const LDAPMod *mod; /* one of the mods checked, or NULL */
	int value;          /* the index of the value at fault in mod->mod_bvalues */
};

/*
 * The entry's structural object class, as structuralObjectClass names it: the most derived
 * structural class among its objectClass values (NULL: none defined in the loaded schema).
 * The server answers it and minidir-export writes it, as slapcat does.
 */
const struct schema_oc *entry_structural_class(const struct entry_view *e);

/*
 * Checks the attributes mods (as ldap_parse_ldif_record returns them, with
 * LDAP_MOD_BVALUES values) against the loaded schema. Returns 0 (also when no
 * schema is loaded), or -1 with the first problem in why (whylen bytes,
 * NUL-terminated) and where it lies in *fault. mods are not modified.
 */
int entry_schema_check(LDAPMod **mods, struct schema_fault *fault, char *why, size_t whylen);

/*
 * What entry_schema_memo_check remembers of the last entry it passed: its attribute types
 * in order and its objectClass values. An entry of the same shape (most of a directory's
 * entries are) needs only its values checked: the classes, the MUST attributes and which
 * attributes the classes allow are the same. A zeroed struct is empty; one thread uses it.
 */
struct entry_schema_memo {
	const struct schema_attr **types;
	size_t ntypes, cap;
	struct buf classes; /* the objectClass values, each u32 length then bytes */
	struct buf scratch; /* the checked entry's, compared with classes */
};

/* entry_schema_check, with the same result, skipping what memo (the caller's) shows the
 * entry shares with the last one that passed. */
int entry_schema_memo_check(struct entry_schema_memo *memo, LDAPMod **mods,
                            struct schema_fault *fault, char *why, size_t whylen);
void entry_schema_memo_free(struct entry_schema_memo *memo);

#endif
