/*
 * The version of minidir: the one place it is written. `--version` of every program
 * (conf/cli.c, tools/searchrate/options.c) and the root DSE's vendorVersion
 * (server/ops/op_rootdse.c) print it; scripts/version_check.sh (make docs-check) checks
 * that every man page's .TH line and debian/changelog name it. A release changes this line
 * and adds a debian/changelog entry.
 */
#ifndef MINIDIR_CONF_VERSION_H
#define MINIDIR_CONF_VERSION_H

#define MINIDIR_VERSION "0.9.0"

#endif
