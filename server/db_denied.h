/*
 * Why the server may not read its database, said so that the admin can fix it: the
 * file (or the directory that keeps the server from it), its owner and mode, the user
 * and group the server runs as, and the two fixes (chown, or an import as root with
 * `user` in the config, which gives the file to that user: minidir-import(8)). The
 * usual case: a database imported by root, 0600 root:root, under a unit whose User= is
 * minidir.
 */
#ifndef MINIDIR_SERVER_DB_DENIED_H
#define MINIDIR_SERVER_DB_DENIED_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

/*
 * True when this process cannot open cfg->database for reading because of permissions
 * (EACCES), with the message in out[0..outlen) ("cannot read the database PATH:
 * permission denied: it is owned by root:root, mode 0600, and minidir runs as
 * minidir:minidir (uid 998); ..."). False when it can be opened, or fails otherwise
 * (out untouched): the caller's own error says why.
 */
bool db_denied_explain(const struct config *cfg, char *out, size_t outlen);

#endif
