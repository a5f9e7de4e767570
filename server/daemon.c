/* The pid file and the switch away from root (daemon.h). */
#include "server/daemon.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/log.h"

int daemon_write_pid(const struct config *cfg)
{
	if (!cfg->pid_file[0])
		return 0;
	FILE *f = fopen(cfg->pid_file, "w");
	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
		log_error("pid_file %s: %s", cfg->pid_file, strerror(errno));
		return -1;
	}
	return 0;
}

void daemon_remove_pid(const struct config *cfg)
{
	if (!cfg->pid_file[0])
		return;
	FILE *f = fopen(cfg->pid_file, "r");
	long pid = 0;
	bool ours = f && fscanf(f, "%ld", &pid) == 1 && pid == (long)getpid();
	if (f)
		fclose(f);
	if (ours && unlink(cfg->pid_file) < 0)
		log_info("pid_file %s: %s (left in place: after dropping root the directory may "
		         "not be writable)",
		         cfg->pid_file, strerror(errno));
}

int daemon_drop_privileges(const struct config *cfg)
{
	if (!cfg->user[0])
		return 0;
	struct passwd *pw = getpwnam(cfg->user);
	if (!pw) {
		log_error("user %s: no such user", cfg->user);
		return -1;
	}
	gid_t gid = pw->pw_gid;
	if (cfg->group[0]) {
		struct group *gr = getgrnam(cfg->group);
		if (!gr) {
			log_error("group %s: no such group", cfg->group);
			return -1;
		}
		gid = gr->gr_gid;
	}
	if (geteuid() != 0) {
		log_error("user = %s: switching users needs root (minidir runs as uid %ld); leave "
		          "user and group unset",
		          cfg->user, (long)geteuid());
		return -1;
	}
	/* The pid file becomes the user's, so that the server can remove it at its stop. */
	if (cfg->pid_file[0] && chown(cfg->pid_file, pw->pw_uid, gid) < 0)
		log_info("pid_file %s: chown: %s", cfg->pid_file, strerror(errno));
	if (initgroups(pw->pw_name, gid) < 0 || setgid(gid) < 0 || setuid(pw->pw_uid) < 0) {
		log_error("user %s: %s", cfg->user, strerror(errno));
		return -1;
	}
	if (pw->pw_uid != 0 && setuid(0) == 0) {
		log_error("user %s: root could be regained after switching; stopping", cfg->user);
		return -1;
	}
	log_info("running as user %s (uid %ld), group %ld", cfg->user, (long)pw->pw_uid, (long)gid);
	return 0;
}
