#include "conf/keyval.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct kv_key *kv_find(const struct kv_key *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, keys[i].name) == 0)
			return &keys[i];
	return NULL;
}

int kv_set(const struct kv_key *keys, size_t n, void *obj, void *ctx, const char *name,
           const char *value)
{
	const struct kv_key *k = kv_find(keys, n, name);
	if (!k)
		return -2;
	return k->set(ctx, k, (char *)obj + k->offset, value);
}

bool kv_long(const char *s, long min, long max, long *out)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (end == s || *end || n < min || n > max)
		return false;
	*out = n;
	return true;
}

int kv_choice(const char *v, const char *const *names, bool ignore_case)
{
	for (int i = 0; names[i]; i++)
		if ((ignore_case ? strcasecmp(v, names[i]) : strcmp(v, names[i])) == 0)
			return i;
	return -1;
}

int kv_fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}
