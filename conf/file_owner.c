/* Who a new database file is given to (file_owner.h). */
#include "conf/file_owner.h"

#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/key_line.h"

int file_owner_pick(const struct config *cfg, const char *path, struct file_owner *o, char *why,
                    size_t cap)
{
	*o = (struct file_owner){0};
	if (cfg->user[0]) {
		struct passwd *pw = getpwnam(cfg->user);
		struct group *gr = cfg->group[0] ? getgrnam(cfg->group) : NULL;
		if (!pw || (cfg->group[0] && !gr)) {
			const char *key = pw ? "group" : "user";
			snprintf(why, cap, "%s:%d: %s = %s: no such %s", cfg->path,
			         config_key_line(cfg->path, key), key, pw ? cfg->group : cfg->user,
			         key);
			return -1;
		}
		o->uid = pw->pw_uid;
		o->gid = gr ? gr->gr_gid : pw->pw_gid;
		snprintf(o->who, sizeof(o->who), "the server's user");
	} else {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", path);
		const char *d = dirname(dir);
		struct stat st;
		/* A missing directory is the caller's to report; root's keeps a root file. */
		if (stat(d, &st) < 0 || st.st_uid == 0)
			return 0;
		o->uid = st.st_uid;
		o->gid = st.st_gid;
		snprintf(o->who, sizeof(o->who), "the owner of %.4000s", d);
	}
	if (geteuid() == 0)
		o->chown = true;
	else if (cfg->user[0] && o->uid != geteuid())
		snprintf(
		    o->warning, sizeof(o->warning),
		    "%.200s will be yours (uid %ld), not user = %.100s's: only root can give a "
		    "file away; run as root or as %.100s",
		    path, (long)geteuid(), cfg->user, cfg->user);
	return 0;
}
