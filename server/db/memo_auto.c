/* memo_bytes = auto: a budget from the memory this process may use (memo_auto.h). */
#include "server/db/memo_auto.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A limit file's value: the bytes, or SIZE_MAX for none ("max", a v1 "unlimited" near
 * 2^63, a file not there or not a number). */
static size_t read_limit(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[64];
	size_t v = SIZE_MAX;
	if (!f)
		return v;
	if (fgets(line, sizeof(line), f) && line[0] >= '0' && line[0] <= '9') {
		char *end;
		unsigned long long n = strtoull(line, &end, 10);
		if ((*end == '\n' || *end == '\0') && n < (1ULL << 62))
			v = (size_t)n;
	}
	fclose(f);
	return v;
}

/* The lowest limit in file name of dir root+path and of its ancestors up to root; *where
 * set to the file that said it. SIZE_MAX when none does. */
static size_t lowest_up(const char *root, const char *path, const char *name, char *where,
                        size_t cap)
{
	char p[4096], file[4200];
	size_t best = SIZE_MAX;
	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		size_t len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			p[--len] = '\0';
		snprintf(file, sizeof(file), "%s%s/%s", root, strcmp(p, "/") == 0 ? "" : p, name);
		size_t v = read_limit(file);
		if (v < best) {
			best = v;
			snprintf(where, cap, "the cgroup limit of %s", file);
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p) {
			if (strcmp(p, "/") == 0 || p[0] != '/')
				break;
			snprintf(p, sizeof(p), "/"); /* the root last */
		} else {
			*slash = '\0';
		}
	}
	return best;
}

size_t memo_auto_limit(const char *proc_cgroup, const char *sys_cgroup, size_t machine_bytes,
                       char *from, size_t cap)
{
	size_t best = machine_bytes;
	snprintf(from, cap, "the machine's memory");
	FILE *f = fopen(proc_cgroup, "re");
	char line[4200], root[4200], where[4400];
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* "ID:CONTROLLERS:PATH": v2's "0::PATH", v1's "N:...memory...:PATH". */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctl = c1 + 1, *path = c2 + 1;
		size_t v = SIZE_MAX;
		if (ctl[0] == '\0') { /* v2: the whole hierarchy, at the root or under unified/ */
			v = lowest_up(sys_cgroup, path, "memory.max", where, sizeof(where));
			if (v == SIZE_MAX) {
				snprintf(root, sizeof(root), "%s/unified", sys_cgroup);
				v = lowest_up(root, path, "memory.max", where, sizeof(where));
			}
		} else {
			bool memory = false;
			char ctls[256];
			snprintf(ctls, sizeof(ctls), "%s", ctl);
			for (char *save, *t = strtok_r(ctls, ",", &save); t;
			     t = strtok_r(NULL, ",", &save))
				memory = memory || strcmp(t, "memory") == 0;
			if (!memory)
				continue;
			snprintf(root, sizeof(root), "%s/memory", sys_cgroup);
			v = lowest_up(root, path, "memory.limit_in_bytes", where, sizeof(where));
		}
		if (v < best) {
			best = v;
			snprintf(from, cap, "%s", where);
		}
	}
	if (f)
		fclose(f);
	return best;
}

size_t memo_auto_bytes(char *why, size_t cap)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	size_t machine = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX;
	char from[4500];
	size_t limit =
	    memo_auto_limit("/proc/self/cgroup", "/sys/fs/cgroup", machine, from, sizeof(from));
	if (limit == SIZE_MAX) { /* nothing says: the old default, 64 MiB */
		snprintf(why, cap, "no memory figure found: 64 MiB");
		return (size_t)64 << 20;
	}
	snprintf(why, cap, "a quarter of the %zu bytes this process may use (%.4000s)", limit,
	         from);
	return limit / MEMO_AUTO_SHARE;
}
