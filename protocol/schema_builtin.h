/*
 * The attribute types and object classes minidir defines itself, as slapd builds them in
 * (the .schema files do not carry them): RFC 4512, 4530, 5020, 3045 and a few more
 * (schema_builtin.c says which). Only schema.c reads them: schema_load adds them first, so
 * that a file's definition of the same OID is the one ignored.
 *
 * Ownership: static, read-only data (RFC 4512 descriptions, NUL-terminated).
 */
#ifndef MINIDIR_PROTOCOL_SCHEMA_BUILTIN_H
#define MINIDIR_PROTOCOL_SCHEMA_BUILTIN_H

#include <stddef.h>

extern const char *const schema_builtin_attrs[];
extern const size_t schema_builtin_nattrs;
extern const char *const schema_builtin_classes[];
extern const size_t schema_builtin_nclasses;

#endif
