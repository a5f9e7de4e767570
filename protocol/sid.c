/* Windows SIDs: see sid.h. */
#include "protocol/sid.h"

#include <stdint.h>
#include <strings.h>

/* The decimal number at *p (before end) into *v, at most max; *p past it. false when
 * there is none, or it is larger. */
static bool number(const char **p, const char *end, uint64_t max, uint64_t *v)
{
	const char *q = *p;
	uint64_t n = 0;
	while (q < end && *q >= '0' && *q <= '9' && q - *p < 20) {
		n = n * 10 + (uint64_t)(*q - '0');
		if (n > max)
			return false;
		q++;
	}
	if (q == *p)
		return false;
	*p = q;
	*v = n;
	return true;
}

int sid_from_string(const char *s, size_t len, unsigned char *out)
{
	const char *p = s, *end = s + len;
	uint64_t rev, auth, sub;
	if (len < 2 || (p[0] != 'S' && p[0] != 's') || p[1] != '-')
		return -1;
	p += 2;
	if (!number(&p, end, 255, &rev) || p >= end || *p++ != '-' ||
	    !number(&p, end, 0xffffffffffffULL, &auth))
		return -1;
	int n = 0;
	while (p < end) {
		if (*p++ != '-' || n == SID_MAX_SUBAUTH || !number(&p, end, 0xffffffffULL, &sub))
			return -1;
		unsigned char *q = out + 8 + 4 * n++;
		for (int i = 0; i < 4; i++)
			q[i] = (unsigned char)(sub >> (8 * i));
	}
	out[0] = (unsigned char)rev;
	out[1] = (unsigned char)n;
	for (int i = 0; i < 6; i++)
		out[2 + i] = (unsigned char)(auth >> (8 * (5 - i)));
	return 8 + 4 * n;
}

bool sid_attribute(const char *attr, size_t len)
{
	static const struct {
		const char *name;
		size_t len;
	} names[] = {
	    {"objectSid", 9}, {"sIDHistory", 10}, {"securityIdentifier", 18}, {"tokenGroups", 11}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (len == names[i].len && strncasecmp(attr, names[i].name, len) == 0)
			return true;
	return false;
}
