#include "protocol/match.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/value.h"

enum match_rule match_rule_for(const char *name, size_t len)
{
	return value_rule_for(name, len);
}

void match_lower(char *s, size_t len)
{
	value_lower(s, len);
}

int match_normalize(enum match_rule rule, const char *in, size_t len, struct buf *out)
{
	if (rule == MATCH_DN)
		return dn_normalize(in, len, out, NULL);
	return value_normalize(rule, in, len, out);
}

int match_compare(enum match_rule rule, const void *pa, size_t alen, const void *pb, size_t blen)
{
	const unsigned char *a = pa, *b = pb;
	if (rule == MATCH_INTEGER) {
		int an = alen && a[0] == '-', bn = blen && b[0] == '-';
		if (an != bn)
			return an ? -1 : 1;
		int mag = alen != blen ? (alen < blen ? -1 : 1) : memcmp(a, b, alen);
		return an ? -mag : mag;
	}
	size_t n = alen < blen ? alen : blen;
	int c = n ? memcmp(a, b, n) : 0;
	return c ? c : (alen > blen) - (alen < blen);
}

/* True if option o[0..olen) is one of the ';'-separated options in opts[0..len). A
 * language range (RFC 3866 2.3: "lang-" then a tag prefix ending in '-', such as
 * "lang-en-", or "lang-" alone) selects the tag without its last '-' ("lang-en") and
 * every tag it prefixes ("lang-en-us"); "lang-" selects every language tag. */
static bool has_option(const char *opts, size_t len, const char *o, size_t olen)
{
	bool range = olen >= 5 && o[olen - 1] == '-' && strncasecmp(o, "lang-", 5) == 0;
	while (len > 0) {
		const char *semi = memchr(opts, ';', len);
		size_t n = semi ? (size_t)(semi - opts) : len;
		if (n == olen && strncasecmp(opts, o, n) == 0)
			return true;
		if (range && n >= 5 && (n == olen - 1 || n > olen) &&
		    strncasecmp(opts, o, olen == 5 ? 5 : (n == olen - 1 ? n : olen)) == 0)
			return true;
		if (!semi)
			break;
		len -= n + 1;
		opts = semi + 1;
	}
	return false;
}

bool match_desc_options(const char *want, size_t wlen, const char *have, size_t hlen)
{
	const char *ws = memchr(want, ';', wlen), *hs = memchr(have, ';', hlen);
	const char *hopts = hs ? hs + 1 : "";
	size_t hlen_opts = hs ? hlen - (size_t)(hs - have) - 1 : 0;
	for (const char *o = ws ? ws + 1 : NULL; o;) {
		size_t left = wlen - (size_t)(o - want);
		const char *semi = memchr(o, ';', left);
		size_t n = semi ? (size_t)(semi - o) : left;
		if (!has_option(hopts, hlen_opts, o, n))
			return false;
		o = semi ? semi + 1 : NULL;
	}
	return true;
}

bool match_desc(const char *want, size_t wlen, const char *have, size_t hlen)
{
	if (wlen == 0 || hlen == 0)
		return false; /* an empty description names nothing */
	const char *ws = memchr(want, ';', wlen), *hs = memchr(have, ';', hlen);
	size_t wb = ws ? (size_t)(ws - want) : wlen, hb = hs ? (size_t)(hs - have) : hlen;
	if (wb != hb || strncasecmp(want, have, wb) != 0)
		return false;
	return match_desc_options(want, wlen, have, hlen);
}
