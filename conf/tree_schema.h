/*
 * The schema of a source tree, for programs run from its build directory: a config that
 * names no schema_dir reads SCHEMA_DEFAULT_DIR (where make install puts the files), which
 * a tree that was only built lacks, so build/minidir-import on the README's configuration
 * failed with "No such file or directory" (docs/reliability.md).
 *
 * Thread rules: no state.
 */
#ifndef MINIDIR_CONF_TREE_SCHEMA_H
#define MINIDIR_CONF_TREE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The schema/ directory beside the directory that holds the running program
 * (/proc/self/exe: build/minidir reads the tree's schema/), written to out (cap bytes)
 * when it holds core.schema. Returns true then; false, out unchanged, when there is none
 * or the path does not fit.
 */
bool tree_schema_dir(char *out, size_t cap);

#endif
