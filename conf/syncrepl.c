#include "conf/syncrepl.h"

#include <ldap.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "conf/keyval.h"
#include "protocol/buf.h"
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
			return kv_fail(why, whylen, "syncrepl: \"%.40s\" is too long", *p);
	name[n] = '\0';
	if (*s != '=')
		return kv_fail(why, whylen, "syncrepl: \"%s\" is not name=value", name);
	s++;
	bool quoted = *s == '"';
	s += quoted;
	for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
		if (quoted && *s == '"')
			break;
		if (quoted && *s == '\\' && s[1] == '"')
			s++;
		if (v + 1 == vcap)
			return kv_fail(why, whylen, "syncrepl: the value of %s is too long", name);
		value[v++] = *s;
	}
	if (quoted && *s++ != '"')
		return kv_fail(why, whylen,
		               "syncrepl: a double quote is left open after %s=", name);
	value[v] = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	*p = s;
	return 0;
}

/* A whole number in [min, max], or -1. */
static long number(const char *s, long min, long max)
{
	long n;
	return kv_long(s, min, max, &n) ? n : -1;
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
			return kv_fail(why, whylen, "syncrepl: retry: at most %s pairs", "8");
		long x = n % 2 == 1 && strcmp(t, "+") == 0 ? -1 : number(t, 1, 86400);
		if (x < 0 && !(n % 2 == 1 && strcmp(t, "+") == 0))
			return kv_fail(
			    why, whylen,
			    "syncrepl: retry: \"%s\" is not a number of seconds or a count "
			    "(or + for forever)",
			    t);
		if (n % 2 == 0)
			s->retry_interval[n / 2] = (int)x;
		else
			s->retry_count[n / 2] = (int)x;
	}
	if (n == 0 || n % 2)
		return kv_fail(why, whylen, "syncrepl: retry=\"%s\": expected INTERVAL COUNT pairs",
		               v);
	for (int i = 0; i < n / 2 - 1; i++)
		if (s->retry_count[i] < 0)
			return kv_fail(why, whylen,
			               "syncrepl: retry=\"%s\": only the last count may be +", v);
	s->nretry = n / 2;
	return 0;
}

/* Where a word's error goes (the ctx of the set functions below). */
struct word_ctx {
	char *why;
	size_t whylen;
};

/*
 * The set functions of the word table (conf/keyval.h): each reads one word's value into
 * its member of struct syncrepl_conf (field), or the whole struct for retry. 0, or -1 with
 * the reason in ctx.
 */

static int set_copy(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	if (strlen(v) >= k->size)
		return kv_fail(w->why, w->whylen, "syncrepl: the value of %s is too long", k->name);
	strcpy(field, v);
	return 0;
}

static int set_provider(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	if (strncasecmp(v, "ldap://", 7) != 0 && strncasecmp(v, "ldaps://", 8) != 0)
		return kv_fail(w->why, w->whylen,
		               "syncrepl: provider=%s: expected ldap:// or ldaps://", v);
	return set_copy(ctx, k, field, v);
}

/* seed: where a new replica takes its first copy of the file (a peer's /snapshot). */
static int set_seed(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	if (strncasecmp(v, "http://", 7) != 0 && strncasecmp(v, "https://", 8) != 0)
		return kv_fail(w->why, w->whylen,
		               "syncrepl: seed=%s: expected an http:// or https:// URL (a peer's "
		               "/snapshot)",
		               v);
	return set_copy(ctx, k, field, v);
}

static int set_bindmethod(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	(void)k, (void)field;
	struct word_ctx *w = ctx;
	if (strcasecmp(v, "simple") != 0)
		return kv_fail(w->why, w->whylen,
		               "syncrepl: bindmethod=%s: only simple is supported", v);
	return 0;
}

/* binddn, searchbase: a DN, kept as written. */
static int set_dn(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	struct buf n = {0};
	int rc = dn_normalize(v, strlen(v), &n, NULL);
	buf_free(&n);
	if (rc < 0)
		return kv_fail(w->why, w->whylen, "syncrepl: \"%s\" is not a valid DN", v);
	return set_copy(ctx, k, field, v);
}

static int set_filter(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	if (!filter_string_valid(v))
		return kv_fail(w->why, w->whylen, "syncrepl: filter=%s is not a valid filter", v);
	return set_copy(ctx, k, field, v);
}

static int set_retry(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	(void)k;
	struct word_ctx *w = ctx;
	return retry(field, v, w->why, w->whylen);
}

static int set_interval(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	(void)k;
	struct word_ctx *w = ctx;
	if ((*(int *)field = interval(v)) < 0)
		return kv_fail(w->why, w->whylen, "syncrepl: interval=%s: expected dd:hh:mm:ss", v);
	return 0;
}

/* A whole number in k->min..k->max. */
static int set_number(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	long n;
	if (!kv_long(v, k->min, k->max, &n)) {
		char both[1200]; /* the longest value and more: why cuts it, not this */
		snprintf(both, sizeof(both), "%s=%s: expected %ld..%ld", k->name, v, k->min,
		         k->max);
		return kv_fail(w->why, w->whylen, "syncrepl: %s", both);
	}
	*(int *)field = (int)n;
	return 0;
}

/* The index in k->names (any case): an enum, or for tls_reqcert whether it is "never". */
static int set_choice(void *ctx, const struct kv_key *k, void *field, const char *v)
{
	struct word_ctx *w = ctx;
	int i = kv_choice(v, k->names, true);
	if (i < 0) {
		char both[128];
		snprintf(both, sizeof(both), "%s=%s", k->name, v);
		return kv_fail(w->why, w->whylen, "syncrepl: %s is not a value this word takes",
		               both);
	}
	if (k->size == sizeof(bool))
		*(bool *)field = i == 1;
	else
		*(int *)field = i;
	return 0;
}

static const char *const types[] = {"refreshOnly", "refreshAndPersist", "dirSync", "usnChanged",
                                    NULL};
static const char *const scopes[] = {"base", "one", "sub", "subord", NULL};
static const char *const starttls[] = {"no", "yes", "critical", NULL};
static const char *const reqcert[] = {"demand", "never", NULL};
_Static_assert(sizeof(enum syncrepl_type) == sizeof(int) &&
                   sizeof(enum syncrepl_scope) == sizeof(int) &&
                   sizeof(enum syncrepl_starttls) == sizeof(int) && sizeof(bool) != sizeof(int),
               "set_choice stores an enum as an int, tls_reqcert_never as a bool");

/* Every word but rid (it starts the directive), one a line: as conf/config.h's key table. */
#define FIELD(m)                                                                                   \
	.offset = offsetof(struct syncrepl_conf, m), .size = sizeof(((struct syncrepl_conf *)0)->m)
/* clang-format off */
static const struct kv_key words[] = {
	{"provider", set_provider, FIELD(provider)},
	{"bindmethod", .set = set_bindmethod},
	{"binddn", set_dn, FIELD(binddn)},
	{"credentials", set_copy, FIELD(credentials)},
	{"searchbase", set_dn, FIELD(searchbase)},
	{"filter", set_filter, FIELD(filter)},
	{"scope", set_choice, FIELD(scope), .names = scopes},
	{"attrs", set_copy, FIELD(attrs)},
	{"type", set_choice, FIELD(type), .names = types},
	{"interval", set_interval, FIELD(interval)},
	{"retry", .set = set_retry},
	{"starttls", set_choice, FIELD(starttls), .names = starttls},
	{"tls_cacert", set_copy, FIELD(tls_cacert)},
	{"tls_reqcert", set_choice, FIELD(tls_reqcert_never), .names = reqcert},
	{"network-timeout", set_number, FIELD(network_timeout), .min = 1, .max = 3600},
	{"seed", set_seed, FIELD(seed)},
};
/* clang-format on */
#undef FIELD

static int word(struct syncrepl_conf *s, const char *name, const char *v, char *why, size_t whylen)
{
	if (strcmp(name, "rid") == 0) {
		if (s->rid)
			return kv_fail(why, whylen, "syncrepl: only one syncrepl (a second rid=%s)",
			               v);
		long n = number(v, 1, 999);
		if (n < 0)
			return kv_fail(why, whylen, "syncrepl: rid=%s: expected 1 to 999", v);
		s->rid = (int)n;
		return 0;
	}
	if (!s->rid)
		return kv_fail(why, whylen, "syncrepl: the directive starts with rid= (found %s=)",
		               name);
	struct word_ctx ctx = {why, whylen};
	int rc = kv_set(words, sizeof(words) / sizeof(words[0]), s, &ctx, name, v);
	if (rc == -2)
		return kv_fail(why, whylen, "syncrepl: unknown word \"%s\"", name);
	return rc;
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
		return kv_fail(why, whylen, "syncrepl: %s is required", "provider=");
	if (!s->searchbase[0])
		return kv_fail(why, whylen, "syncrepl: %s is required", "searchbase=");
	if (!s->binddn[0] != !s->credentials[0])
		return kv_fail(why, whylen, "syncrepl: %s", "binddn= and credentials= go together");
	struct buf a = {0}, b = {0};
	int same = dn_normalize(s->searchbase, strlen(s->searchbase), &a, NULL) == 0 &&
	           dn_normalize(suffix, strlen(suffix), &b, NULL) == 0 && a.len == b.len &&
	           memcmp(a.data, b.data, a.len) == 0;
	buf_free(&a);
	buf_free(&b);
	if (!same)
		return kv_fail(
		    why, whylen,
		    "syncrepl: searchbase=\"%s\" must be the suffix (the replica holds the "
		    "provider's tree from its top)",
		    s->searchbase);
	return 0;
}

bool syncrepl_is_ad(const struct syncrepl_conf *s)
{
	return s->type == SYNCREPL_DIRSYNC || s->type == SYNCREPL_USN_CHANGED;
}

int syncrepl_ldap_scope(const struct syncrepl_conf *s)
{
	static const int ldap_scopes[] = {
	    [SYNCREPL_SCOPE_BASE] = LDAP_SCOPE_BASE,
	    [SYNCREPL_SCOPE_ONE] = LDAP_SCOPE_ONELEVEL,
	    [SYNCREPL_SCOPE_SUB] = LDAP_SCOPE_SUBTREE,
	    [SYNCREPL_SCOPE_SUBORD] = LDAP_SCOPE_SUBORDINATE,
	};
	return ldap_scopes[s->scope];
}
