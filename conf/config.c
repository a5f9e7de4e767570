#include "conf/config.h"

#include <errno.h>
#include <stddef.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/config_set.h"
#include "conf/key_line.h"
#include "conf/keyval.h"
#include "conf/tree_schema.h"
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

static const char *const monitor_access_names[] = {
    [MONITOR_ROOTDN] = "rootdn",
    [MONITOR_AUTHENTICATED] = "authenticated",
    [MONITOR_ANONYMOUS] = "anonymous",
    [MONITOR_NONE] = "none",
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

/* proxy_from: networks separated by spaces or commas, added to those of earlier lines. */
static int set_proxy_from(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k, (void)field;
	struct config_parse *st = ctx;
	struct config *c = st->cfg;
	char words[CONFIG_MAX_LINE], *save = NULL, why[200];
	snprintf(words, sizeof(words), "%s", value);
	int added = 0;
	for (char *w = strtok_r(words, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (c->nproxy_from == CONFIG_MAX_PROXY_FROM)
			return config_bad(st, "proxy_from: at most %d networks",
			                  CONFIG_MAX_PROXY_FROM);
		if (ip_net_parse_cidr(&c->proxy_from[c->nproxy_from], w, why, sizeof(why)) < 0)
			return config_bad(st, "proxy_from: %s (expected ADDRESS or ADDRESS/PREFIX)",
			                  why);
		c->nproxy_from++, added++;
	}
	if (!added)
		return config_bad(st,
		                  "proxy_from: expected addresses or networks (ADDRESS[/PREFIX])");
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
 * Every key of minidir.conf, one a line, its name first (scripts read the names from
 * here): the set function, then the member it fills (FIELD) or none (the set function
 * fills several), then a number's range or a choice's names, then the default as the file
 * would write it (.def, read by the set function before the file; none: zero, empty or
 * off), then what a SIGHUP does with a changed value (.reload, enum config_reload; none: a
 * restart is needed). scripts/conf_keys.sh reads the names, the defaults and the reload
 * column from these lines and checks them against man/minidir.conf.5.
 */
#define FIELD(m) .offset = offsetof(struct config, m), .size = sizeof(((struct config *)0)->m)
_Static_assert(sizeof(enum send_policy_id) == sizeof(int) &&
                   sizeof(enum io_engine) == sizeof(int) &&
                   sizeof(enum db_readahead) == sizeof(int) &&
                   sizeof(enum monitor_access) == sizeof(int) &&
                   sizeof(enum tls_verify) == sizeof(int),
               "config_set_choice stores an enum as an int");
/* clang-format off */
static const struct kv_key config_keys[] = {
	{"listen", .set = set_listen},
	{"database", config_set_database, FIELD(database)},
	{"database_readahead", config_set_choice, FIELD(database_readahead), .names = readahead_names, .def = "auto"},
	{"suffix", config_set_suffix, FIELD(suffix), .min = 1},
	{"threads", config_set_count, FIELD(threads), .min = 1, .max = 256, .def = "2"},
	{"rootdn", config_set_dn, FIELD(rootdn), .min = 0},
	{"rootpw", config_set_string, FIELD(rootpw)},
	{"user", config_set_string, FIELD(user)},
	{"group", config_set_string, FIELD(group)},
	{"pid_file", config_set_string, FIELD(pid_file)},
	{"schema_dir", config_set_string, FIELD(schema_dir), .def = SCHEMA_DEFAULT_DIR},
	{"schema", config_set_string, FIELD(schema), .def = SCHEMA_DEFAULT_FILES},
	{"index", .set = set_index, .def = "objectClass, uid, cn, mail, member"},
	{"access", .set = set_access, .reload = CONFIG_RULES},
	{"allow_anonymous", config_set_bool, FIELD(allow_anonymous), .def = "yes", .reload = CONFIG_AT_ONCE},
	{"sizelimit", config_set_limit, FIELD(sizelimit), .def = "500", .reload = CONFIG_AT_ONCE},
	{"timelimit", config_set_limit, FIELD(timelimit), .def = "3600", .reload = CONFIG_AT_ONCE},
	{"max_filter_items", config_set_filter_items, FIELD(max_filter_items), .max = 1L << 32, .def = "1000", .reload = CONFIG_AT_ONCE},
	{"max_search_work", config_set_search_work, FIELD(max_search_work), .max = 1L << 60, .def = "50000000", .reload = CONFIG_AT_ONCE},
	{"inchain_max", config_set_filter_items, FIELD(inchain_max), .max = 1L << 32, .def = "100000", .reload = CONFIG_AT_ONCE},
	{"access_log", config_set_access_log, FIELD(access_log), .def = "none", .reload = CONFIG_REOPENED},
	{"monitor_access", config_set_choice, FIELD(monitor_access), .names = monitor_access_names, .def = "rootdn", .reload = CONFIG_AT_ONCE},
	{"send_policy", config_set_choice, FIELD(send_policy), .names = policy_names, .def = "batch", .reload = CONFIG_AT_ONCE},
	{"io_engine", config_set_choice, FIELD(io_engine), .names = io_engine_names, .def = "epoll"},
	{"batch_bytes", config_set_size, FIELD(batch_bytes), .min = 512, .max = 16L << 20, .def = "64K", .reload = CONFIG_AT_ONCE},
	{"max_pdu_bytes", config_set_size, FIELD(max_pdu_bytes), .min = 1024, .max = 64L << 20, .def = "1M"},
	{"max_pdu_bytes_anonymous", config_set_size, FIELD(max_pdu_bytes_anonymous), .min = 1024, .max = 64L << 20, .def = "256K"},
	{"max_input_bytes_per_worker", config_set_size, FIELD(max_input_bytes_per_worker), .min = 64L << 10, .max = 1L << 30, .def = "16M"},
	{"max_pending_bytes", config_set_size, FIELD(max_pending_bytes), .min = 4096, .max = 1L << 30, .def = "4M", .reload = CONFIG_AT_ONCE},
	{"pdu_timeout", config_set_seconds, FIELD(pdu_timeout), .min = 0, .max = 86400, .def = "10", .reload = CONFIG_AT_ONCE},
	{"write_timeout", config_set_seconds, FIELD(write_timeout), .min = 0, .max = 86400, .def = "30", .reload = CONFIG_AT_ONCE},
	{"idle_timeout", config_set_seconds, FIELD(idle_timeout), .min = 0, .max = 86400, .def = "0", .reload = CONFIG_AT_ONCE},
	{"tls_cert_file", config_set_string, FIELD(tls_cert_file), .reload = CONFIG_TLS},
	{"tls_key_file", config_set_string, FIELD(tls_key_file), .reload = CONFIG_TLS},
	{"tls_ca_file", config_set_string, FIELD(tls_ca_file), .reload = CONFIG_TLS},
	{"tls_verify_client", config_set_choice, FIELD(tls_verify_client), .names = tls_verify_names, .def = "never", .reload = CONFIG_TLS},
	{"tls_ciphers", config_set_string, FIELD(tls_ciphers), .reload = CONFIG_TLS},
	{"tls_ciphersuites", config_set_string, FIELD(tls_ciphersuites), .reload = CONFIG_TLS},
	{"tls_min_version", config_set_tls_min_version, FIELD(tls_min_version), .def = "1.2", .reload = CONFIG_TLS},
	{"tls_handshake_timeout", config_set_seconds, FIELD(tls_handshake_timeout), .min = 1, .max = 3600, .def = "10", .reload = CONFIG_AT_ONCE},
	{"require_tls", config_set_bool, FIELD(require_tls), .def = "no", .reload = CONFIG_AT_ONCE},
	{"tls_ktls", config_set_bool, FIELD(tls_ktls), .def = "no"},
	{"syncrepl", config_set_syncrepl, FIELD(syncrepl)},
	{"updateref", config_set_url, FIELD(updateref)},
	{"listen_after_refresh", config_set_seconds, FIELD(listen_after_refresh), .min = 0, .max = 86400, .def = "0"},
	/* Abuse limits (docs/reliability.md): failed binds per DN and address, connections per address. */
	{"bind_fail_limit", config_set_count, FIELD(bind_fail_limit), .min = 0, .max = 1000000, .def = "0"},
	{"bind_fail_window", config_set_seconds, FIELD(bind_fail_window), .min = 1, .max = 86400, .def = "300"},
	{"max_conns_per_ip", config_set_count, FIELD(max_conns_per_ip), .min = 0, .max = 1000000, .def = "0"},
	{"chain_passwd", config_set_bool, FIELD(chain_passwd), .def = "no"},
	{"chain_wait_ms", config_set_count, FIELD(chain_wait_ms), .min = 0, .max = 60000, .def = "2000"},
	/* Account state at bind (server/ops/account.h, docs/replica.md). */
	{"ppolicy_default", config_set_dn, FIELD(ppolicy_default), .min = 1},
	{"ppolicy_use_lockout", config_set_bool, FIELD(ppolicy_use_lockout), .def = "no"},
	{"chain_bind_failures", config_set_bool, FIELD(chain_bind_failures), .def = "no"},
	{"metrics_listen", config_set_metrics_listen, FIELD(metrics_listen)},
	{"metrics_allow_remote", config_set_bool, FIELD(metrics_allow_remote), .def = "no"},
	{"ready_max_lag_ms", config_set_count, FIELD(ready_max_lag_ms), .min = 100, .max = 86400000, .def = "30000"},
	/* Nested memberOf (storage/memberof_nested.h). */
	{"memberof_nested", config_set_bool, FIELD(memberof_nested), .def = "no"},
	/* The PROXY protocol (pldap://, pldaps://). */
	{"proxy_from", .set = set_proxy_from},
	/* dynamic groups (storage/dyngroup.h) */
	{"dynamic_groups", config_set_bool, FIELD(dynamic_groups), .def = "no"},
	{"dynamic_groups_max", config_set_count, FIELD(dynamic_groups_max), .min = 1, .max = 1000000, .def = "1000"},
	/* The memos of a served file (storage/db.h). */
	{"memo_bytes", config_set_memo_bytes, FIELD(memo_bytes), .min = 0, .max = 1L << 40, .def = "64m", .reload = CONFIG_NEXT_FILE},
};
/* clang-format on */
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

/* The keys that only a replica (syncrepl) has a use for, and metrics_listen's address,
 * which is loopback unless metrics_allow_remote says otherwise. 0, or -1 with err set. */
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
}
