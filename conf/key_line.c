/* The line of a config file that set a key (key_line.h). */
#include "conf/key_line.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int config_key_line(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t klen = strlen(key), cap = 0;
	char *line = NULL;
	int lineno = 0, found = 0;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		if (strncmp(line, key, klen) != 0)
			continue; /* another key, a comment, or an indented continuation line */
		const char *p = line + klen;
		p += strspn(p, " \t");
		if (*p == '=' || *p == ':')
			found = lineno;
	}
	free(line);
	fclose(f);
	return found;
}

const char *config_key_where(const char *path, const char *key, char where[static CONFIG_KEY_WHERE])
{
	int line = config_key_line(path, key);
	if (line > 0)
		snprintf(where, CONFIG_KEY_WHERE, "%s:%d", path, line);
	else
		snprintf(where, CONFIG_KEY_WHERE, "%s", path);
	return where;
}
