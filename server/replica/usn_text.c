/* uSNChanged polling's text forms: see usn_text.h. */
#include "server/replica/usn_text.h"
#include "server/replica/ds389.h"

#include <stdio.h>
#include <string.h>

#define INV_KEY ";invocationId="

int usn_cookie_parse(const char *c, size_t len, long long *usn, char *inv, size_t cap)
{
	const char *end = c + len, *semi = memchr(c, ';', len);
	size_t klen = strlen(INV_KEY);
	if (len < 4 || memcmp(c, "usn=", 4) != 0 || !semi || (size_t)(end - semi) < klen ||
	    memcmp(semi, INV_KEY, klen) != 0)
		return -1;
	const char *g = semi + klen;
	size_t glen = (size_t)(end - g);
	if (glen >= cap || memchr(g, '\0', glen) || memchr(g, ';', glen))
		return -1;
	long long n = ds389_decimal(c + 4, (size_t)(semi - c - 4));
	if (n < 0)
		return -1;
	*usn = n;
	memcpy(inv, g, glen);
	inv[glen] = '\0';
	return 0;
}

int usn_cookie_format(long long usn, const char *inv, char *out, size_t cap)
{
	int n = snprintf(out, cap, "usn=%lld" INV_KEY "%s", usn, inv);
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

int usn_range_end(const char *t, size_t *blen, long long *hi)
{
	const char *o = strcasestr(t, ";range=");
	const char *dash = o ? strchr(o + 7, '-') : NULL;
	if (!dash || dash == o + 7)
		return -1;
	*blen = (size_t)(o - t);
	if (strcmp(dash + 1, "*") == 0)
		return 0;
	*hi = ds389_decimal(dash + 1, strlen(dash + 1));
	return *hi < 0 ? -1 : 1;
}
