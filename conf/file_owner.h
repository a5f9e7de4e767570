/*
 * Who a new database file is given to, so that the server can read it (mode 0600), for
 * the tools that make one as root (minidir-import, minidir-seed): the config's user and
 * group (else the user's primary group), whom a server started as root switches to;
 * without them, the owner of the file's directory when that is not root (the package's
 * /var/lib/minidir is the minidir user's, and its unit runs as that user with user
 * unset). Only root can give a file away: for any other caller the file stays theirs.
 *
 * Thread rules: getpwnam and getgrnam (not reentrant): the main thread's.
 */
#ifndef MINIDIR_CONF_FILE_OWNER_H
#define MINIDIR_CONF_FILE_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "conf/config.h"

struct file_owner {
	bool chown; /* the caller is root and someone else should own the file */
	uid_t uid;  /* with chown: whom to give it to */
	gid_t gid;
	char who[4200];    /* why them: "the server's user", "the owner of DIR" */
	char warning[600]; /* not root, and the config's user is another: what to tell, or "" */
};

/*
 * Picks the owner of the new file at path for cfg (a zeroed config: no user). 0 (*o set;
 * o->chown false when nothing is to be given away), or -1 with why (an unknown user or
 * group: "CONFIG:LINE: user = NAME: no such user").
 */
int file_owner_pick(const struct config *cfg, const char *path, struct file_owner *o, char *why,
                    size_t cap);

#endif
