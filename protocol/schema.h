/*
 * The schema: attribute types and object classes read from OpenLDAP-format
 * .schema files (core, cosine, inetorgperson, nis) with libldap's schema
 * parser, plus the operational attributes every LDAP server defines itself
 * (RFC 4512, 4530, 3045, 5020).
 *
 * It gives each attribute its names (aliases and OID resolve to one type), its
 * equality, ordering and substrings rules (inherited through SUP) and whether
 * it is operational. Loaded once at start-up, read-only afterwards, so threads
 * share it without locks. Without a loaded schema, lookups return NULL and
 * callers fall back to caseIgnore matching (match.h).
 */
#ifndef MINIDIR_PROTOCOL_SCHEMA_H
#define MINIDIR_PROTOCOL_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/match_rule.h"

/* The four schemas minidir serves, in load order. */
#define SCHEMA_DEFAULT_DIR "/etc/ldap/schema"
#define SCHEMA_DEFAULT_FILES "core cosine inetorgperson nis"

struct schema_attr {
	char *name; /* primary name (first NAME), or the OID */
	char **names;
	char *oid;
	enum match_rule eq, ord, sub; /* MATCH_NONE where the type has no such rule */
	bool operational;
	bool single_value;
	const char *syntax;            /* SYNTAX OID (inherited through SUP), or NULL */
	const struct schema_attr *sup; /* the superior type, or NULL */
	char *definition;              /* RFC 4512 form, for cn=Subschema */
};

enum schema_oc_kind { SCHEMA_OC_ABSTRACT, SCHEMA_OC_STRUCTURAL, SCHEMA_OC_AUXILIARY };

struct schema_oc {
	char *name;
	char *oid;
	char *sup;                  /* first superior class name, or NULL */
	char **sups, **must, **may; /* every SUP, MUST and MAY name (NULL-terminated or NULL) */
	enum schema_oc_kind kind;
	char *definition;
};

/*
 * Loads dir/NAME.schema for each space-separated NAME in files (the built-in
 * operational attributes first). Returns 0, or -1 with "file:line: reason"
 * in err. Call once, before any thread uses the schema.
 */
int schema_load(const char *dir, const char *files, char *err, size_t errlen);
bool schema_loaded(void);
void schema_free(void);

/*
 * Writes description in[0..len) with its type as the schema names it and its
 * options lowercased ("commonName;Lang-EN" -> "cn;lang-en") into out (cap
 * bytes, NUL-terminated). Returns the length, or 0 if the type is unknown or
 * the result does not fit.
 */
size_t schema_canonical_desc(const char *in, size_t len, char *out, size_t cap);

/* The attribute type named name[0..len) (any alias or OID, any case; options ignored). */
const struct schema_attr *schema_attr_find(const char *name, size_t len);
/* The object class named name[0..len), or NULL. */
const struct schema_oc *schema_oc_find(const char *name, size_t len);

/* Every attribute type / object class, for cn=Subschema. */
size_t schema_attr_count(void);
const struct schema_attr *schema_attr_at(size_t i);
size_t schema_oc_count(void);
const struct schema_oc *schema_oc_at(size_t i);

#endif
