#include "protocol/schema_macro.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct macro {
	char *name, *oid; /* oid: numeric, expanded when defined */
};

static struct {
	struct macro *list;
	size_t n;
} M;

/* Digits and dots, a digit first and last, no two dots together: s[0..len). */
static bool numeric(const char *s, size_t len)
{
	if (len == 0 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[len - 1]))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] == '.' && s[i - 1] != '.'))
			return false;
	return true;
}

static bool keystring(const char *s)
{
	if (!isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 1; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-')
			return false;
	return true;
}

static const struct macro *find(const char *name, size_t len)
{
	for (size_t i = 0; i < M.n; i++)
		if (strlen(M.list[i].name) == len && memcmp(M.list[i].name, name, len) == 0)
			return &M.list[i];
	return NULL;
}

size_t schema_macro_expand(const char *oid, char *out, size_t cap)
{
	size_t len = strlen(oid);
	if (numeric(oid, len)) {
		if (len >= cap)
			return 0;
		memcpy(out, oid, len + 1);
		return len;
	}
	const char *colon = strchr(oid, ':');
	size_t name_len = colon ? (size_t)(colon - oid) : len;
	const struct macro *m = find(oid, name_len);
	if (!m || (colon && !numeric(colon + 1, strlen(colon + 1))))
		return 0;
	int n = colon ? snprintf(out, cap, "%s.%s", m->oid, colon + 1)
	              : snprintf(out, cap, "%s", m->oid);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

int schema_macro_define(const char *name, const char *value, const char *where, char *err,
                        size_t errlen)
{
	char oid[512];
	if (!keystring(name)) {
		snprintf(err, errlen,
		         "%s: objectIdentifier \"%s\": a macro's name is a letter, then letters, "
		         "digits and hyphens",
		         where, name);
		return -1;
	}
	if (!schema_macro_expand(value, oid, sizeof(oid))) {
		snprintf(err, errlen,
		         "%s: objectIdentifier %s: \"%s\" is neither a numeric OID nor "
		         "MACRO[:SUFFIX] of a macro defined before",
		         where, name, value);
		return -1;
	}
	const struct macro *had = find(name, strlen(name));
	if (had && strcmp(had->oid, oid) == 0)
		return 0;
	if (had) {
		snprintf(err, errlen, "%s: objectIdentifier %s is defined already, as %s", where,
		         name, had->oid);
		return -1;
	}
	struct macro *grown = realloc(M.list, (M.n + 1) * sizeof(*grown));
	if (grown)
		M.list = grown;
	char *n = strdup(name), *o = strdup(oid);
	if (!grown || !n || !o) {
		free(n);
		free(o);
		snprintf(err, errlen, "%s: out of memory", where);
		return -1;
	}
	M.list[M.n++] = (struct macro){.name = n, .oid = o};
	return 0;
}

void schema_macro_free(void)
{
	for (size_t i = 0; i < M.n; i++) {
		free(M.list[i].name);
		free(M.list[i].oid);
	}
	free(M.list);
	memset(&M, 0, sizeof(M));
}
