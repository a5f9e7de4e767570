/*
 * options.c: the command line (see options.h). Options are one table: each row names the
 * option (long and short), the kind of value and where it goes in struct sr_config, so
 * getopt's long option array, the value checks and their messages all come from it. The
 * checks that involve several options, and of the patterns, follow the table.
 */
#include "tools/searchrate/options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include <lber.h>
#include <ldap.h>

#include "conf/version.h" /* MINIDIR_VERSION */

static const char usage_text[] =
    "Usage: searchrate -b BASEDN [options]\n"
    "\n"
    "Runs searches against an LDAP server as fast as it can (or at a fixed rate) and\n"
    "prints the search rate, duration and error rate per interval, then a summary with\n"
    "latency percentiles and result codes. Options follow UnboundID's searchrate.\n"
    "\n"
    "Connection:\n"
    "  -h, --hostname HOST             server address (default 127.0.0.1)\n"
    "  -p, --port PORT                 server port (default 389)\n"
    "  -D, --bindDN DN                 simple bind as DN on every connection\n"
    "  -w, --bindPassword PASSWORD     the password for --bindDN\n"
    "  -j, --bindPasswordFile FILE     read the password from the first line of FILE\n"
    "  -Z, --useSSL                    connect with TLS from the first byte (ldaps://)\n"
    "  -q, --useStartTLS               connect with ldap://, then StartTLS before the bind\n"
    "                                  and the first search\n"
    "  -X, --trustAll                  with -Z or -q: accept any server certificate\n"
    "  -P, --trustStorePath FILE       with -Z or -q: verify the server certificate with the\n"
    "                                  CA certificates in FILE (PEM) (default: the system's)\n"
    "      --resumeTLSSessions         with -Z or -q (lean engine): each new connection offers\n"
    "                                  the newest session its thread was given (a ticket),\n"
    "                                  for resumed handshakes (default: every one full)\n"
    "Search:\n"
    "  -b, --baseDN DN                 search base (required; may be a value pattern)\n"
    "  -s, --scope SCOPE               base, one, sub or subordinates (default sub)\n"
    "  -f, --filter FILTER             search filter (value pattern; default (objectClass=*))\n"
    "  -A, --attribute ATTR            attribute to return; repeatable (default: all)\n"
    "  -z, --sizeLimit N               size limit of each search (default 0: none)\n"
    "  -l, --timeLimit SECONDS         time limit of each search (default 0: none)\n"
    "Load:\n"
    "      --engine lean|libldap       how requests go out and responses come in: lean (BER\n"
    "                                  by hand on non-blocking sockets and epoll, a few us\n"
    "                                  of client CPU per search; TLS through OpenSSL) or\n"
    "                                  libldap (its per-message API; its TLS library)\n"
    "                                  (default: lean)\n"
    "  -t, --numThreads N              threads (default 1)\n"
    "      --numConnections N          connections, spread over the threads (default: one\n"
    "                                  per thread); must be at least --numThreads\n"
    "  -r, --ratePerSecond N           target total searches per second (default 0: as fast\n"
    "                                  as possible)\n"
    "  -a, --asynchronous              pipeline requests on each connection instead of waiting\n"
    "                                  for each result\n"
    "  -O, --maxOutstandingRequests N  with --asynchronous: requests in flight per connection\n"
    "                                  (default 100)\n"
    "      --iterationsBeforeReconnect N\n"
    "                                  close and reopen each connection (with its TLS\n"
    "                                  handshake and bind) after N searches on it (default\n"
    "                                  0: never); the summary counts the reconnects\n"
    "Output:\n"
    "  -i, --intervalDuration SECONDS  length of each interval (one row) (default 5)\n"
    "  -I, --numIntervals N            stop after N intervals (default: run until SIGINT)\n"
    "      --warmUpIntervals N         intervals run first and left out of the overall\n"
    "                                  statistics and the summary (default 0)\n"
    "  -c, --csv                       print CSV rows instead of the table\n"
    "  -H, --help                      print this help and exit\n"
    "      --version                   print the version and exit\n"
    "\n"
    "Value patterns (in --baseDN and --filter), expanded for each search:\n"
    "  [1-1000]     a uniformly random integer from 1 to 1000\n"
    "  [1:1000]     sequential: 1, 2, ..., 1000, then 1 again (shared by all threads)\n"
    "  [1:1000:5]   sequential with step 5 (also written [1:1000x5])\n"
    "  [1-1000%0000]  zero padded to four digits\n"
    "  [[ and ]]    literal [ and ]\n"
    "  e.g. --filter \"(uid=user.[1-10000])\"\n"
    "\n"
    "A search that ends with a non-zero result code, a request lost with its connection and\n"
    "a failed (re)connect count as errors by result code; lost connections are re-established.\n"
    "\n"
    "Exit status: 0 the run completed (even with LDAP errors), 1 no connection could be\n"
    "established (or StartTLS failed on it), 2 bad options.\n";

enum opt_kind {
	K_STR,    /* const char * */
	K_INT,    /* int, from lo to hi */
	K_U64,    /* uint64_t, from lo to hi */
	K_NUM,    /* double, from dlo to dhi */
	K_FLAG,   /* bool, set */
	K_SCOPE,  /* --scope */
	K_ATTR,   /* --attribute, repeatable */
	K_ENGINE, /* --engine */
	K_HELP,
	K_VERSION,
};

enum {
	OPT_NUM_CONNECTIONS = 1000,
	OPT_WARMUP,
	OPT_RECONNECT,
	OPT_ENGINE,
	OPT_VERSION,
	OPT_RESUME,
};

struct opt_spec {
	const char *name;
	int key; /* the short option, or OPT_* for long-only ones */
	enum opt_kind kind;
	size_t off; /* in struct sr_config */
	long long lo, hi;
	double dlo, dhi;
};

#define OFF(field) offsetof(struct sr_config, field)

static const struct opt_spec specs[] = {
    {"hostname", 'h', K_STR, OFF(host), 0, 0, 0, 0},
    {"port", 'p', K_INT, OFF(port), 1, 65535, 0, 0},
    {"bindDN", 'D', K_STR, OFF(binddn), 0, 0, 0, 0},
    {"bindPassword", 'w', K_STR, OFF(bindpw), 0, 0, 0, 0},
    {"bindPasswordFile", 'j', K_STR, OFF(arg.pwfile), 0, 0, 0, 0},
    {"useSSL", 'Z', K_FLAG, OFF(use_ssl), 0, 0, 0, 0},
    {"useStartTLS", 'q', K_FLAG, OFF(use_starttls), 0, 0, 0, 0},
    {"trustAll", 'X', K_FLAG, OFF(trust_all), 0, 0, 0, 0},
    {"trustStorePath", 'P', K_STR, OFF(truststore), 0, 0, 0, 0},
    {"resumeTLSSessions", OPT_RESUME, K_FLAG, OFF(resume_tls), 0, 0, 0, 0},
    {"baseDN", 'b', K_STR, OFF(arg.base), 0, 0, 0, 0},
    {"scope", 's', K_SCOPE, OFF(scope), 0, 0, 0, 0},
    {"filter", 'f', K_STR, OFF(arg.filter), 0, 0, 0, 0},
    {"attribute", 'A', K_ATTR, OFF(attrs), 0, 0, 0, 0},
    {"sizeLimit", 'z', K_INT, OFF(sizelimit), 0, INT_MAX, 0, 0},
    {"timeLimit", 'l', K_INT, OFF(timelimit), 0, INT_MAX, 0, 0},
    {"numThreads", 't', K_INT, OFF(threads), 1, 4096, 0, 0},
    {"engine", OPT_ENGINE, K_ENGINE, OFF(engine), 0, 0, 0, 0},
    {"numConnections", OPT_NUM_CONNECTIONS, K_INT, OFF(conns), 1, 1000000, 0, 0},
    {"ratePerSecond", 'r', K_NUM, OFF(rate), 0, 0, 0, 1e9},
    {"asynchronous", 'a', K_FLAG, OFF(async), 0, 0, 0, 0},
    {"maxOutstandingRequests", 'O', K_INT, OFF(max_outstanding), 1, 100000, 0, 0},
    {"iterationsBeforeReconnect", OPT_RECONNECT, K_U64, OFF(reconnect_every), 0, LLONG_MAX / 2, 0,
     0},
    {"intervalDuration", 'i', K_NUM, OFF(interval), 0, 0, 0.01, 86400.0 * 365},
    {"numIntervals", 'I', K_U64, OFF(intervals), 1, LLONG_MAX / 2, 0, 0},
    {"warmUpIntervals", OPT_WARMUP, K_U64, OFF(warmup), 0, LLONG_MAX / 2, 0, 0},
    {"csv", 'c', K_FLAG, OFF(csv), 0, 0, 0, 0},
    {"help", 'H', K_HELP, 0, 0, 0, 0, 0},
    {"version", OPT_VERSION, K_VERSION, 0, 0, 0, 0, 0},
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))
static const char shortopts[] = ":h:p:D:w:j:ZqXP:b:s:f:A:z:l:t:r:aO:i:I:cH";

/* Prints "searchrate: REASON" and the usage text to stderr; returns exit status 2. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("searchrate: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\n\n", stderr);
	va_end(ap);
	fputs(usage_text, stderr);
	return 2;
}

static int set_scope(struct sr_config *cfg, const char *s)
{
	if (!strcasecmp(s, "base"))
		cfg->scope = LDAP_SCOPE_BASE;
	else if (!strcasecmp(s, "one"))
		cfg->scope = LDAP_SCOPE_ONELEVEL;
	else if (!strcasecmp(s, "sub"))
		cfg->scope = LDAP_SCOPE_SUBTREE;
	else if (!strcasecmp(s, "subordinates") || !strcasecmp(s, "subordinate"))
		cfg->scope = LDAP_SCOPE_SUBORDINATE;
	else
		return usage_error("--scope: \"%s\" is not base, one, sub or subordinates", s);
	cfg->scope_name = s;
	return -1;
}

static int set_engine(struct sr_config *cfg, const char *s)
{
	if (!strcmp(s, "lean"))
		cfg->engine = SR_ENGINE_LEAN;
	else if (!strcmp(s, "libldap"))
		cfg->engine = SR_ENGINE_LIBLDAP;
	else
		return usage_error("--engine: \"%s\" is not lean or libldap", s);
	return -1;
}

static int add_attr(struct sr_config *cfg, char *attr)
{
	char **a = realloc(cfg->attrs, (size_t)(cfg->nattrs + 2) * sizeof(*a));
	if (!a) {
		perror("searchrate");
		return 1;
	}
	cfg->attrs = a;
	cfg->attrs[cfg->nattrs++] = attr;
	cfg->attrs[cfg->nattrs] = NULL;
	return -1;
}

/* Stores the numeric value s of option o at field; -1, or 2 when s is out of range. */
static int set_number(const struct opt_spec *o, void *field, const char *s)
{
	char *end;
	errno = 0;
	if (o->kind == K_NUM) {
		double v = strtod(s, &end);
		if (errno || end == s || *end || !(v >= o->dlo && v <= o->dhi))
			return usage_error("--%s: \"%s\" is not a number from %g to %g", o->name, s,
			                   o->dlo, o->dhi);
		*(double *)field = v;
		return -1;
	}
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < o->lo || v > o->hi)
		return usage_error("--%s: \"%s\" is not an integer from %lld to %lld", o->name, s,
		                   o->lo, o->hi);
	if (o->kind == K_INT)
		*(int *)field = (int)v;
	else
		*(uint64_t *)field = (uint64_t)v;
	return -1;
}

/* Applies option o with value arg (NULL for flags); -1 to go on, else the exit status. */
static int apply(struct sr_config *cfg, const struct opt_spec *o, char *arg)
{
	void *field = (char *)cfg + o->off;
	switch (o->kind) {
	case K_STR:
		*(const char **)field = arg;
		return -1;
	case K_FLAG:
		*(bool *)field = true;
		return -1;
	case K_SCOPE:
		return set_scope(cfg, arg);
	case K_ATTR:
		return add_attr(cfg, arg);
	case K_ENGINE:
		return set_engine(cfg, arg);
	case K_HELP:
		fputs(usage_text, stdout);
		return 0;
	case K_VERSION:
		printf("searchrate %s\n", MINIDIR_VERSION);
		return 0;
	default:
		return set_number(o, field, arg);
	}
}

static const struct opt_spec *spec_of(int key)
{
	for (size_t i = 0; i < NSPECS; i++)
		if (specs[i].key == key)
			return &specs[i];
	return NULL;
}

/* Runs getopt over argv; -1 when every option was taken, else the exit status. */
static int read_options(struct sr_config *cfg, int argc, char **argv)
{
	struct option longopts[NSPECS + 1];
	for (size_t i = 0; i < NSPECS; i++) {
		bool has_arg = specs[i].kind != K_FLAG && specs[i].kind != K_HELP &&
		               specs[i].kind != K_VERSION;
		longopts[i] = (struct option){
		    specs[i].name, has_arg ? required_argument : no_argument, NULL, specs[i].key};
	}
	longopts[NSPECS] = (struct option){0};
	opterr = 0;
	int ch, status = -1;
	while (status < 0 && (ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct opt_spec *o = spec_of(ch);
		if (o)
			status = apply(cfg, o, optarg);
		else if (ch == ':')
			status = usage_error("option %s needs a value", argv[optind - 1]);
		else if (optopt && optopt < 256)
			status = usage_error("unknown option -%c", optopt);
		else
			status = usage_error("unknown option %s", argv[optind - 1]);
	}
	if (status < 0 && optind < argc)
		status = usage_error("unexpected argument \"%s\"", argv[optind]);
	return status;
}

/* The first line of path, without its line end, into cfg->bindpw; -1, or 2. */
static int read_password_file(struct sr_config *cfg, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return usage_error("--bindPasswordFile: cannot open %s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	fclose(f);
	if (n < 0) {
		free(line);
		return usage_error("--bindPasswordFile: %s is empty", path);
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	cfg->bindpw = cfg->bindpw_owned = line;
	return -1;
}

/* The checks between options, in the order their messages have always come. */
static int check_combinations(struct sr_config *cfg)
{
	if (!cfg->arg.base)
		return usage_error("--baseDN is required");
	bool have_pw = cfg->bindpw != NULL;
	if (cfg->arg.pwfile) {
		if (have_pw)
			return usage_error("give --bindPassword or --bindPasswordFile, not both");
		int st = read_password_file(cfg, cfg->arg.pwfile);
		if (st >= 0)
			return st;
		have_pw = true;
	}
	if (cfg->binddn && !have_pw)
		return usage_error("--bindDN needs --bindPassword or --bindPasswordFile");
	if (!cfg->binddn && have_pw)
		return usage_error("--bindPassword needs --bindDN");
	if (cfg->max_outstanding && !cfg->async)
		return usage_error("--maxOutstandingRequests needs --asynchronous");
	if (!cfg->max_outstanding)
		cfg->max_outstanding = 100;
	if (!cfg->conns)
		cfg->conns = cfg->threads;
	if (cfg->conns < cfg->threads)
		return usage_error("--numConnections (%d) must be at least --numThreads (%d): "
		                   "each thread owns its connections",
		                   cfg->conns, cfg->threads);
	return -1;
}

/* The TLS options: one way to start TLS, one way to trust, a trust store that can be read, and
 * the engine: lean unless told (resumption is the lean engine's). */
static int check_tls(struct sr_config *cfg)
{
	if (cfg->use_ssl && cfg->use_starttls)
		return usage_error("give --useSSL or --useStartTLS, not both");
	if (cfg->trust_all && cfg->truststore)
		return usage_error("give --trustAll or --trustStorePath, not both");
	if ((cfg->trust_all || cfg->truststore) && !cfg->use_ssl && !cfg->use_starttls)
		return usage_error("--%s needs --useSSL or --useStartTLS",
		                   cfg->trust_all ? "trustAll" : "trustStorePath");
	bool tls = cfg->use_ssl || cfg->use_starttls;
	if (cfg->resume_tls && !tls)
		return usage_error("--resumeTLSSessions needs --useSSL or --useStartTLS");
	if (cfg->resume_tls && cfg->engine == SR_ENGINE_LIBLDAP)
		return usage_error("--resumeTLSSessions needs --engine lean");
	if (cfg->engine == SR_ENGINE_AUTO)
		cfg->engine = SR_ENGINE_LEAN;
	if (!cfg->truststore)
		return -1;
	/* libldap would only fail each handshake, without saying why. */
	FILE *f = fopen(cfg->truststore, "r");
	if (!f)
		return usage_error("--trustStorePath: cannot open %s: %s", cfg->truststore,
		                   strerror(errno));
	bool pem = false;
	char line[256];
	while (!pem && fgets(line, sizeof(line), f))
		pem = strncmp(line, "-----BEGIN CERTIFICATE-----", 27) == 0;
	fclose(f);
	if (!pem)
		return usage_error("--trustStorePath: %s holds no PEM certificate "
		                   "(\"-----BEGIN CERTIFICATE-----\")",
		                   cfg->truststore);
	return -1;
}

/* Expands each pattern once: the base must be a DN, the filter an LDAP filter. */
static int check_expansions(struct sr_config *cfg)
{
	uint64_t rng = 1;
	char *buf = malloc(cfg->base.maxlen + cfg->filter.maxlen + 2);
	if (!buf) {
		perror("searchrate");
		return 1;
	}
	int status = -1;
	const char *b = pattern_expand(&cfg->base, &rng, buf);
	LDAPDN dn = NULL;
	if (ldap_str2dn(b, &dn, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS)
		status = usage_error("--baseDN: \"%s\" is not a valid DN", b);
	ldap_dnfree(dn);
	char *f = buf;
	if (status < 0) { /* in buf, writable, as ldap_create_assertion_control_value wants */
		const char *e = pattern_expand(&cfg->filter, &rng, buf);
		if (e != buf)
			strcpy(buf, e);
	}
	LDAP *ld = NULL;
	if (status < 0 && ldap_initialize(&ld, cfg->uri) != LDAP_SUCCESS)
		status = usage_error("bad --hostname/--port: cannot use %s", cfg->uri);
	if (status < 0) {
		struct berval bv = {0, NULL};
		int frc = ldap_create_assertion_control_value(ld, f, &bv);
		ber_memfree(bv.bv_val);
		if (frc != LDAP_SUCCESS)
			status = usage_error("--filter: \"%s\" is not a valid LDAP filter", f);
	}
	if (ld)
		ldap_unbind_ext(ld, NULL, NULL);
	free(buf);
	/* Sequential ranges start the run at their first value. */
	pattern_rewind(&cfg->base);
	pattern_rewind(&cfg->filter);
	return status;
}

int options_parse(struct sr_config *cfg, int argc, char **argv)
{
	*cfg = (struct sr_config){.host = "127.0.0.1",
	                          .port = 389,
	                          .scope = LDAP_SCOPE_SUBTREE,
	                          .scope_name = "sub",
	                          .threads = 1,
	                          .interval = 5,
	                          .arg.filter = "(objectClass=*)"};
	int status = read_options(cfg, argc, argv);
	if (status < 0)
		status = check_combinations(cfg);
	if (status < 0)
		status = check_tls(cfg);
	if (status >= 0)
		return status;
	char err[512];
	if (!pattern_parse(&cfg->base, cfg->arg.base, err, sizeof(err)))
		return usage_error("--baseDN: %s", err);
	if (!pattern_parse(&cfg->filter, cfg->arg.filter, err, sizeof(err)))
		return usage_error("--filter: %s", err);
	const char *scheme = cfg->use_ssl ? "ldaps" : "ldap";
	if (strchr(cfg->host, ':') && cfg->host[0] != '[')
		snprintf(cfg->uri, sizeof(cfg->uri), "%s://[%s]:%d", scheme, cfg->host, cfg->port);
	else
		snprintf(cfg->uri, sizeof(cfg->uri), "%s://%s:%d", scheme, cfg->host, cfg->port);
	return check_expansions(cfg);
}

void options_free(struct sr_config *cfg)
{
	free(cfg->attrs);
	free(cfg->bindpw_owned);
	pattern_free(&cfg->base);
	pattern_free(&cfg->filter);
	cfg->attrs = NULL;
	cfg->bindpw_owned = NULL;
}
