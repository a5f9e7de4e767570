/* The database the server may not read, explained (db_denied.h). */
#include "server/db_denied.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The name of uid (or its number) into out. */
static void user_name(uid_t uid, char *out, size_t outlen)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(out, outlen, "%s", pw->pw_name);
	else
		snprintf(out, outlen, "%ld", (long)uid);
}

static void group_name(gid_t gid, char *out, size_t outlen)
{
	struct group *gr = getgrgid(gid);
	if (gr)
		snprintf(out, outlen, "%s", gr->gr_name);
	else
		snprintf(out, outlen, "%ld", (long)gid);
}

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
	char owner[64], group[64], me[64], mygroup[64];
	user_name(st.st_uid, owner, sizeof(owner));
	group_name(st.st_gid, group, sizeof(group));
	user_name(geteuid(), me, sizeof(me));
	group_name(getegid(), mygroup, sizeof(mygroup));
	long uid = (long)geteuid();
	if (!is_file)
		snprintf(out, outlen,
		         "cannot read the database %s: permission denied on its directory %s "
		         "(owned by %s:%s, mode %04o), and minidir runs as %s:%s (uid %ld); let "
		         "that user in: chown %s:%s %s",
		         path, what, owner, group, (unsigned)(st.st_mode & 07777), me, mygroup, uid,
		         me, mygroup, what);
	else
		snprintf(
		    out, outlen,
		    "cannot read the database %s: permission denied: it is owned by %s:%s, mode "
		    "%04o, and minidir runs as %s:%s (uid %ld); give it to that user: chown %s:%s "
		    "%s (minidir-import run as root does it itself when %s sets user = %s, or "
		    "when the database's directory belongs to %s)",
		    path, owner, group, (unsigned)(st.st_mode & 07777), me, mygroup, uid, me,
		    mygroup, path, cfg->path, me, me);
	return true;
}
