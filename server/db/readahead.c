/* Read-ahead on or off for a database file, from its size and the memory limit (readahead.h). */
#include "server/db/readahead.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The number in file (a limit in bytes), or UINT64_MAX when it is absent, "max" or no number. */
static uint64_t read_limit(const char *file)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return UINT64_MAX;
	uint64_t v;
	int got = fscanf(f, "%" SCNu64, &v);
	fclose(f);
	return got == 1 ? v : UINT64_MAX;
}

/* The smallest limit named file in dir and its parents up to root (dir begins with root). */
static uint64_t lowest_limit(const char *root, char *dir, const char *file)
{
	uint64_t low = UINT64_MAX;
	size_t rootlen = strlen(root);
	for (;;) {
		char path[4352];
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		uint64_t v = read_limit(path);
		low = v < low ? v : low;
		char *slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < rootlen)
			return low;
		*slash = '\0';
	}
}

/* This process's memory cgroup limit (v2 or v1), UINT64_MAX when none is seen. */
static uint64_t cgroup_limit(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return UINT64_MAX;
	char line[4096];
	uint64_t low = UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *controllers = c1 + 1, *cg = c2 + 1;
		char dir[4096];
		uint64_t v = UINT64_MAX;
		if (strcmp(line, "0") == 0 && *controllers == '\0') {
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", strcmp(cg, "/") ? cg : "");
			v = lowest_limit("/sys/fs/cgroup", dir, "memory.max");
		} else if (strstr(controllers, "memory")) {
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory%s",
			         strcmp(cg, "/") ? cg : "");
			v = lowest_limit("/sys/fs/cgroup/memory", dir, "memory.limit_in_bytes");
		}
		low = v < low ? v : low;
	}
	fclose(f);
	return low;
}

uint64_t db_readahead_memory_limit(const char **from)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t machine = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	uint64_t cg = cgroup_limit();
	*from = "the machine";
	if (machine == 0 || cg < machine) {
		*from = "its memory cgroup";
		return cg == UINT64_MAX ? 0 : cg;
	}
	return machine;
}

bool db_readahead_off(enum db_readahead mode, uint64_t size, char *why, size_t whylen)
{
	if (mode != DB_READAHEAD_AUTO) {
		snprintf(why, whylen, "database_readahead = %s",
		         mode == DB_READAHEAD_ON ? "on" : "off");
		return mode == DB_READAHEAD_OFF;
	}
	const char *from;
	uint64_t limit = db_readahead_memory_limit(&from);
	bool off = limit > 0 && size > limit / 2;
	snprintf(why, whylen,
	         "auto: the file (%.1f MB) is %s half of the %.1f MB this process may use (the "
	         "limit of %s)",
	         (double)size / 1048576, off ? "larger than" : "within", (double)limit / 1048576,
	         from);
	if (limit == 0)
		snprintf(why, whylen, "auto: the memory limit is not known");
	return off;
}
