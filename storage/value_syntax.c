#include "storage/value_syntax.h"

#include <stdbool.h>
#include <string.h>

#include "protocol/dn.h"

#define SYN(n) "1.3.6.1.4.1.1466.115.121.1." #n

static bool all_of(const char *v, size_t len, const char *set, bool digits, bool alpha)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];
		bool ok = (digits && c >= '0' && c <= '9') ||
		          (alpha && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) ||
		          (c && strchr(set, c));
		if (!ok)
			return false;
	}
	return true;
}

static bool valid_integer(const char *v, size_t len)
{
	size_t i = len > 0 && v[0] == '-';
	if (i == len || !all_of(v + i, len - i, "", true, false))
		return false;
	return !(v[i] == '0' && (len - i > 1 || i == 1)); /* no leading zeros, no -0 */
}

/* Well-formed UTF-8 (RFC 3629): no overlong forms, surrogates or values past U+10FFFF. */
static bool valid_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
		unsigned c = *p++;
		int more = c < 0x80                 ? 0
		           : c >= 0xc2 && c <= 0xdf ? 1
		           : (c & 0xf0) == 0xe0     ? 2
		           : c >= 0xf0 && c <= 0xf4 ? 3
		                                    : -1;
		if (more < 0 || end - p < more)
			return false;
		unsigned cp = c & (0x3f >> more);
		for (int i = 0; i < more; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (*p & 0x3f);
		}
		if ((more == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (more == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
	}
	return true;
}

/* numericoid (1.2.3) or descr (a name: ALPHA *(ALPHA / DIGIT / "-")). */
static bool valid_oid(const char *v, size_t len)
{
	if (len == 0)
		return false;
	if (v[0] >= '0' && v[0] <= '9') {
		bool digit_before = false;
		for (size_t i = 0; i < len; i++) {
			if (v[i] == '.') {
				if (!digit_before)
					return false;
				digit_before = false;
			} else if (v[i] >= '0' && v[i] <= '9') {
				if (!digit_before && v[i] == '0' && i + 1 < len && v[i + 1] != '.')
					return false;
				digit_before = true;
			} else {
				return false;
			}
		}
		return digit_before;
	}
	return all_of(v, 1, "", false, true) && all_of(v, len, "-", true, true);
}

/* n digits at p as a number within [lo, hi] into *x; false (*x left alone) when one is
 * not a digit or the number is out of range. */
static bool num(const char *p, int n, int lo, int hi, int *x)
{
	int y = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		y = y * 10 + (p[i] - '0');
	}
	if (y < lo || y > hi)
		return false;
	*x = y;
	return true;
}

/* RFC 4517 3.3.13: YYYYMMDDHH[MM[SS]][(.|,)fraction](Z|(+|-)HH[MM]); see the header. */
bool value_gentime(const char *v, size_t len, time_t *t)
{
	int year, mon, day, hour, min = 0, sec = 0, oh = 0, om = 0;
	if (len < 11 || !num(v, 4, 0, 9999, &year) || !num(v + 4, 2, 1, 12, &mon) ||
	    !num(v + 6, 2, 1, 31, &day) || !num(v + 8, 2, 0, 23, &hour))
		return false;
	size_t i = 10;
	if (i + 2 <= len && num(v + i, 2, 0, 59, &min)) {
		i += 2;
		if (i + 2 <= len && num(v + i, 2, 0, 60, &sec))
			i += 2;
	}
	if (i < len && (v[i] == '.' || v[i] == ',')) {
		size_t start = ++i;
		while (i < len && v[i] >= '0' && v[i] <= '9')
			i++; /* a fraction of the last unit given: dropped */
		if (i == start)
			return false;
	}
	int sign = 0;
	if (i + 1 == len && v[i] == 'Z') {
		/* UTC */
	} else if (i < len && (v[i] == '+' || v[i] == '-')) {
		sign = v[i] == '+' ? 1 : -1;
		if (!((len - i == 3 && num(v + i + 1, 2, 0, 23, &oh)) ||
		      (len - i == 5 && num(v + i + 1, 2, 0, 23, &oh) &&
		       num(v + i + 3, 2, 0, 59, &om))))
			return false;
	} else {
		return false;
	}
	struct tm tm = {.tm_year = year - 1900,
	                .tm_mon = mon - 1,
	                .tm_mday = day,
	                .tm_hour = hour,
	                .tm_min = min,
	                .tm_sec = sec};
	*t = timegm(&tm) - sign * (oh * 3600L + om * 60L);
	return true;
}

#define PRINTABLE "'()+,-./:? "

/* n of syntax SYN(n) (no leading zero, as SYN writes it), or -1 for any other OID. */
static int syntax_number(const char *syntax)
{
	static const char prefix[] = SYN();
	if (strncmp(syntax, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	const char *p = syntax + sizeof(prefix) - 1;
	int n = 0;
	if (*p < '1' || *p > '9')
		return -1;
	for (int i = 0; *p; p++, i++) {
		if (*p < '0' || *p > '9' || i == 3)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n;
}

/* Called for every value of every entry imported: one prefix compare and a switch, not a
 * strcmp per known syntax. */
const char *value_syntax_check(const char *syntax, const char *v, size_t len)
{
	if (!syntax)
		return NULL;
	time_t t;
	switch (syntax_number(syntax)) {
	case 27:
		return valid_integer(v, len) ? NULL : "an INTEGER (digits, an optional '-')";
	case 7:
		return (len == 4 && memcmp(v, "TRUE", 4) == 0) ||
		               (len == 5 && memcmp(v, "FALSE", 5) == 0)
		           ? NULL
		           : "a Boolean (TRUE or FALSE)";
	case 12:
		return dn_normalize(v, len, NULL, NULL) == 0 ? NULL : "a DN";
	case 24:
		return value_gentime(v, len, &t) ? NULL : "a Generalized Time (YYYYMMDDHHMMSSZ)";
	case 26:
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)v[i] >= 0x80)
				return "an IA5 String (ASCII only)";
		return NULL;
	case 15:
		return len > 0 && valid_utf8(v, len) ? NULL
		                                     : "a Directory String (non-empty UTF-8)";
	case 38:
		return valid_oid(v, len) ? NULL : "an OID (1.2.3 or a name)";
	case 50:
	case 44:
		return len > 0 && all_of(v, len, PRINTABLE, true, true)
		           ? NULL
		           : "a Printable String (letters, digits, space and '()+,-./:?)";
	case 36:
		return len > 0 && all_of(v, len, " ", true, false)
		           ? NULL
		           : "a Numeric String (digits, spaces)";
	case 11:
		return len == 2 && all_of(v, len, PRINTABLE, true, true)
		           ? NULL
		           : "a two-letter Country String";
	default:
		return NULL;
	}
}
