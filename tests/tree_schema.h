/*
 * The schema files the unit tests and the fuzz targets load: the tree's own, in schema/
 * (written from the RFCs, see the head of each file), the files make install puts where
 * the server reads them by default (protocol/schema.h SCHEMA_DEFAULT_DIR). A path relative
 * to the repository root: unit tests run from there (make unit, make check), as
 * fuzz/run.sh does.
 * TEST_SCHEMA_FILES names the same four schemas as SCHEMA_DEFAULT_FILES, in its order.
 */
#ifndef MINIDIR_TESTS_TREE_SCHEMA_H
#define MINIDIR_TESTS_TREE_SCHEMA_H

#include "protocol/schema.h"

#define TEST_SCHEMA_DIR "schema"
#define TEST_SCHEMA_FILES SCHEMA_DEFAULT_FILES

#endif
