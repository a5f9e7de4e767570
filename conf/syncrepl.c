#include "conf/syncrepl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/filter.h"

void syncrepl_defaults(struct syncrepl_conf *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->filter, "(objectClass=*)");
	strcpy(s->attrs, "*,+");
	s->scope = SYNCREPL_SCOPE_SUB;
	s->type = SYNCREPL_REFRESH_ONLY;
	s->interval = 300;
	s->retry_interval[0] = 60;
	s->retry_count[0] = -1;
	s->nretry = 1;
	s->network_timeout = 5;
}

__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t whylen, const char *fmt,
                                                      ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The next "name=value" word of *p: name into name, the value (unquoted) into value. */
static int next_word(const char **p, char *name, size_t ncap, char *value, size_t vcap, char *why,
                     size_t whylen)
{
	const char *s = *p;
	size_t n = 0, v = 0;
	while (*s && *s != '=' && *s != ' ' && *s != '\t')
		if (n + 1 < ncap)
			name[n++] = *s++;
		else
			return fail(why, whylen, "syncrepl: \"%.40s\" is too long", *p);
	name[n] = '\0';
	if (*s != '=')
		return fail(why, whylen, "syncrepl: \"%s\" is not name=value", name);
	s++;
	bool quoted = *s == '"';
	s += quoted;
	for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
		if (quoted && *s == '"')
			break;
		if (quoted && *s == '\\' && s[1] == '"')
			s++;
		if (v + 1 == vcap)
			return fail(why, whylen, "syncrepl: the value of %s is too long", name);
		value[v++] = *s;
	}
	if (quoted && *s++ != '"')
		return fail(why, whylen, "syncrepl: a double quote is left open after %s=", name);
	value[v] = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	*p = s;
	return 0;
}

/* A whole number in [min, max], or -1. */
static long number(const char *s, long min, long max)
{
	char *end;
	long n = strtol(s, &end, 10);
	return end == s || *end || n < min || n > max ? -1 : n;
}

/* dd:hh:mm:ss (slapd's interval) into seconds, or -1. */
static int interval(const char *s)
{
	int d, h, m, sec;
	char tail;
	if (sscanf(s, "%2d:%2d:%2d:%2d%c", &d, &h, &m, &sec, &tail) != 4 || d < 0 || h < 0 ||
	    h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59)
		return -1;
	int total = ((d * 24 + h) * 60 + m) * 60 + sec;
	return total > 0 ? total : -1;
}

/* "INTERVAL COUNT ..." into s's retry schedule. */
static int retry(struct syncrepl_conf *s, const char *v, char *why, size_t whylen)
{
	char copy[256], *save = NULL;
	snprintf(copy, sizeof(copy), "%s", v);
	int n = 0;
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save), n++) {
		if (n / 2 == SYNCREPL_MAX_RETRY)
			return fail(why, whylen, "syncrepl: retry: at most %s pairs", "8");
		long x = n % 2 == 1 && strcmp(t, "+") == 0 ? -1 : number(t, 1, 86400);
		if (x < 0 && !(n % 2 == 1 && strcmp(t, "+") == 0))
			return fail(why, whylen,
			            "syncrepl: retry: \"%s\" is not a number of seconds or a count "
			            "(or + for forever)",
			            t);
		if (n % 2 == 0)
			s->retry_interval[n / 2] = (int)x;
		else
			s->retry_count[n / 2] = (int)x;
	}
	if (n == 0 || n % 2)
		return fail(why, whylen, "syncrepl: retry=\"%s\": expected INTERVAL COUNT pairs",
		            v);
	for (int i = 0; i < n / 2 - 1; i++)
		if (s->retry_count[i] < 0)
			return fail(why, whylen,
			            "syncrepl: retry=\"%s\": only the last count may be +", v);
	s->nretry = n / 2;
	return 0;
}

/* One of names (a NULL-ended list) into *out as its index. */
static int choice(const char *v, const char *const *names, int *out)
{
	for (int i = 0; names[i]; i++)
		if (strcasecmp(v, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -1;
}

static int copy(char *dst, size_t cap, const char *name, const char *v, char *why, size_t whylen)
{
	if (strlen(v) >= cap)
		return fail(why, whylen, "syncrepl: the value of %s is too long", name);
	strcpy(dst, v);
	return 0;
}

static int valid_dn(const char *v)
{
	struct buf n = {0};
	int rc = dn_normalize(v, strlen(v), &n, NULL);
	buf_free(&n);
	return rc;
}

static int word(struct syncrepl_conf *s, const char *name, const char *v, char *why, size_t whylen)
{
	static const char *const types[] = {"refreshOnly", "refreshAndPersist", NULL};
	static const char *const scopes[] = {"base", "one", "sub", "subord", NULL};
	static const char *const starttls[] = {"no", "yes", "critical", NULL};
	static const char *const reqcert[] = {"demand", "never", NULL};
	int k = 0;
	if (strcmp(name, "rid") == 0) {
		if (s->rid)
			return fail(why, whylen, "syncrepl: only one syncrepl (a second rid=%s)",
			            v);
		long n = number(v, 1, 999);
		if (n < 0)
			return fail(why, whylen, "syncrepl: rid=%s: expected 1 to 999", v);
		s->rid = (int)n;
		return 0;
	}
	if (!s->rid)
		return fail(why, whylen, "syncrepl: the directive starts with rid= (found %s=)",
		            name);
	if (strcmp(name, "provider") == 0) {
		if (strncasecmp(v, "ldap://", 7) != 0 && strncasecmp(v, "ldaps://", 8) != 0)
			return fail(why, whylen,
			            "syncrepl: provider=%s: expected ldap:// or ldaps://", v);
		return copy(s->provider, sizeof(s->provider), name, v, why, whylen);
	}
	if (strcmp(name, "bindmethod") == 0)
		return strcasecmp(v, "simple") == 0
		           ? 0
		           : fail(why, whylen, "syncrepl: bindmethod=%s: only simple is supported",
		                  v);
	if (strcmp(name, "binddn") == 0 || strcmp(name, "searchbase") == 0) {
		if (valid_dn(v) < 0)
			return fail(why, whylen, "syncrepl: \"%s\" is not a valid DN", v);
		return name[0] == 'b'
		           ? copy(s->binddn, sizeof(s->binddn), name, v, why, whylen)
		           : copy(s->searchbase, sizeof(s->searchbase), name, v, why, whylen);
	}
	if (strcmp(name, "credentials") == 0)
		return copy(s->credentials, sizeof(s->credentials), name, v, why, whylen);
	if (strcmp(name, "filter") == 0) {
		if (!filter_string_valid(v))
			return fail(why, whylen, "syncrepl: filter=%s is not a valid filter", v);
		return copy(s->filter, sizeof(s->filter), name, v, why, whylen);
	}
	if (strcmp(name, "attrs") == 0)
		return copy(s->attrs, sizeof(s->attrs), name, v, why, whylen);
	if (strcmp(name, "tls_cacert") == 0)
		return copy(s->tls_cacert, sizeof(s->tls_cacert), name, v, why, whylen);
	if (strcmp(name, "retry") == 0)
		return retry(s, v, why, whylen);
	if (strcmp(name, "interval") == 0) {
		if ((s->interval = interval(v)) < 0)
			return fail(why, whylen, "syncrepl: interval=%s: expected dd:hh:mm:ss", v);
		return 0;
	}
	if (strcmp(name, "network-timeout") == 0) {
		long n = number(v, 1, 3600);
		if (n < 0)
			return fail(why, whylen, "syncrepl: network-timeout=%s: expected 1..3600",
			            v);
		s->network_timeout = (int)n;
		return 0;
	}
	const char *const *names = strcmp(name, "type") == 0          ? types
	                           : strcmp(name, "scope") == 0       ? scopes
	                           : strcmp(name, "starttls") == 0    ? starttls
	                           : strcmp(name, "tls_reqcert") == 0 ? reqcert
	                                                              : NULL;
	if (!names)
		return fail(why, whylen, "syncrepl: unknown word \"%s\"", name);
	if (choice(v, names, &k) < 0) {
		char both[128];
		snprintf(both, sizeof(both), "%s=%s", name, v);
		return fail(why, whylen, "syncrepl: %s is not a value this word takes", both);
	}
	if (names == types)
		s->type = (enum syncrepl_type)k;
	else if (names == scopes)
		s->scope = (enum syncrepl_scope)k;
	else if (names == starttls)
		s->starttls = (enum syncrepl_starttls)k;
	else
		s->tls_reqcert_never = k == 1;
	return 0;
}

int syncrepl_parse(struct syncrepl_conf *s, const char *line, char *why, size_t whylen)
{
	s->set = true;
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p) {
		char name[32], value[1024];
		if (next_word(&p, name, sizeof(name), value, sizeof(value), why, whylen) < 0 ||
		    word(s, name, value, why, whylen) < 0)
			return -1;
	}
	return 0;
}

int syncrepl_check(const struct syncrepl_conf *s, const char *suffix, char *why, size_t whylen)
{
	if (!s->provider[0])
		return fail(why, whylen, "syncrepl: %s is required", "provider=");
	if (!s->searchbase[0])
		return fail(why, whylen, "syncrepl: %s is required", "searchbase=");
	if (!s->binddn[0] != !s->credentials[0])
		return fail(why, whylen, "syncrepl: %s", "binddn= and credentials= go together");
	struct buf a = {0}, b = {0};
	int same = dn_normalize(s->searchbase, strlen(s->searchbase), &a, NULL) == 0 &&
	           dn_normalize(suffix, strlen(suffix), &b, NULL) == 0 && a.len == b.len &&
	           memcmp(a.data, b.data, a.len) == 0;
	buf_free(&a);
	buf_free(&b);
	if (!same)
		return fail(why, whylen,
		            "syncrepl: searchbase=\"%s\" must be the suffix (the replica holds the "
		            "provider's tree from its top)",
		            s->searchbase);
	return 0;
}
