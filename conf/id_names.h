/*
 * A file's or a process's owner in messages ("minidir:minidir"), for the server's and
 * minidir-import's words about who may read the database.
 *
 * Thread rules: getpwuid and getgrgid (not reentrant): the main thread's.
 */
#ifndef MINIDIR_CONF_ID_NAMES_H
#define MINIDIR_CONF_ID_NAMES_H

#include <stddef.h>
#include <sys/types.h>

/* "user:group" of uid and gid into out[0..outlen), each its name or, without one, its
 * number. */
void id_names(uid_t uid, gid_t gid, char *out, size_t outlen);

#endif
