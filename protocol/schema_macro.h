/*
 * OID macros of the schema files, as slapd reads them: "objectIdentifier NAME OID" or
 * "objectIdentifier NAME OTHER:SUFFIX" defines NAME; an attribute type's or object
 * class's OID and a SYNTAX may then be written NAME or NAME:SUFFIX (NAME's OID, a dot,
 * SUFFIX). Names are case-sensitive, as slapd's. Only schema.c uses it: it expands each
 * definition's OIDs before filing it, so cn=Subschema publishes numeric OIDs.
 *
 * Ownership: one table per process, in static storage; name, value and where are
 * borrowed (copied in). schema_macro_free empties it.
 *
 * Thread rules: as schema_load's (protocol/schema.h): used only while loading, alone.
 */
#ifndef MINIDIR_PROTOCOL_SCHEMA_MACRO_H
#define MINIDIR_PROTOCOL_SCHEMA_MACRO_H

#include <stddef.h>

/*
 * Defines name as value (a numeric OID, or NAME[:SUFFIX] of a macro defined before).
 * Returns 0 (also for a name defined again as the same OID, as slapd allows); -1 with
 * "where: reason" in err (errlen bytes, the caller's): a name that is not a keystring
 * (a letter, then letters, digits and hyphens), a value that is neither, an undefined
 * macro in value, a name defined already as another OID, or out of memory.
 */
int schema_macro_define(const char *name, const char *value, const char *where, char *err,
                        size_t errlen);

/*
 * oid as a numeric OID into out (cap bytes, the caller's, NUL-terminated): oid itself
 * when it starts with a digit, else its macro's expansion.
 * Returns the length written; 0 when oid names no macro defined, its suffix is not
 * digits and dots, or the result does not fit (out then unspecified).
 */
size_t schema_macro_expand(const char *oid, char *out, size_t cap);

/* Forgets every macro (schema_free). */
void schema_macro_free(void);

#endif
