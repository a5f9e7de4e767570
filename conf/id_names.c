/* Owners named for messages (id_names.h). */
#include "conf/id_names.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>

void id_names(uid_t uid, gid_t gid, char *out, size_t outlen)
{
	struct passwd *pw = getpwuid(uid);
	struct group *gr = getgrgid(gid);
	char u[24], g[24];
	snprintf(u, sizeof(u), "%ld", (long)uid);
	snprintf(g, sizeof(g), "%ld", (long)gid);
	snprintf(out, outlen, "%s:%s", pw ? pw->pw_name : u, gr ? gr->gr_name : g);
}
