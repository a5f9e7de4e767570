/*
 * The schema: attribute types and object classes read from OpenLDAP-format
 * .schema files (core, cosine, inetorgperson, nis) with libldap's schema
 * parser, plus the operational attributes every LDAP server defines itself
 * (RFC 4512, 4530, 3045, 5020).
 *
 * It gives each attribute its names (aliases and OID resolve to one type), its
 * equality, ordering and substrings rules (inherited through SUP) and whether
 * it is operational.
 *
 * Layering: the bottom of the schema/DN/matching code. It names rules with
 * match_rule.h and knows nothing of values, DNs or matching (value.h, dn.h and
 * match.h use it).
 *
 * Ownership: one schema per process, in static storage. Every pointer a lookup
 * returns (struct schema_attr, struct schema_oc, their strings) belongs to the
 * schema and stays valid until schema_free.
 *
 * Thread rules: schema_load and schema_free run alone (at start-up and exit,
 * before and after any other thread uses the schema); between them the schema
 * is read-only and every lookup may run in any thread at once, without locks.
 * Without a loaded schema lookups return NULL and callers fall back
 * to the built-in rules (value.h).
 */
#ifndef MINIDIR_PROTOCOL_SCHEMA_H
#define MINIDIR_PROTOCOL_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/match_rule.h"

/* The four schemas minidir serves, in load order. */
#define SCHEMA_DEFAULT_FILES "core cosine inetorgperson nis"
/* SCHEMA_DEFAULT_DIR, the schema_dir of a config that names none, is the Makefile's
 * SCHEMADIR ($(PREFIX)/share/minidir/schema, where make install puts the tree's schema/),
 * given with -D to conf/config.c alone, its one user, so that another PREFIX rebuilds that
 * object only. */

struct schema_attr {
	char *name;      /* primary name (first NAME), or the OID */
	size_t name_len; /* strlen(name) */
	char **names;
	char *oid;
	enum match_rule eq, ord, sub; /* MATCH_NONE where the type has no such rule */
	bool operational;
	bool single_value;
	const char *syntax;            /* SYNTAX OID (inherited through SUP), or NULL */
	const struct schema_attr *sup; /* the superior type, or NULL */
	bool has_subtypes;             /* some type names this one (directly or not) as SUP */
	char *definition;              /* RFC 4512 form, for cn=Subschema */
	char *defined_at; /* "FILE:LINE" of a file's live definition; NULL: built in (or a
	                   * definition slapd builds in, commented out in the file) */
};

enum schema_oc_kind { SCHEMA_OC_ABSTRACT, SCHEMA_OC_STRUCTURAL, SCHEMA_OC_AUXILIARY };

struct schema_oc {
	char *name;
	char *oid;
	char *sup;                  /* first superior class name, or NULL */
	char **sups, **must, **may; /* every SUP, MUST and MAY name (NULL-terminated or NULL) */
	enum schema_oc_kind kind;
	/* Every class this one derives from through SUP, nearest first, and top (RFC 4512
	 * 2.4.1: an entry belongs to every superclass of its classes); not the class itself.
	 * NULL-terminated, never NULL after schema_load. */
	const struct schema_oc **superclasses;
	bool has_subclasses; /* some class derives from this one */
	/* must and may resolved: the types they name, in the same order, names the schema
	 * does not define left out. NULL-terminated, never NULL after schema_load. */
	const struct schema_attr **must_attrs, **may_attrs;
	char *definition;
	char *defined_at; /* as struct schema_attr's */
};

/*
 * Loads dir/NAME.schema for each NAME in files (separated by spaces, commas or
 * tabs; at most 1023 bytes are read), or the file NAME itself where NAME is an
 * absolute path ("/etc/minidir/site.schema"), after the built-in operational
 * attributes and classes. objectIdentifier macros (schema_macro.h) hold from their
 * line to the end of the load, across files, and are expanded in each definition's
 * OID and SYNTAX. A commented-out definition that restates a built-in keeps the
 * built-in; one that fails to parse or expand is skipped.
 * dir and files are borrowed; err (errlen bytes, the caller's) receives a
 * NUL-terminated message on failure.
 * Returns 0; -1 with "file:line: reason" in err (a file that cannot be opened,
 * a definition libldap does not parse, a duplicate definition, a bad or undefined
 * OID macro) or on out of memory (err may then be left unwritten); schema_free
 * releases what it built so far.
 * Call once, before any other thread uses the schema.
 */
int schema_load(const char *dir, const char *files, char *err, size_t errlen);
/* True between a successful schema_load and schema_free. */
bool schema_loaded(void);
/* The bytes schema_digest returns, NUL included. */
#define SCHEMA_DIGEST_SIZE 17
/*
 * What the loaded schema defines, as 16 lowercase hex digits: FNV-1a (64 bits) over every
 * attribute type's and object class's definition as cn=Subschema publishes it, in load
 * order, built-ins included. Two loads that define the same things alike have the same
 * digest whatever their files' comments, spacing, names or macros. minidir-import records
 * it in the database file; the server compares it before it serves a new file.
 * "" when no schema is loaded. The string is the schema's (valid until schema_free).
 */
const char *schema_digest(void);
/* Frees everything schema_load built (also after a failed load); lookups return NULL again. */
void schema_free(void);

/*
 * Writes description in[0..len) (borrowed) with its type as the schema names
 * it and its options lowercased ("commonName;Lang-EN" -> "cn;lang-en") into
 * out (cap bytes, the caller's, NUL-terminated).
 * Returns the length; 0 if no schema is loaded, the type is unknown or the
 * result does not fit (out then untouched).
 */
size_t schema_canonical_desc(const char *in, size_t len, char *out, size_t cap);
/* The same for a description whose type the caller found already: at is
 * schema_attr_find(in, len) (NULL: returns 0). */
size_t schema_desc_as(const struct schema_attr *at, const char *in, size_t len, char *out,
                      size_t cap);

/*
 * The attribute type named name[0..len) (borrowed, need not be NUL-terminated;
 * any alias or OID, any case; options after ';' ignored), or NULL: unknown,
 * len 0, or no schema loaded.
 */
const struct schema_attr *schema_attr_find(const char *name, size_t len);
/* The object class named name[0..len) (any name or OID, any case), or NULL as above. */
const struct schema_oc *schema_oc_find(const char *name, size_t len);

/* True if at is sup or a subtype of sup through its SUP chain (RFC 4512 2.5.1). Pure. */
bool schema_attr_is_a(const struct schema_attr *at, const struct schema_attr *sup);
/* True if oc is sup or derives from it (struct schema_oc's superclasses). Pure. */
bool schema_oc_is_a(const struct schema_oc *oc, const struct schema_oc *sup);

/* Every attribute type / object class in load order, for cn=Subschema: i < the count. */
size_t schema_attr_count(void);
const struct schema_attr *schema_attr_at(size_t i);
size_t schema_oc_count(void);
const struct schema_oc *schema_oc_at(size_t i);

#endif
