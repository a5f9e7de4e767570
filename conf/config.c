#include "conf/config.h"

#include <errno.h>
#include <stddef.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <regex.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/config_set.h"
#include "conf/key_line.h"
#include "conf/keyval.h"
#include "protocol/schema.h"

#ifndef SCHEMA_DEFAULT_DIR
#error "SCHEMA_DEFAULT_DIR: the Makefile gives it (SCHEMADIR, protocol/schema.h)"
#endif

/* The names of a choice's values, each at its enum's value, NULL-ended (conf/keyval.h). */
static const char *const policy_names[SEND_POLICY_N + 1] = {
#define SEND_POLICY_NAME(E, ident, name) [SEND_##E] = name,
    SEND_POLICY_LIST(SEND_POLICY_NAME)
#undef SEND_POLICY_NAME
};

/* The rules without an access key: today's userPassword rule, as slapd writes it. */
static const char *const default_access[] = {
    "to attrs=userPassword by self read by anonymous auth by * none",
    "to * by * read",
};

static const char *const io_engine_names[] = {"epoll", "io_uring", NULL};
static const char *const readahead_names[] = {"auto", "on", "off", NULL};
static const char *const memberof_nested_names[] = {
    [MEMBEROF_NESTED_NO] = "no",
    [MEMBEROF_NESTED_YES] = "yes",
    [MEMBEROF_NESTED_AUTO] = "auto",
    NULL,
};

static const char *const monitor_access_names[] = {
    [MONITOR_ROOTDN] = "rootdn",
    [MONITOR_AUTHENTICATED] = "authenticated",
    [MONITOR_ANONYMOUS] = "anonymous",
    [MONITOR_NONE] = "none",
    NULL,
};

static const char *const authz_policy_names[] = {
    [AUTHZ_POLICY_NONE] = "none",
    [AUTHZ_POLICY_TO] = "to",
    NULL,
};

static const char *const tls_verify_names[] = {
    [TLS_VERIFY_NEVER] = "never",
    [TLS_VERIFY_ALLOW] = "allow",
    [TLS_VERIFY_DEMAND] = "demand",
    NULL,
};

const char *config_tls_verify_name(enum tls_verify v)
{
	return tls_verify_names[v];
}

const char *config_monitor_access_name(enum monitor_access a)
{
	return monitor_access_names[a];
}

const char *config_memo_bytes_text(size_t bytes, char buf[static CONFIG_MEMO_TEXT])
{
	if (bytes == SIZE_MAX)
		snprintf(buf, CONFIG_MEMO_TEXT, "unlimited");
	else if (bytes == CONFIG_MEMO_AUTO)
		snprintf(buf, CONFIG_MEMO_TEXT, "auto");
	else if (bytes == 0)
		snprintf(buf, CONFIG_MEMO_TEXT, "0 (no memos)");
	else
		snprintf(buf, CONFIG_MEMO_TEXT, "%zu", bytes);
	return buf;
}

const char *config_policy_name(enum send_policy_id id)
{
	return policy_names[id];
}

const char *config_io_engine_name(enum io_engine e)
{
	return io_engine_names[e];
}

/* The keys that fill the config as a whole (conf/config_set.h: the others). */

/* listen: one more address (conf/listen_addr.h). */
static int set_listen(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	struct config *c = st->cfg;
	if (c->nlisten == CONFIG_MAX_LISTEN)
		return config_bad(st, "listen: at most 16 addresses");
	char why[512];
	if (listen_addr_parse(&c->listen[c->nlisten], value, why, sizeof(why)) < 0)
		return config_bad(st, "%s", why);
	c->nlisten++;
	return 0;
}

/* A list of networks (key name): words separated by spaces or commas, added to the
 * nets[0..*n) of earlier lines (at most CONFIG_MAX_PROXY_FROM). */
static int set_nets(struct config_parse *st, const char *name, const char *value,
                    struct ip_net *nets, int *n)
{
	char words[CONFIG_MAX_LINE], *save = NULL, why[200];
	snprintf(words, sizeof(words), "%s", value);
	int added = 0;
	for (char *w = strtok_r(words, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (*n == CONFIG_MAX_PROXY_FROM)
			return config_bad(st, "%s: at most %d networks", name,
			                  CONFIG_MAX_PROXY_FROM);
		if (ip_net_parse_cidr(&nets[*n], w, why, sizeof(why)) < 0)
			return config_bad(st, "%s: %s (expected ADDRESS or ADDRESS/PREFIX)", name,
			                  why);
		(*n)++, added++;
	}
	if (!added)
		return config_bad(st, "%s: expected addresses or networks (ADDRESS[/PREFIX])",
		                  name);
	return 0;
}

/* proxy_from: the load balancers that may send a PROXY header. */
static int set_proxy_from(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	return set_nets(st, "proxy_from", value, st->cfg->proxy_from, &st->cfg->nproxy_from);
}

/* snapshot_allow: who may take /snapshot. */
static int set_snapshot_allow(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	return set_nets(st, "snapshot_allow", value, st->cfg->snapshot_allow,
	                &st->cfg->nsnapshot_allow);
}

/* The next word of *p, in double quotes or up to a blank (a backslash keeps the character
 * after it, and itself: a regular expression's escapes stay as written), malloc'd into
 * *word; *p moves past it. Returns 1, 0 at the end, -1 (an unclosed quote, out of memory). */
static int next_word(const char **p, char **word)
{
	const char *s = *p + strspn(*p, " \t");
	if (!*s)
		return 0;
	bool quoted = *s == '"';
	const char *from = s + quoted, *e = from;
	while (*e && (quoted ? *e != '"' : *e != ' ' && *e != '\t'))
		e += e[0] == '\\' && e[1] ? 2 : 1;
	if (quoted && *e != '"')
		return -1;
	*word = strndup(from, (size_t)(e - from));
	*p = e + quoted;
	return *word ? 1 : -1;
}

/* authz_regexp: MATCH REPLACE (each quoted when it holds blanks), a rule after those of
 * earlier lines; MATCH must compile as an extended regular expression. */
static int set_authz_regexp(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	struct config *c = st->cfg;
	if (c->nauthz_regexp == CONFIG_MAX_AUTHZ_REGEXP)
		return config_bad(st, "authz_regexp: at most %d rules", CONFIG_MAX_AUTHZ_REGEXP);
	struct authz_regexp *r = &c->authz_regexp[c->nauthz_regexp];
	char *extra = NULL;
	const char *p = value;
	if (next_word(&p, &r->match) != 1 || next_word(&p, &r->replace) != 1 ||
	    next_word(&p, &extra) != 0) {
		free(extra);
		free(r->match), free(r->replace);
		*r = (struct authz_regexp){0};
		return config_bad(st, "authz_regexp: expected \"MATCH\" \"REPLACE\" (a regular "
		                      "expression and a DN or LDAP URL, quoted)");
	}
	c->nauthz_regexp++; /* config_free frees it from now on */
	regex_t re;
	int rc = regcomp(&re, r->match, REG_EXTENDED | REG_ICASE);
	if (rc != 0) {
		char why[200];
		regerror(rc, &re, why, sizeof(why));
		return config_bad(st, "authz_regexp: \"%s\": %s", r->match, why);
	}
	regfree(&re);
	return 0;
}

/* index: attribute names; the first index key drops the defaults. */
static int set_index(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	struct config *c = st->cfg;
	if (!st->have_index) {
		for (int i = 0; i < c->nindex; i++)
			free(c->index[i]);
		c->nindex = 0;
		st->have_index = true;
	}
	char tmp[1024];
	if (strlen(value) >= sizeof(tmp))
		return config_bad(st, "index: value too long");
	strcpy(tmp, value);
	char *save = NULL;
	for (char *tok = strtok_r(tmp, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		for (char *p = tok; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '-'))
				return config_bad(st, "index: \"%s\" is not an attribute name",
				                  tok);
		if (c->nindex == CONFIG_MAX_INDEX)
			return config_bad(st, "index: at most 32 attributes");
		if (!(c->index[c->nindex++] = strdup(tok)))
			return config_bad(st, "index: out of memory");
	}
	return 0;
}

/* access = to ... (a new rule) or by ... (the rule before it goes on). */
static int set_access(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	struct config *c = st->cfg;
	if (access_rule_starts(value)) {
		if (c->naccess == CONFIG_MAX_ACCESS)
			return config_bad(st, "access: at most %s rules", "128");
		struct access_rule *rules =
		    realloc(c->access, (size_t)(c->naccess + 1) * sizeof(*rules));
		if (!rules)
			return config_bad(st, "access: out of memory");
		c->access = rules;
		memset(&rules[c->naccess++], 0, sizeof(*rules));
	} else if (c->naccess == 0) {
		return config_bad(st, "access: a \"by\" line needs a \"to\" line before it");
	}
	char why[400];
	if (access_rule_parse(&c->access[c->naccess - 1], value, why, sizeof(why)) < 0)
		return config_bad(st, "access: %s", why);
	return 0;
}

/*
 * The key table, made from conf/config.h's rows (CONFIG_KEYS): a KEY row fills the member
 * of its name (FIELD: its offset and size), an OWN_KEY row's set function fills its own.
 */
#define FIELD(m) .offset = offsetof(struct config, m), .size = sizeof(((struct config *)0)->m)
_Static_assert(sizeof(enum send_policy_id) == sizeof(int) &&
                   sizeof(enum io_engine) == sizeof(int) &&
                   sizeof(enum db_readahead) == sizeof(int) &&
                   sizeof(enum memberof_nested_mode) == sizeof(int) &&
                   sizeof(enum monitor_access) == sizeof(int) &&
                   sizeof(enum tls_verify) == sizeof(int),
               "config_set_choice stores an enum as an int");
/* A row's arguments after its name (and type and bounds) begin with the set function, so
 * they follow ".set =": every initializer is then designated, as the table's columns are. */
#define KEY_ROW(key, type, bounds, ...) {.name = #key, FIELD(key), .set = __VA_ARGS__},
#define OWN_KEY_ROW(key, ...) {.name = #key, .set = __VA_ARGS__},
static const struct kv_key config_keys[] = {CONFIG_KEYS(KEY_ROW, OWN_KEY_ROW)};
#undef KEY_ROW
#undef OWN_KEY_ROW
#undef FIELD

#define NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

void config_changed_keys(const struct config *a, const struct config *b,
                         void (*fn)(const char *key, void *arg), void *arg)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (config_key_changed(a, b, config_keys[i].name))
			fn(config_keys[i].name, arg);
}

const char *config_key_at(size_t i)
{
	return i < NKEYS ? config_keys[i].name : NULL;
}

enum config_reload config_key_reload(const char *key)
{
	const struct kv_key *k = kv_find(config_keys, NKEYS, key);
	return k ? (enum config_reload)k->reload : CONFIG_RESTART;
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

/* The line of path's first listen key naming a pldap:// or pldaps:// URL; 0 if none. */
static int proxy_listen_line(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[CONFIG_MAX_LINE + 2];
	int n = 0, found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		const char *p = line;
		if (strncmp(p, "listen", 6) != 0)
			continue;
		p += 6 + strspn(p + 6, " \t");
		if (*p != '=' && *p != ':')
			continue;
		p++;
		p += strspn(p, " \t");
		if (strncmp(p, "pldap://", 8) == 0 || strncmp(p, "pldaps://", 9) == 0)
			found = n;
	}
	fclose(f);
	return found;
}

/* A pldap:// or pldaps:// listener needs proxy_from: without it anybody could say who
 * they are. */
static int check_proxy(const struct config *cfg, char *err, size_t errlen)
{
	for (int i = 0; i < cfg->nlisten; i++)
		if (cfg->listen[i].proxy && cfg->nproxy_from == 0) {
			int line = proxy_listen_line(cfg->path);
			snprintf(err, errlen,
			         "%s:%d: listen: a pldap:// or pldaps:// listener needs proxy_from "
			         "(the addresses of the load balancers that send the PROXY header)",
			         cfg->path, line);
			return -1;
		}
	return 0;
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

/* libinih's handler: one "key = value" line (or a continuation line of key). Returns 0 to
 * have inih report this line's number, once it has read the rest. */
/* Appends "key\tvalue\n" to cfg->raw. 0, or -1 out of memory. */
static int keep_raw(struct config *cfg, const char *key, const char *value)
{
	size_t k = strlen(key), v = strlen(value);
	char *r = realloc(cfg->raw, cfg->raw_len + k + v + 3);
	if (!r)
		return -1;
	cfg->raw = r;
	memcpy(r + cfg->raw_len, key, k);
	r[cfg->raw_len + k] = '\t';
	memcpy(r + cfg->raw_len + k + 1, value, v);
	cfg->raw_len += k + v + 2;
	r[cfg->raw_len - 1] = '\n';
	r[cfg->raw_len] = '\0';
	return 0;
}

char *config_key_text(const struct config *c, const char *key)
{
	size_t klen = strlen(key), len = 0;
	char *text = malloc(c->raw_len + 1); /* the values are shorter than the lines */
	if (!text)
		return NULL;
	for (const char *p = c->raw, *end = c->raw + c->raw_len; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		if ((size_t)(nl - p) > klen && p[klen] == '\t' && strncmp(p, key, klen) == 0) {
			memcpy(text + len, p + klen + 1, (size_t)(nl - p) - klen);
			len += (size_t)(nl - p) - klen; /* the value and its newline */
		}
		p = nl + 1;
	}
	text[len] = '\0';
	return text;
}

bool config_key_changed(const struct config *a, const struct config *b, const char *key)
{
	char *ta = config_key_text(a, key), *tb = config_key_text(b, key);
	bool changed = !ta || !tb || strcmp(ta, tb) != 0;
	free(ta);
	free(tb);
	return changed;
}

static int read_key(void *user, const char *section, const char *key, const char *value)
{
	struct config_parse *st = user;
	if (section[0])
		return config_bad(st, "sections are not used (found [%s])", section) == 0;
	int rc = kv_set(config_keys, NKEYS, st->cfg, st, key, value);
	if (rc == -2)
		config_bad(st, "unknown key \"%s\"", key);
	if (rc == 0 && keep_raw(st->cfg, key, value) < 0)
		return config_bad(st, "out of memory") == 0;
	return rc == 0;
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

/* Every key's default (the table's .def) read by its set function, then what no one key
 * sets. 0, or -1 with the reason in st->why (a default its own parser refuses). */
static int set_defaults(struct config_parse *st)
{
	struct config *c = st->cfg;
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NKEYS; i++)
		if (config_keys[i].def &&
		    kv_set(config_keys, NKEYS, c, st, config_keys[i].name, config_keys[i].def) != 0)
			return config_bad(st, "the built-in default of %s", config_keys[i].name);
	st->have_index = false; /* the file's first index key drops the default list */
	syncrepl_defaults(&c->syncrepl);
	return 0;
}

/* The file read into cfg over every key's default: its path kept, each "key = value"
 * through its set function. 0, or -1 with "PATH[:LINE]: reason" in err. */
static int read_file(struct config *cfg, const char *path, char *err, size_t errlen)
{
	char why[512] = "";
	struct config_parse st = {.cfg = cfg, .why = why, .whylen = sizeof(why)};
	if (set_defaults(&st) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	if (check_line_lengths(path, err, errlen) < 0)
		return -1;
	int line = ini_parse(path, read_key, &st);
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
	return 0;
}

/* The keys the server cannot run without, and those that need another (group needs
 * user, rootpw rootdn; syncrepl's searchbase is the suffix). 0, or -1 with
 * "PATH: reason" in err. */
static int check_required(const struct config *cfg, const char *path, char *err, size_t errlen)
{
	char why[512];
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
	return 0;
}

/* The keys that only a replica (syncrepl) has a use for, metrics_tls's files, and metrics_listen's
 * address, which is loopback unless metrics_allow_remote says otherwise. 0, or -1 with err set. */
static int check_replica_and_metrics(const struct config *cfg, const char *path, char *err,
                                     size_t errlen)
{
	if (cfg->listen_after_refresh && !cfg->syncrepl.set) {
		snprintf(err, errlen, "%s: listen_after_refresh is set but syncrepl is not", path);
		return -1;
	}
	if (cfg->chain_passwd && !cfg->syncrepl.set) {
		snprintf(err, errlen,
		         "%s:%d: chain_passwd = yes forwards password changes to a replica's "
		         "provider: it needs syncrepl",
		         path, config_key_line(path, "chain_passwd"));
		return -1;
	}
	if (cfg->chain_bind_failures && !cfg->syncrepl.set) {
		snprintf(err, errlen,
		         "%s:%d: chain_bind_failures = yes replays failed binds to a replica's "
		         "provider: it needs syncrepl",
		         path, config_key_line(path, "chain_bind_failures"));
		return -1;
	}
	if (cfg->bind_passthrough && !cfg->syncrepl.set) {
		snprintf(err, errlen,
		         "%s:%d: bind_passthrough = yes checks passwords by binding to a replica's "
		         "provider: it needs syncrepl",
		         path, config_key_line(path, "bind_passthrough"));
		return -1;
	}
	if (cfg->sync_provider && !cfg->syncrepl.set) {
		snprintf(err, errlen,
		         "%s:%d: sync_provider = yes lets replicas follow this replica's changes: "
		         "it needs syncrepl",
		         path, config_key_line(path, "sync_provider"));
		return -1;
	}
	if (cfg->bind_passthrough_cache > 0 && !cfg->bind_passthrough) {
		snprintf(
		    err, errlen,
		    "%s:%d: bind_passthrough_cache remembers binds bind_passthrough checks: it "
		    "needs bind_passthrough = yes",
		    path, config_key_line(path, "bind_passthrough_cache"));
		return -1;
	}
	if (cfg->metrics_tls && !cfg->tls_cert_file[0]) {
		snprintf(err, errlen,
		         "%s:%d: metrics_tls = yes serves the HTTP endpoint over TLS: it needs "
		         "tls_cert_file and tls_key_file",
		         path, config_key_line(path, "metrics_tls"));
		return -1;
	}
	if (cfg->metrics_listen.set && !cfg->metrics_listen.loopback &&
	    !cfg->metrics_allow_remote) {
		snprintf(err, errlen,
		         "%s:%d: metrics_listen: %s is not a loopback address (127.0.0.0/8, ::1); "
		         "set metrics_allow_remote = yes to serve /metrics and /readyz there",
		         path, config_key_line(path, "metrics_listen"), cfg->metrics_listen.text);
		return -1;
	}
	return 0;
}

/*
 * The schema of a source tree, for programs run from its build directory: a config that
 * names no schema_dir reads SCHEMA_DEFAULT_DIR (where make install puts the files), which
 * a tree that was only built lacks, so build/minidir-import on the README's configuration
 * failed with "No such file or directory" (docs/reliability.md). The schema/ directory
 * beside the directory that holds the running program (/proc/self/exe: build/minidir reads
 * the tree's schema/), written to out (cap bytes) when it holds core.schema. Returns true
 * then; false, out unchanged, when there is none or the path does not fit.
 */
static bool tree_schema_dir(char *out, size_t cap)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* build/minidir: the tree is the program's directory's parent. */
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return false;
		*slash = '\0';
	}
	snprintf(dir, sizeof(dir), "%s/schema", exe);
	snprintf(probe, sizeof(probe), "%s/core.schema", dir);
	if (access(probe, R_OK) != 0 || strlen(dir) >= cap)
		return false;
	memcpy(out, dir, strlen(dir) + 1);
	return true;
}

/* Run from a source tree that was built, not installed: its own schema/. */
static void find_tree_schema(struct config *cfg)
{
	struct stat dir;
	if (strcmp(cfg->schema_dir, SCHEMA_DEFAULT_DIR) == 0 &&
	    stat(SCHEMA_DEFAULT_DIR, &dir) != 0 &&
	    tree_schema_dir(cfg->schema_dir, sizeof(cfg->schema_dir)))
		cfg->schema_dir_from_tree = true;
}

/* A load's steps, in the order its errors have always been looked for: the file, the
 * keys it requires, then what it left out filled in (the schema's directory, the access
 * rules, a listener) among the checks of the keys that need each other. */
static int load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	if (read_file(cfg, path, err, errlen) < 0 || check_required(cfg, path, err, errlen) < 0)
		return -1;
	find_tree_schema(cfg);
	if (check_replica_and_metrics(cfg, path, err, errlen) < 0)
		return -1;
	access_rule_number(cfg->access, cfg->naccess, cfg->path);
	if (cfg->naccess == 0 && default_access_rules(cfg) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if (check_proxy(cfg, err, errlen) < 0)
		return -1;
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
	free(cfg->raw);
	cfg->raw = NULL;
	cfg->raw_len = 0;
	for (int i = 0; i < cfg->nindex; i++)
		free(cfg->index[i]);
	cfg->nindex = 0;
	for (int i = 0; i < cfg->naccess; i++)
		access_rule_free(&cfg->access[i]);
	free(cfg->access);
	cfg->access = NULL;
	cfg->naccess = 0;
	for (int i = 0; i < cfg->nauthz_regexp; i++)
		free(cfg->authz_regexp[i].match), free(cfg->authz_regexp[i].replace);
	cfg->nauthz_regexp = 0;
}
