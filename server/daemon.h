/*
 * What a server started by root (or an init system without systemd) needs:
 * a pid file, and giving up root after the ports are bound (user/group keys).
 * Main thread only, after listeners_bind and before the workers start.
 */
#ifndef MINIDIR_SERVER_DAEMON_H
#define MINIDIR_SERVER_DAEMON_H

#include "conf/config.h"

/* Writes the process ID to cfg->pid_file (if set; mode 0644, replaced). Returns 0, or -1
 * after logging the file and the reason. */
int daemon_write_pid(const struct config *cfg);
/* Removes the pid file (if set and still ours); a failure is only logged. */
void daemon_remove_pid(const struct config *cfg);

/*
 * With cfg->user (and optionally cfg->group; else the user's primary group) set:
 * switches to them for good (supplementary groups, gid, uid), and checks that root
 * cannot be regained. Returns 0; -1 after logging why (an unknown name, not running as
 * root, a failed call): the server must not go on.
 */
int daemon_drop_privileges(const struct config *cfg);

#endif
