#include "protocol/value.h"

#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <wctype.h>

#include "protocol/schema.h"

struct rule_entry {
	const char *name;
	enum match_rule rule;
};

/* Attributes of core/cosine/inetorgperson/nis whose equality is not caseIgnore. */
static const struct rule_entry rule_table[] = {
    {"member", MATCH_DN},
    {"uniquemember", MATCH_DN},
    {"manager", MATCH_DN},
    {"owner", MATCH_DN},
    {"seealso", MATCH_DN},
    {"secretary", MATCH_DN},
    {"roleoccupant", MATCH_DN},
    {"distinguishedname", MATCH_DN},
    {"aliasedobjectname", MATCH_DN},
    {"entrydn", MATCH_DN},
    {"memberof", MATCH_DN},
    {"telephonenumber", MATCH_TELEPHONE},
    {"mobile", MATCH_TELEPHONE},
    {"homephone", MATCH_TELEPHONE},
    {"pager", MATCH_TELEPHONE},
    {"facsimiletelephonenumber", MATCH_TELEPHONE},
    {"uidnumber", MATCH_INTEGER},
    {"gidnumber", MATCH_INTEGER},
    {"userpassword", MATCH_OCTET},
    {"jpegphoto", MATCH_OCTET},
    {"usercertificate", MATCH_OCTET},
    {"homedirectory", MATCH_CASE_EXACT},
    {"loginshell", MATCH_CASE_EXACT},
    {"memberuid", MATCH_CASE_EXACT},
};

enum match_rule value_rule_for(const char *name, size_t len)
{
	const struct schema_attr *at = schema_attr_find(name, len);
	if (at)
		return at->eq;
	if (schema_loaded())
		return MATCH_NONE; /* an attribute the schema does not define */
	/* Attribute options (";binary", ";lang-en") do not change the rule. */
	const char *semi = memchr(name, ';', len);
	if (semi)
		len = (size_t)(semi - name);
	for (size_t i = 0; i < sizeof(rule_table) / sizeof(rule_table[0]); i++) {
		if (strlen(rule_table[i].name) == len &&
		    strncasecmp(rule_table[i].name, name, len) == 0)
			return rule_table[i].rule;
	}
	return MATCH_CASE_IGNORE;
}

void value_lower(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] + ('a' - 'A'));
}

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_init(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/*
 * Lowercases the UTF-8 character at in (Unicode simple case folding through
 * the C.UTF-8 locale) into o. Returns (bytes written << 8) | bytes read. An
 * invalid sequence, or a character whose lower case would take more bytes,
 * is copied as it is, so a normal form is never longer than its input.
 */
static size_t fold_utf8(const char *in, size_t avail, unsigned char *o)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t need = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 1;
	wint_t wc = need == 4 ? s[0] & 0x07 : need == 3 ? s[0] & 0x0f : s[0] & 0x1f;
	bool valid = need > 1 && need <= avail;
	for (size_t k = 1; valid && k < need; k++) {
		valid = (s[k] & 0xc0) == 0x80;
		wc = (wc << 6) | (s[k] & 0x3f);
	}
	pthread_once(&utf8_once, utf8_init);
	if (!valid || !utf8_locale) {
		o[0] = s[0];
		return (1u << 8) | 1u;
	}
	wint_t lc = towlower_l(wc, utf8_locale);
	size_t out = lc < 0x80 ? 1 : lc < 0x800 ? 2 : lc < 0x10000 ? 3 : 4;
	if (out > need) {
		memcpy(o, s, need);
		return (need << 8) | need;
	}
	if (out == 1) {
		o[0] = (unsigned char)lc;
	} else {
		static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
		for (size_t k = out - 1; k > 0; k--, lc >>= 6)
			o[k] = (unsigned char)(0x80 | (lc & 0x3f));
		o[0] = (unsigned char)(lead[out] | lc);
	}
	return (out << 8) | need;
}

/* Eight copies of byte b, one in each byte of a word. */
#define BYTES8(b) (0x0101010101010101ull * (uint8_t)(b))

/*
 * Copies in[0..len) to o (folded to lower case if lower) eight bytes at a time, up to
 * the first word with a space or a non-ASCII byte; returns how many bytes it copied.
 */
static size_t ascii_words(const char *in, size_t len, unsigned char *o, int lower)
{
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t x;
		memcpy(&x, in + i, 8);
		uint64_t sp = x ^ BYTES8(' '); /* a zero byte where x has a space */
		if ((x | ((sp - BYTES8(1)) & ~sp)) & BYTES8(0x80))
			break; /* a non-ASCII byte or a space */
		if (lower) {
			/* Every byte is below 0x80, so no sum carries into the next byte: the top
			 * bit of a byte of ge_a is set where it is >= 'A', of gt_z where > 'Z'. */
			uint64_t ge_a = x + BYTES8(0x80 - 'A'), gt_z = x + BYTES8(0x80 - 'Z' - 1);
			x |= ((ge_a ^ gt_z) & BYTES8(0x80)) >> 2; /* 0x20: upper to lower case */
		}
		memcpy(o + i, &x, 8);
	}
	return i;
}

/* Appends in with leading/trailing spaces dropped and inner runs folded to one. */
static int fold_spaces(const char *in, size_t len, struct buf *out, int lower, int drop_hyphens)
{
	if (len == 0)
		return 0; /* out->data may still be NULL: no pointer arithmetic on it */
	if (buf_reserve(out, len) < 0)
		return -1;
	unsigned char *o = out->data + out->len;
	/* The usual value (a uid, a mail address) starts with ASCII without spaces: that
	 * much goes a word at a time, the rest (and every byte of a hyphen-dropping rule)
	 * through the loop below. */
	size_t i = drop_hyphens ? 0 : ascii_words(in, len, o, lower);
	size_t n = i;
	int pending_space = 0;
	for (; i < len; i++) {
		char c = in[i];
		if (c == ' ') {
			if (!drop_hyphens)
				pending_space = n > 0;
			continue;
		}
		if (drop_hyphens && c == '-')
			continue;
		if (pending_space) {
			o[n++] = ' ';
			pending_space = 0;
		}
		if (lower && (unsigned char)c >= 0x80) {
			size_t used = fold_utf8(in + i, len - i, o + n);
			n += used >> 8;
			i += (used & 0xff) - 1;
			continue;
		}
		if (lower && c >= 'A' && c <= 'Z')
			c = (char)(c + ('a' - 'A'));
		o[n++] = (unsigned char)c;
	}
	out->len += n;
	return 0;
}

/* Drops the spaces at both ends of (*in)[0..*len). */
static void trim_spaces(const char **in, size_t *len)
{
	while (*len && (*in)[0] == ' ')
		(*in)++, (*len)--;
	while (*len && (*in)[*len - 1] == ' ')
		(*len)--;
}

/* An OID stays; an attribute type or object class name becomes its OID. */
static int normalize_oid(const char *in, size_t len, struct buf *out)
{
	trim_spaces(&in, &len);
	if (len == 0)
		return -1;
	const struct schema_oc *oc = schema_oc_find(in, len);
	const struct schema_attr *at = oc ? NULL : schema_attr_find(in, len);
	const char *oid = oc ? oc->oid : at ? at->oid : NULL;
	if (oid)
		return buf_append(out, oid, strlen(oid));
	size_t start = out->len;
	if (buf_append(out, in, len) < 0)
		return -1;
	value_lower((char *)out->data + start, len);
	return 0;
}

static int normalize_integer(const char *in, size_t len, struct buf *out)
{
	trim_spaces(&in, &len);
	/* RFC 4517 INTEGER: "0", or an optional "-" and digits without leading zeros. */
	int neg = 0;
	if (len && in[0] == '-') {
		neg = 1;
		in++, len--;
	}
	if (len == 0 || (in[0] == '0' && (len > 1 || neg)))
		return -1;
	for (size_t i = 0; i < len; i++)
		if (in[i] < '0' || in[i] > '9')
			return -1;
	if (neg && buf_append(out, "-", 1) < 0)
		return -1;
	return buf_append(out, in, len);
}

int value_normalize(enum match_rule rule, const char *in, size_t len, struct buf *out)
{
	switch (rule) {
	case MATCH_CASE_IGNORE:
		return fold_spaces(in, len, out, 1, 0);
	case MATCH_CASE_EXACT:
		return fold_spaces(in, len, out, 0, 0);
	case MATCH_TELEPHONE:
		return fold_spaces(in, len, out, 1, 1);
	case MATCH_INTEGER:
		return normalize_integer(in, len, out);
	case MATCH_OCTET:
		return buf_append(out, in, len);
	case MATCH_NUMERIC:
		return fold_spaces(in, len, out, 0, 1) < 0 ? -1 : 0;
	case MATCH_OID:
		return normalize_oid(in, len, out);
	case MATCH_OID_FIRST: {
		/* "( 2.5.4.3 NAME ..." -> its first component; a bare OID or name as is. */
		while (len && (*in == ' ' || *in == '('))
			in++, len--;
		size_t n = 0;
		while (n < len && in[n] != ' ' && in[n] != ')')
			n++;
		return normalize_oid(in, n, out);
	}
	case MATCH_DN: /* dn_normalize's: see match_normalize */
	case MATCH_NONE:
		return -1;
	}
	return -1;
}
