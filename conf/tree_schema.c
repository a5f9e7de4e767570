/* The schema of a source tree, for programs run from its build directory: tree_schema.h. */
#include "conf/tree_schema.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool tree_schema_dir(char *out, size_t cap)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* build/minidir: the tree is the program's directory's parent. */
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return false;
		*slash = '\0';
	}
	snprintf(dir, sizeof(dir), "%s/schema", exe);
	snprintf(probe, sizeof(probe), "%s/core.schema", dir);
	if (access(probe, R_OK) != 0 || strlen(dir) >= cap)
		return false;
	memcpy(out, dir, strlen(dir) + 1);
	return true;
}
