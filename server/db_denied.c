/* The database the server may not read, explained (db_denied.h). */
#include "server/db_denied.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/id_names.h"

bool db_denied_explain(const struct config *cfg, char *out, size_t outlen)
{
	const char *path = cfg->database;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (errno != EACCES)
		return false;
	/* The file itself, or (when it cannot even be looked at) its directory. */
	char dir[sizeof(cfg->database)];
	snprintf(dir, sizeof(dir), "%s", path);
	struct stat st;
	bool is_file = stat(path, &st) == 0;
	const char *what = is_file ? path : dirname(dir);
	if (!is_file && stat(what, &st) < 0)
		return false;
	char owner[160], me[160];
	id_names(st.st_uid, st.st_gid, owner, sizeof(owner));
	id_names(geteuid(), getegid(), me, sizeof(me));
	int user_len = (int)strcspn(me, ":");
	unsigned mode = (unsigned)(st.st_mode & 07777);
	long uid = (long)geteuid();
	if (!is_file)
		snprintf(
		    out, outlen,
		    "cannot read the database %s: permission denied on its directory %s "
		    "(owned by %s, mode %04o), and minidir runs as %s (uid %ld); let that user "
		    "in: chown %s %s",
		    path, what, owner, mode, me, uid, me, what);
	else
		snprintf(
		    out, outlen,
		    "cannot read the database %s: permission denied: it is owned by %s, mode "
		    "%04o, and minidir runs as %s (uid %ld); give it to that user: chown %s %s "
		    "(minidir-import run as root does it itself when %s sets user = %.*s, or "
		    "when the database's directory belongs to %.*s)",
		    path, owner, mode, me, uid, me, path, cfg->path, user_len, me, user_len, me);
	return true;
}
