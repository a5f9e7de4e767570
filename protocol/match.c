#include "protocol/match.h"

#include <string.h>
#include <strings.h>

#include "protocol/dn.h"

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

enum match_rule match_rule_for(const char *name, size_t len)
{
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

void match_lower(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] + ('a' - 'A'));
}

/* Appends in with leading/trailing spaces dropped and inner runs folded to one. */
static int fold_spaces(const char *in, size_t len, struct buf *out, int lower, int drop_hyphens)
{
	if (buf_reserve(out, len) < 0)
		return -1;
	unsigned char *o = out->data + out->len;
	size_t n = 0;
	int pending_space = 0;
	for (size_t i = 0; i < len; i++) {
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
		if (lower && c >= 'A' && c <= 'Z')
			c = (char)(c + ('a' - 'A'));
		o[n++] = (unsigned char)c;
	}
	out->len += n;
	return 0;
}

static int normalize_integer(const char *in, size_t len, struct buf *out)
{
	while (len && in[0] == ' ')
		in++, len--;
	while (len && in[len - 1] == ' ')
		len--;
	int neg = 0;
	if (len && (in[0] == '+' || in[0] == '-')) {
		neg = in[0] == '-';
		in++, len--;
	}
	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (in[i] < '0' || in[i] > '9')
			return -1;
	while (len > 1 && in[0] == '0')
		in++, len--;
	if (len == 1 && in[0] == '0')
		neg = 0;
	if (neg && buf_append(out, "-", 1) < 0)
		return -1;
	return buf_append(out, in, len);
}

int match_normalize(enum match_rule rule, const char *in, size_t len, struct buf *out)
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
	case MATCH_DN:
		return dn_normalize(in, len, out, NULL);
	case MATCH_OCTET:
		return buf_append(out, in, len);
	}
	return -1;
}
