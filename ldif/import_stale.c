#include "ldif/import_stale.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The PID of name if it is base".tmp."PID (digits only), else 0. */
static pid_t stale_pid(const char *name, const char *base, size_t blen)
{
	if (strncmp(name, base, blen) != 0 || strncmp(name + blen, ".tmp.", 5) != 0)
		return 0;
	const char *digits = name + blen + 5;
	if (*digits < '1' || *digits > '9' || strspn(digits, "0123456789") != strlen(digits))
		return 0;
	errno = 0;
	long pid = strtol(digits, NULL, 10);
	return errno || pid > INT_MAX ? 0 : (pid_t)pid;
}

int import_remove_stale(const char *db_path, FILE *log)
{
	const char *slash = strrchr(db_path, '/');
	char dir[4096];
	const char *base = slash ? slash + 1 : db_path;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - db_path + (slash == db_path)),
		         db_path);
	else
		snprintf(dir, sizeof(dir), ".");
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(log, "%s: looking for stale temporary files: %s\n", dir, strerror(errno));
		return 0;
	}
	int removed = 0;
	size_t blen = strlen(base);
	struct dirent *de;
	while ((de = readdir(d))) {
		pid_t pid = stale_pid(de->d_name, base, blen);
		if (pid == 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) == 0) {
			fprintf(log,
			        "%s: removed the stale temporary file of an import that did not "
			        "finish (process %ld no longer runs)\n",
			        path, (long)pid);
			removed++;
		} else if (errno != ENOENT) {
			fprintf(log, "%s: cannot remove stale temporary file: %s\n", path,
			        strerror(errno));
		}
	}
	closedir(d);
	return removed;
}
