/*
 * The schema files the unit tests load: the tree's own, in schema/ (written from the
 * RFCs, see the head of each file), not slapd's /etc/ldap/schema that the server reads
 * by default (protocol/schema.h SCHEMA_DEFAULT_DIR). A path relative to the repository
 * root: unit tests run from there (make unit, make check).
 * TEST_SCHEMA_FILES names the same four schemas as SCHEMA_DEFAULT_FILES, in its order.
 */
#ifndef MINIDIR_TESTS_TREE_SCHEMA_H
#define MINIDIR_TESTS_TREE_SCHEMA_H

#include "protocol/schema.h"

#define TEST_SCHEMA_DIR "schema"
#define TEST_SCHEMA_FILES SCHEMA_DEFAULT_FILES

#endif
