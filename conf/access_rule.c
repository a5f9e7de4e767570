#include "conf/access_rule.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/filter.h"

static const char *const level_names[] = {
    [ACCESS_NONE] = "none",       [ACCESS_DISCLOSE] = "disclose", [ACCESS_AUTH] = "auth",
    [ACCESS_COMPARE] = "compare", [ACCESS_SEARCH] = "search",     [ACCESS_READ] = "read",
};

const char *access_level_name(enum access_level level)
{
	return level_names[level];
}

/* A reader over one piece of rule text. */
struct lexer {
	const char *p;
	char *why;
	size_t whylen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct lexer *lx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lx->why, lx->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * The next word into out (cap bytes): up to white space outside double quotes and
 * parentheses; quotes are dropped (\" inside them is a quote). Returns its length,
 * 0 at the end, -1 when too long or a quote is left open.
 */
static int next_word(struct lexer *lx, char *out, size_t cap)
{
	const char *p = lx->p;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = 0;
	bool quoted = false;
	int depth = 0;
	for (; *p && (quoted || depth > 0 || (*p != ' ' && *p != '\t')); p++) {
		char c = *p;
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (quoted && c == '\\' && p[1] == '"')
			c = *++p;
		else if (!quoted && c == '(')
			depth++;
		else if (!quoted && c == ')' && depth > 0)
			depth--;
		if (n + 1 >= cap)
			return fail(lx, "\"%.40s...\" is too long", lx->p);
		out[n++] = c;
	}
	out[n] = '\0';
	if (quoted)
		return fail(lx, "a double quote is left open in \"%s\"", lx->p);
	lx->p = p;
	return (int)n;
}

/* "dn" or "dn.STYLE" (key, up to the '=') into *scope. */
static int dn_style(struct lexer *lx, const char *key, enum access_scope *scope)
{
	static const struct {
		const char *name;
		enum access_scope scope;
	} styles[] = {
	    {"base", ACCESS_SCOPE_BASE},       {"baseobject", ACCESS_SCOPE_BASE},
	    {"exact", ACCESS_SCOPE_BASE},      {"one", ACCESS_SCOPE_ONE},
	    {"onelevel", ACCESS_SCOPE_ONE},    {"sub", ACCESS_SCOPE_SUBTREE},
	    {"subtree", ACCESS_SCOPE_SUBTREE}, {"children", ACCESS_SCOPE_CHILDREN},
	};
	if (strcasecmp(key, "dn") == 0) {
		*scope = ACCESS_SCOPE_BASE;
		return 0;
	}
	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
		if (strcasecmp(key + 3, styles[i].name) == 0) {
			*scope = styles[i].scope;
			return 0;
		}
	return fail(lx,
	            "\"%s\": the dn styles are base, one, subtree and children "
	            "(regular expressions are not supported)",
	            key);
}

/* A copy of value if it is a valid DN (syntax only: the schema is not loaded yet). */
static int take_dn(struct lexer *lx, char **dst, const char *value)
{
	struct buf n = {0};
	int rc = dn_normalize(value, strlen(value), &n, NULL);
	buf_free(&n);
	if (rc < 0)
		return fail(lx, "\"%s\" is not a valid DN", value);
	free(*dst);
	return (*dst = strdup(value)) ? 0 : fail(lx, "out of memory%s", "");
}

static int take_filter(struct lexer *lx, struct access_rule *r, const char *value)
{
	if (!filter_string_valid(value))
		return fail(lx, "filter=%s is not a valid LDAP filter (RFC 4515)", value);
	free(r->filter);
	return (r->filter = strdup(value)) ? 0 : fail(lx, "out of memory%s", "");
}

static int take_attrs(struct lexer *lx, struct access_rule *r, const char *value)
{
	size_t n = 1;
	for (const char *p = value; *p; p++)
		n += *p == ',';
	char **attrs = calloc(n + 1, sizeof(*attrs));
	if (!attrs)
		return fail(lx, "out of memory%s", "");
	for (size_t i = 0; r->attrs && r->attrs[i]; i++)
		free(r->attrs[i]);
	free(r->attrs);
	r->attrs = attrs;
	const char *p = value;
	for (size_t i = 0; i < n; i++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0)
			return fail(lx, "attrs=%s: an empty attribute name", value);
		if (p[0] == '!')
			return fail(lx, "attrs=%s: \"!class\" is not supported", value);
		for (size_t j = p[0] == '@'; j < len; j++)
			if (!(p[j] == '-' || p[j] == '.' || (p[j] >= '0' && p[j] <= '9') ||
			      ((p[j] | 0x20) >= 'a' && (p[j] | 0x20) <= 'z')))
				return fail(lx, "attrs=%s: not an attribute name", value);
		if (!(attrs[i] = strndup(p, len)))
			return fail(lx, "out of memory%s", "");
		p += len + 1;
	}
	return 0;
}

/* WHAT: the words before the first "by"; word holds the first of them. */
static int parse_what(struct lexer *lx, struct access_rule *r, char *word, size_t cap)
{
	bool any = false;
	int n = (int)strlen(word);
	for (; n > 0 && strcasecmp(word, "by") != 0; n = next_word(lx, word, cap)) {
		char *eq = strchr(word, '=');
		if (strcmp(word, "*") == 0) {
			any = true;
			continue;
		}
		if (!eq)
			return fail(lx, "\"%s\": expected *, dn=, filter= or attrs=", word);
		*eq = '\0';
		const char *value = eq + 1;
		int rc;
		if (strcasecmp(word, "dn") == 0 || strncasecmp(word, "dn.", 3) == 0)
			rc = dn_style(lx, word, &r->scope) < 0 ? -1 : take_dn(lx, &r->dn, value);
		else if (strcasecmp(word, "filter") == 0)
			rc = take_filter(lx, r, value);
		else if (strcasecmp(word, "attrs") == 0 || strcasecmp(word, "attr") == 0)
			rc = take_attrs(lx, r, value);
		else if (strncasecmp(word, "val", 3) == 0)
			rc = fail(lx, "\"%s=\": value rules are not supported", word);
		else
			rc = fail(lx, "\"%s=\": expected dn=, filter= or attrs=", word);
		if (rc < 0)
			return -1;
	}
	if (n < 0)
		return -1;
	if (!any && !r->dn && !r->filter && !r->attrs)
		return fail(lx, "\"to\" names nothing: expected *, dn=, filter= or attrs=%s", "");
	return n;
}

static int parse_level(struct lexer *lx, const char *word, enum access_level *level)
{
	static const char *const implied_read[] = {"write", "add", "delete", "manage"};
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcasecmp(word, level_names[i]) == 0) {
			*level = (enum access_level)i;
			return 0;
		}
	for (size_t i = 0; i < sizeof(implied_read) / sizeof(implied_read[0]); i++)
		if (strcasecmp(word, implied_read[i]) == 0) {
			*level = ACCESS_READ; /* a read-only server: these grant reading */
			return 0;
		}
	if (word[0] == '=' || word[0] == '+' || word[0] == '-')
		return fail(lx, "\"%s\": privileges (=rscx) are not supported, use a level", word);
	return fail(lx, "\"%s\": expected a level (none, disclose, auth, compare, search, read)",
	            word);
}

/* group, group/CLASS or group/CLASS/ATTR (key, up to the '='). */
static int group_spec(struct lexer *lx, struct access_who *who, const char *key)
{
	const char *cls = key[5] == '/' ? key + 6 : NULL;
	const char *attr = cls ? strchr(cls, '/') : NULL;
	if (key[5] != '\0' && !cls)
		return fail(lx, "\"%s\": expected group, group/CLASS or group/CLASS/ATTR", key);
	who->group_class =
	    cls ? strndup(cls, attr ? (size_t)(attr - cls) : strlen(cls)) : strdup("groupOfNames");
	who->group_attr = strdup(attr ? attr + 1 : "member");
	if (!who->group_class || !who->group_attr)
		return fail(lx, "out of memory%s", "");
	if (!who->group_class[0] || !who->group_attr[0] || strchr(who->group_attr, '/'))
		return fail(lx, "\"%s\": expected group, group/CLASS or group/CLASS/ATTR", key);
	return 0;
}

/* peername.ip=IP[%MASK], peername.ipv6=IP[%MASK], peername.path=PATH (key up to '='). */
static int peer_spec(struct lexer *lx, struct access_who *who, const char *key, const char *value)
{
	char why[200];
	bool v6 = strcasecmp(key, "peername.ipv6") == 0;
	if (v6 || strcasecmp(key, "peername.ip") == 0) {
		who->kind = ACCESS_WHO_PEER_IP;
		if (ip_net_parse_mask(&who->net, value, why, sizeof(why)) < 0)
			return fail(lx, "%s: %s", key, why);
		if (who->net.addr.family != (v6 ? 6 : 4))
			return fail(lx, "%s: \"%s\" is not an %s address", key, value,
			            v6 ? "IPv6" : "IPv4");
		return 0;
	}
	if (strcasecmp(key, "peername.path") == 0) {
		who->kind = ACCESS_WHO_PEER_PATH;
		if (value[0] != '/')
			return fail(lx, "peername.path: \"%s\" is not an absolute socket path",
			            value);
		if (!(who->path = strdup(value)))
			return fail(lx, "out of memory%s", "");
		return 0;
	}
	return fail(lx,
	            "\"%s=\": expected peername.ip=IP[%%MASK], peername.ipv6=IP[%%MASK] or "
	            "peername.path=PATH (other peername styles are not supported)",
	            key);
}

static int parse_who(struct lexer *lx, struct access_who *who, char *word)
{
	static const struct {
		const char *name;
		enum access_who_kind kind;
	} plain[] = {{"*", ACCESS_WHO_ANY},
	             {"anonymous", ACCESS_WHO_ANONYMOUS},
	             {"users", ACCESS_WHO_USERS},
	             {"self", ACCESS_WHO_SELF}};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (strcasecmp(word, plain[i].name) == 0) {
			who->kind = plain[i].kind;
			return 0;
		}
	char *eq = strchr(word, '=');
	if (eq) {
		*eq = '\0';
		if (strcasecmp(word, "dn") == 0 || strncasecmp(word, "dn.", 3) == 0) {
			who->kind = ACCESS_WHO_DN;
			return dn_style(lx, word, &who->scope) < 0 ? -1
			                                           : take_dn(lx, &who->dn, eq + 1);
		}
		if (strncasecmp(word, "peername", 8) == 0)
			return peer_spec(lx, who, word, eq + 1);
		if (strncasecmp(word, "group", 5) == 0 && (word[5] == '\0' || word[5] == '/')) {
			who->kind = ACCESS_WHO_GROUP;
			return group_spec(lx, who, word) < 0 ? -1 : take_dn(lx, &who->dn, eq + 1);
		}
	}
	return fail(lx,
	            "\"%s\": expected *, anonymous, users, self, dn[.style]=DN, group=DN or "
	            "peername.ip=IP after \"by\"",
	            word);
}

/* "by WHO [LEVEL] [stop]" clauses until the end; word holds "by". */
static int parse_by(struct lexer *lx, struct access_rule *r, char *word, size_t cap)
{
	int n = (int)strlen(word);
	while (n > 0) {
		if (strcasecmp(word, "by") != 0)
			return fail(lx, "\"%s\": expected \"by\"", word);
		if ((n = next_word(lx, word, cap)) <= 0)
			return n < 0
			           ? -1
			           : fail(lx, "\"by\" needs a who (*, anonymous, users...)%s", "");
		struct access_who *who = realloc(r->who, (size_t)(r->nwho + 1) * sizeof(*who));
		if (!who)
			return fail(lx, "out of memory%s", "");
		r->who = who;
		who = &r->who[r->nwho++];
		memset(who, 0, sizeof(*who));
		if (parse_who(lx, who, word) < 0)
			return -1;
		n = next_word(lx, word, cap);
		bool control =
		    n > 0 && (strcasecmp(word, "stop") == 0 || strcasecmp(word, "continue") == 0 ||
		              strcasecmp(word, "break") == 0);
		if (n > 0 && !control && strcasecmp(word, "by") != 0) { /* the level */
			if (parse_level(lx, word, &who->level) < 0)
				return -1;
			n = next_word(lx, word, cap);
		}
		if (n > 0 && (strcasecmp(word, "continue") == 0 || strcasecmp(word, "break") == 0))
			return fail(
			    lx, "\"%s\" is not supported: the first matching clause decides", word);
		if (n > 0 && strcasecmp(word, "stop") == 0)
			n = next_word(lx, word, cap);
	}
	return n < 0 ? -1 : 0;
}

bool access_rule_starts(const char *text)
{
	text += strspn(text, " \t");
	return strncasecmp(text, "to", 2) == 0 && (text[2] == ' ' || text[2] == '\t');
}

int access_rule_parse(struct access_rule *r, const char *text, char *why, size_t whylen)
{
	struct lexer lx = {.p = text, .why = why, .whylen = whylen};
	char word[1024];
	int n = next_word(&lx, word, sizeof(word));
	if (n < 0)
		return -1;
	if (n > 0 && strcasecmp(word, "to") == 0) {
		if ((n = next_word(&lx, word, sizeof(word))) < 0)
			return -1;
		if ((n = parse_what(&lx, r, word, sizeof(word))) < 0)
			return -1;
	} else if (n == 0 || strcasecmp(word, "by") != 0) {
		return fail(&lx, "expected \"to WHAT by WHO LEVEL\" or a \"by\" line, got \"%s\"",
		            text);
	}
	return n == 0 ? 0 : parse_by(&lx, r, word, sizeof(word));
}

void access_rule_free(struct access_rule *r)
{
	free(r->dn);
	free(r->filter);
	for (size_t i = 0; r->attrs && r->attrs[i]; i++)
		free(r->attrs[i]);
	free(r->attrs);
	for (int i = 0; i < r->nwho; i++) {
		free(r->who[i].dn);
		free(r->who[i].group_class);
		free(r->who[i].group_attr);
		free(r->who[i].path);
	}
	free(r->who);
	memset(r, 0, sizeof(*r));
}

void access_rule_number(struct access_rule *rules, int nrules, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[ACCESS_RULE_LINE_MAX];
	bool in_access = false;
	int lineno = 0, n = 0;
	while (n < nrules && fgets(line, sizeof(line), f)) {
		lineno++;
		const char *p = line + strspn(line, " \t");
		if (*p == '\0' || *p == '\n' || *p == '#' || *p == ';')
			continue;
		if (p == line) { /* a key line */
			size_t klen = strcspn(p, " \t=:");
			in_access = klen == 6 && strncmp(p, "access", 6) == 0;
			if (!in_access)
				continue;
			p += klen;
			p += strspn(p, " \t");
			p += *p == '=' || *p == ':';
		}
		if (in_access && access_rule_starts(p))
			rules[n++].line = lineno;
	}
	fclose(f);
}
