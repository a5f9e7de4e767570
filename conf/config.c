#include "conf/config.h"

#include <errno.h>
#include <stddef.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/schema.h"

static const char *const policy_names[] = {
#define SEND_POLICY_NAME(E, ident, name) [SEND_##E] = name,
    SEND_POLICY_LIST(SEND_POLICY_NAME)
#undef SEND_POLICY_NAME
};

static const char *const default_index[] = {"objectClass", "uid", "cn", "mail", "member"};

/* The rules without an access key: today's userPassword rule, as slapd writes it. */
static const char *const default_access[] = {
    "to attrs=userPassword by self read by anonymous auth by * none",
    "to * by * read",
};

struct parse_state {
	struct config *cfg;
	char *why; /* reason of the first error */
	size_t whylen;
	bool have_index; /* the file names indexes: defaults dropped */
};

static const char *const io_engine_names[] = {"epoll", "io_uring"};

static const char *const monitor_access_names[] = {
    [MONITOR_ROOTDN] = "rootdn",
    [MONITOR_AUTHENTICATED] = "authenticated",
    [MONITOR_ANONYMOUS] = "anonymous",
    [MONITOR_NONE] = "none",
};

static const char *const tls_verify_names[] = {
    [TLS_VERIFY_NEVER] = "never",
    [TLS_VERIFY_ALLOW] = "allow",
    [TLS_VERIFY_DEMAND] = "demand",
};

const char *config_tls_verify_name(enum tls_verify v)
{
	return tls_verify_names[v];
}

const char *config_monitor_access_name(enum monitor_access a)
{
	return monitor_access_names[a];
}

const char *config_policy_name(enum send_policy_id id)
{
	return policy_names[id];
}

const char *config_io_engine_name(enum io_engine e)
{
	return io_engine_names[e];
}

__attribute__((format(printf, 2, 3))) static int bad(struct parse_state *st, const char *fmt, ...)
{
	if (st->why[0] == '\0') {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(st->why, st->whylen, fmt, ap);
		va_end(ap);
	}
	return 0; /* inih then reports this line number */
}

static int copy_str(struct parse_state *st, char *dst, size_t cap, const char *key,
                    const char *value)
{
	if (strlen(value) >= cap)
		return bad(st, "%s: value too long", key);
	strcpy(dst, value);
	return 1;
}

/* value, one of names[0..n), into *dst as its index; else "KEY: "V" is not one of a, b". */
static int parse_choice(struct parse_state *st, int *dst, const char *key, const char *value,
                        const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(value, names[i]) == 0) {
			*dst = (int)i;
			return 1;
		}
	char why[512];
	int len = snprintf(why, sizeof(why), "%s: \"%s\" is not one of ", key, value);
	for (size_t i = 0; i < n && len > 0 && (size_t)len < sizeof(why); i++)
		len +=
		    snprintf(why + len, sizeof(why) - (size_t)len, "%s%s", i ? ", " : "", names[i]);
	return bad(st, "%s", why);
}

/*
 * max_filter_items (items of a search filter) or max_search_work (filter work of a search,
 * filter.h's units): a number, or "unlimited" (0). At most 2^32 items, 2^60 units: beyond
 * that they stand for "unlimited" anyway.
 */
static int parse_cost_limit(struct parse_state *st, const char *key, const char *value)
{
	bool items = strcmp(key, "max_filter_items") == 0;
	unsigned long long max = items ? 1ULL << 32 : 1ULL << 60, n = 0;
	char *end = (char *)value;
	if (strcmp(value, "unlimited") != 0) {
		errno = 0;
		n = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
		if (end == value || *end || errno || n == 0 || n > max)
			return bad(st, "%s: expected a number from 1 or \"unlimited\", got \"%s\"",
			           key, value);
	}
	if (items)
		st->cfg->max_filter_items = (size_t)n;
	else
		st->cfg->max_search_work = n;
	return 1;
}

/* "yes" or "no" into *dst. */
static int parse_bool(struct parse_state *st, bool *dst, const char *key, const char *value)
{
	if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
		return bad(st, "%s: expected yes or no, got \"%s\"", key, value);
	*dst = value[0] == 'y';
	return 1;
}

/* A whole number in min..max into *dst; what marks it in the error ("seconds"). */
static int parse_int(struct parse_state *st, int *dst, const char *key, const char *value, long min,
                     long max, const char *what)
{
	char *end;
	long n = strtol(value, &end, 10);
	if (end == value || *end || n < min || n > max) {
		char expect[96];
		snprintf(expect, sizeof(expect), "%s: expected %s %ld..%ld, got", key, what, min,
		         max);
		return bad(st, "%s \"%s\"", expect, value);
	}
	*dst = (int)n;
	return 1;
}

static int parse_size(struct parse_state *st, size_t *dst, const char *key, const char *value,
                      size_t min, size_t max)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(value, &end, 10), mult = 1;
	if (*end == 'k' || *end == 'K')
		mult = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mult = 1024 * 1024, end++;
	if (v > max / mult)
		v = (unsigned long long)max + 1; /* out of range, reported below */
	else
		v *= mult;
	if (errno || end == value || *end || value[0] == '-' || v < min || v > max) {
		char range[64];
		snprintf(range, sizeof(range), "%zu..%zu", min, max);
		return bad(st, "%s: expected a number of bytes in %s", key, range);
	}
	*dst = (size_t)v;
	return 1;
}

/*
 * ldapi://PATH: a Unix socket, its path as is ("ldapi:///run/minidir/ldapi") or
 * %-encoded as libldap writes it ("ldapi://%2Frun%2Fminidir%2Fldapi").
 */
static int parse_ldapi(struct parse_state *st, struct listen_addr *a, const char *p,
                       const char *value)
{
	size_t n = 0;
	for (; *p && *p != '?' && n + 1 < sizeof(a->path); n++) {
		unsigned hi, lo;
		if (p[0] == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) {
			a->path[n] = (char)(hi << 4 | lo);
			p += 3;
		} else {
			a->path[n] = *p++;
		}
	}
	a->path[n] = '\0';
	if (n > 1 && a->path[n - 1] == '/')
		a->path[--n] = '\0';
	if (*p && *p != '?')
		return bad(st, "listen: \"%s\": the socket path is longer than 107 bytes", value);
	if (a->path[0] != '/')
		return bad(st, "listen: \"%s\": ldapi:// needs an absolute socket path", value);
	a->scheme = LISTEN_LDAPI;
	st->cfg->nlisten++;
	return 1;
}

/*
 * listen: "ldap://HOST:PORT", "ldaps://HOST:PORT" (a trailing "/" allowed; the
 * port defaults to 389 / 636), "HOST:PORT" (ldap://), or ldapi://PATH. IPv6 in brackets.
 */
static int parse_listen(struct parse_state *st, const char *value)
{
	struct config *c = st->cfg;
	if (c->nlisten == CONFIG_MAX_LISTEN)
		return bad(st, "listen: at most 16 addresses");
	struct listen_addr *a = &c->listen[c->nlisten];
	memset(a, 0, sizeof(*a));
	const char *v = value, *dflt = NULL;
	if (strncmp(v, "ldapi://", 8) == 0)
		return parse_ldapi(st, a, value + 8, value);
	if (strncmp(v, "ldap://", 7) == 0)
		v += 7, dflt = "389";
	else if (strncmp(v, "ldaps://", 8) == 0)
		v += 8, dflt = "636", a->scheme = LISTEN_LDAPS;
	else if (strstr(v, "://"))
		return bad(st, "listen: \"%s\": the scheme must be ldap://, ldaps:// or ldapi://",
		           value);
	char addr[300];
	size_t n = strlen(v);
	if (dflt && n && v[n - 1] == '/')
		n--;
	if (n >= sizeof(addr))
		return bad(st, "listen: \"%s\" is too long", value);
	memcpy(addr, v, n);
	addr[n] = '\0';
	const char *host = addr, *colon;
	size_t hlen;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (!close || (close[1] != ':' && !(dflt && close[1] == '\0')))
			return bad(st, "listen: expected [ipv6]:port, got \"%s\"", value);
		host = addr + 1;
		hlen = (size_t)(close - host);
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strrchr(addr, ':');
		if ((!colon && !dflt) || (colon && strchr(addr, ':') != colon))
			return bad(st, "listen: expected host:port, got \"%s\"", value);
		hlen = colon ? (size_t)(colon - addr) : n;
	}
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : strtol(dflt, &end, 10);
	if (hlen == 0 || hlen >= sizeof(a->host) || (colon && colon[1] == '\0') || *end ||
	    port < 0 || port > 65535)
		return bad(st, "listen: expected host:port with port 0..65535, got \"%s\"", value);
	memcpy(a->host, host, hlen);
	a->host[hlen] = '\0';
	snprintf(a->port, sizeof(a->port), "%ld", port);
	c->nlisten++;
	return 1;
}

/* The TLS keys but the file names and cipher lists (string_keys). Returns -1 when key is
 * not one of them. */
static int parse_tls(struct parse_state *st, const char *key, const char *value)
{
	struct config *c = st->cfg;
	if (strcmp(key, "tls_verify_client") == 0) {
		int v = 0,
		    rc = parse_choice(st, &v, key, value, tls_verify_names,
		                      sizeof(tls_verify_names) / sizeof(tls_verify_names[0]));
		if (rc)
			c->tls_verify_client = (enum tls_verify)v;
		return rc;
	}
	if (strcmp(key, "tls_min_version") == 0) {
		if (strcmp(value, "1.2") == 0 || strcmp(value, "1.3") == 0) {
			c->tls_min_version = value[2] == '2' ? 12 : 13;
			return 1;
		}
		return bad(st, "tls_min_version: expected 1.2 or 1.3, got \"%s\"", value);
	}
	if (strcmp(key, "tls_handshake_timeout") == 0)
		return parse_int(st, &c->tls_handshake_timeout, key, value, 1, 3600, "seconds");
	if (strcmp(key, "require_tls") == 0)
		return parse_bool(st, &c->require_tls, key, value);
	if (strcmp(key, "tls_ktls") == 0)
		return parse_bool(st, &c->tls_ktls, key, value);
	return -1;
}

/* What the TLS keys require of each other, checked once the whole file is read. */
static int check_tls(const struct config *cfg, char *err, size_t errlen)
{
	const char *why = NULL;
	bool on = cfg->tls_cert_file[0] != '\0';
	for (int i = 0; i < cfg->nlisten && !why; i++)
		if (cfg->listen[i].scheme == LISTEN_LDAPS && !on)
			why = "an ldaps:// listener needs tls_cert_file and tls_key_file";
	if (!why && on != (cfg->tls_key_file[0] != '\0'))
		why = "tls_cert_file and tls_key_file go together";
	if (!why && cfg->require_tls && !on)
		why = "require_tls = yes needs tls_cert_file and tls_key_file";
	if (!why && cfg->tls_ktls && !on)
		why = "tls_ktls = yes needs tls_cert_file and tls_key_file";
	if (!why && cfg->tls_verify_client != TLS_VERIFY_NEVER && !cfg->tls_ca_file[0])
		why = "tls_verify_client allow or demand needs tls_ca_file";
	if (why)
		snprintf(err, errlen, "%s: %s", cfg->path, why);
	return why ? -1 : 0;
}

static int parse_index(struct parse_state *st, const char *value)
{
	struct config *c = st->cfg;
	if (!st->have_index) {
		for (int i = 0; i < c->nindex; i++)
			free(c->index[i]);
		c->nindex = 0;
		st->have_index = true;
	}
	char tmp[1024];
	if (strlen(value) >= sizeof(tmp))
		return bad(st, "index: value too long");
	strcpy(tmp, value);
	char *save = NULL;
	for (char *tok = strtok_r(tmp, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		for (char *p = tok; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '-'))
				return bad(st, "index: \"%s\" is not an attribute name", tok);
		if (c->nindex == CONFIG_MAX_INDEX)
			return bad(st, "index: at most 32 attributes");
		if (!(c->index[c->nindex++] = strdup(tok)))
			return bad(st, "index: out of memory");
	}
	return 1;
}

/* Keys whose value is kept as written (a file, a name, a list for OpenSSL). */
/* clang-format off */
#define STRING_KEY(name) {#name, offsetof(struct config, name), sizeof(((struct config *)0)->name)}
/* clang-format on */
static const struct {
	const char *key;
	size_t offset, size;
} string_keys[] = {
    STRING_KEY(rootpw),
    STRING_KEY(user),
    STRING_KEY(group),
    STRING_KEY(pid_file),
    STRING_KEY(schema_dir),
    STRING_KEY(schema),
    STRING_KEY(tls_cert_file),
    STRING_KEY(tls_key_file),
    STRING_KEY(tls_ca_file),
    STRING_KEY(tls_ciphers),
    STRING_KEY(tls_ciphersuites),
};
#undef STRING_KEY

/* access = to ... (a new rule) or by ... (the rule before it goes on). */
static int parse_access(struct parse_state *st, const char *value)
{
	struct config *c = st->cfg;
	if (access_rule_starts(value)) {
		if (c->naccess == CONFIG_MAX_ACCESS)
			return bad(st, "access: at most %s rules", "128");
		struct access_rule *rules =
		    realloc(c->access, (size_t)(c->naccess + 1) * sizeof(*rules));
		if (!rules)
			return bad(st, "access: out of memory");
		c->access = rules;
		memset(&rules[c->naccess++], 0, sizeof(*rules));
	} else if (c->naccess == 0) {
		return bad(st, "access: a \"by\" line needs a \"to\" line before it");
	}
	char why[400];
	if (access_rule_parse(&c->access[c->naccess - 1], value, why, sizeof(why)) < 0)
		return bad(st, "access: %s", why);
	return 1;
}

static int default_access_rules(struct config *c)
{
	size_t n = sizeof(default_access) / sizeof(default_access[0]);
	if (!(c->access = calloc(n, sizeof(*c->access))))
		return -1;
	char why[400];
	for (size_t i = 0; i < n; i++, c->naccess++)
		if (access_rule_parse(&c->access[i], default_access[i], why, sizeof(why)) < 0)
			return -1;
	return 0;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
	struct parse_state *st = user;
	struct config *c = st->cfg;
	if (section[0])
		return bad(st, "sections are not used (found [%s])", section);
	for (size_t i = 0; i < sizeof(string_keys) / sizeof(string_keys[0]); i++)
		if (strcmp(key, string_keys[i].key) == 0)
			return copy_str(st, (char *)c + string_keys[i].offset, string_keys[i].size,
			                key, value);
	if (strcmp(key, "listen") == 0)
		return parse_listen(st, value);
	int tls = parse_tls(st, key, value);
	if (tls >= 0)
		return tls;
	if (strcmp(key, "database") == 0)
		return value[0] ? copy_str(st, c->database, sizeof(c->database), key, value)
		                : bad(st, "database: path expected");
	if (strcmp(key, "suffix") == 0) {
		struct buf n = {0};
		int ok = dn_normalize(value, strlen(value), &n, NULL) == 0 && n.len > 0;
		buf_free(&n);
		if (!ok)
			return bad(st, "suffix: \"%s\" is not a valid DN", value);
		return copy_str(st, c->suffix, sizeof(c->suffix), key, value);
	}
	if (strcmp(key, "threads") == 0)
		return parse_int(st, &c->threads, key, value, 1, 256, "a number");
	if (strcmp(key, "rootdn") == 0) {
		struct buf n = {0};
		int ok = dn_normalize(value, strlen(value), &n, NULL) == 0;
		buf_free(&n);
		if (!ok)
			return bad(st, "rootdn: \"%s\" is not a valid DN", value);
		return copy_str(st, c->rootdn, sizeof(c->rootdn), key, value);
	}
	if (strcmp(key, "send_policy") == 0) {
		int v = 0, rc = parse_choice(st, &v, key, value, policy_names,
		                             sizeof(policy_names) / sizeof(policy_names[0]));
		if (rc)
			c->send_policy = (enum send_policy_id)v;
		return rc;
	}
	if (strcmp(key, "io_engine") == 0) { /* unchanged when value is not a name */
		int v = (int)c->io_engine,
		    rc = parse_choice(st, &v, key, value, io_engine_names, 2);
		c->io_engine = (enum io_engine)v;
		return rc;
	}
	if (strcmp(key, "monitor_access") == 0) {
		int v = 0, rc = parse_choice(st, &v, key, value, monitor_access_names,
		                             sizeof(monitor_access_names) /
		                                 sizeof(monitor_access_names[0]));
		if (rc)
			c->monitor_access = (enum monitor_access)v;
		return rc;
	}
	if (strcmp(key, "access_log") == 0)
		return value[0] ? copy_str(st, c->access_log, sizeof(c->access_log), key, value)
		                : bad(st, "access_log: none, stderr, syslog or a file path");
	if (strcmp(key, "sizelimit") == 0 || strcmp(key, "timelimit") == 0) {
		char *end;
		long n = strtol(value, &end, 10);
		if (strcmp(value, "unlimited") == 0)
			n = 0, end = (char *)value + strlen(value);
		if (end == value || *end || n < 0 || n > 2147483647L)
			return bad(st, "%s: expected a number or \"unlimited\", got \"%s\"", key,
			           value);
		*(key[0] == 's' ? &c->sizelimit : &c->timelimit) = (int)n;
		return 1;
	}
	if (strcmp(key, "max_filter_items") == 0 || strcmp(key, "max_search_work") == 0)
		return parse_cost_limit(st, key, value);
	if (strcmp(key, "allow_anonymous") == 0)
		return parse_bool(st, &c->allow_anonymous, key, value);
	if (strcmp(key, "write_timeout") == 0 || strcmp(key, "idle_timeout") == 0)
		return parse_int(st, key[0] == 'w' ? &c->write_timeout : &c->idle_timeout, key,
		                 value, 0, 86400, "seconds");
	if (strcmp(key, "batch_bytes") == 0)
		return parse_size(st, &c->batch_bytes, key, value, 512, 16u << 20);
	if (strcmp(key, "index") == 0)
		return parse_index(st, value);
	if (strcmp(key, "access") == 0)
		return parse_access(st, value);
	if (strcmp(key, "syncrepl") == 0) {
		char why[512];
		return syncrepl_parse(&c->syncrepl, value, why, sizeof(why)) < 0
		           ? bad(st, "%s", why)
		           : 1;
	}
	if (strcmp(key, "updateref") == 0)
		return strncasecmp(value, "ldap://", 7) == 0 ||
		               strncasecmp(value, "ldaps://", 8) == 0
		           ? copy_str(st, c->updateref, sizeof(c->updateref), key, value)
		           : bad(st, "updateref: \"%s\" is not an ldap:// or ldaps:// URL", value);
	if (strcmp(key, "listen_after_refresh") == 0)
		return parse_int(st, &c->listen_after_refresh, key, value, 0, 86400, "seconds");
	if (strcmp(key, "max_pdu_bytes") == 0)
		return parse_size(st, &c->max_pdu_bytes, key, value, 1024, 64u << 20);
	if (strcmp(key, "max_pdu_bytes_anonymous") == 0)
		return parse_size(st, &c->max_pdu_bytes_anonymous, key, value, 1024, 64u << 20);
	if (strcmp(key, "max_input_bytes_per_worker") == 0)
		return parse_size(st, &c->max_input_bytes_per_worker, key, value, 64u << 10,
		                  1u << 30);
	if (strcmp(key, "pdu_timeout") == 0)
		return parse_int(st, &c->pdu_timeout, key, value, 0, 86400, "seconds");
	if (strcmp(key, "max_pending_bytes") == 0)
		return parse_size(st, &c->max_pending_bytes, key, value, 4096, 1u << 30);
	return bad(st, "unknown key \"%s\"", key);
}

/* libinih splits lines longer than its buffer; refuse them with their line number. */
static int check_line_lengths(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0; /* ini_parse reports it */
	int lineno = 1, col = 0, c, rc = 0;
	while ((c = getc(f)) != EOF) {
		if (c == '\n') {
			lineno++;
			col = 0;
		} else if (++col == CONFIG_MAX_LINE) {
			snprintf(err, errlen, "%s:%d: line longer than %d characters", path, lineno,
			         CONFIG_MAX_LINE - 1);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

static void set_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->threads = 2;
	c->send_policy = SEND_BATCH;
	c->batch_bytes = 64 * 1024;
	c->max_pdu_bytes = 1024 * 1024;
	c->max_pdu_bytes_anonymous = 256 * 1024; /* slapd's sockbuf_max_incoming */
	c->max_input_bytes_per_worker = 16 * 1024 * 1024;
	c->pdu_timeout = 10;
	c->max_pending_bytes = 4 * 1024 * 1024;
	c->write_timeout = 30;
	strcpy(c->schema_dir, SCHEMA_DEFAULT_DIR);
	strcpy(c->schema, SCHEMA_DEFAULT_FILES);
	c->sizelimit = 500;
	c->timelimit = 3600;
	c->allow_anonymous = true;
	c->max_filter_items = CONFIG_DEFAULT_MAX_FILTER_ITEMS;
	c->max_search_work = CONFIG_DEFAULT_MAX_SEARCH_WORK;
	c->tls_min_version = 12;
	strcpy(c->access_log, "none");
	c->tls_handshake_timeout = 10;
	syncrepl_defaults(&c->syncrepl);
	for (size_t i = 0; i < sizeof(default_index) / sizeof(default_index[0]); i++)
		c->index[c->nindex++] = strdup(default_index[i]);
}

static int load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	set_defaults(cfg);
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	char why[512] = "";
	struct parse_state st = {.cfg = cfg, .why = why, .whylen = sizeof(why)};
	if (check_line_lengths(path, err, errlen) < 0)
		return -1;
	int line = ini_parse(path, handler, &st);
	if (line < 0) {
		snprintf(err, errlen, "%s: %s", path,
		         line == -1 ? strerror(errno) : "out of memory reading the file");
		return -1;
	}
	if (line > 0) {
		snprintf(err, errlen, "%s:%d: %s", path, line,
		         why[0] ? why : "syntax error (expected key = value)");
		return -1;
	}
	if (!cfg->database[0] || !cfg->suffix[0]) {
		snprintf(err, errlen, "%s: \"%s\" is required", path,
		         !cfg->database[0] ? "database" : "suffix");
		return -1;
	}
	if (cfg->group[0] && !cfg->user[0]) {
		snprintf(err, errlen, "%s: group is set but user is not", path);
		return -1;
	}
	if (cfg->rootpw[0] && !cfg->rootdn[0]) {
		snprintf(err, errlen, "%s: rootpw is set but rootdn is not", path);
		return -1;
	}
	if (cfg->syncrepl.set &&
	    syncrepl_check(&cfg->syncrepl, cfg->suffix, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	if (cfg->listen_after_refresh && !cfg->syncrepl.set) {
		snprintf(err, errlen, "%s: listen_after_refresh is set but syncrepl is not", path);
		return -1;
	}
	access_rule_number(cfg->access, cfg->naccess, cfg->path);
	if (cfg->naccess == 0 && default_access_rules(cfg) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if (cfg->nlisten == 0) {
		strcpy(cfg->listen[0].host, "127.0.0.1");
		strcpy(cfg->listen[0].port, "3389");
		cfg->nlisten = 1;
	}
	return check_tls(cfg, err, errlen);
}

int config_load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	int rc = load(cfg, path, err, errlen);
	if (rc < 0)
		config_free(cfg); /* nothing is owed by a caller whose load failed */
	return rc;
}

void config_free(struct config *cfg)
{
	for (int i = 0; i < cfg->nindex; i++)
		free(cfg->index[i]);
	cfg->nindex = 0;
	for (int i = 0; i < cfg->naccess; i++)
		access_rule_free(&cfg->access[i]);
	free(cfg->access);
	cfg->access = NULL;
	cfg->naccess = 0;
}
