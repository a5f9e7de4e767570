/*
 * options.h: searchrate's command line, with UnboundID searchrate's option names, parsed
 * into the run's configuration. The configuration is written once here, before any load
 * thread starts, and only read afterwards (but for the patterns' sequential counters, see
 * pattern.h).
 */
#ifndef SEARCHRATE_OPTIONS_H
#define SEARCHRATE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/searchrate/pattern.h"

/* --engine: the lean one or libldap's; AUTO until options_parse chooses. */
enum sr_engine_kind { SR_ENGINE_AUTO, SR_ENGINE_LEAN, SR_ENGINE_LIBLDAP };

struct sr_config {
	enum sr_engine_kind engine;
	const char *host;
	int port;
	const char *binddn;     /* NULL: no bind */
	const char *bindpw;     /* with binddn */
	bool use_ssl;           /* --useSSL: ldaps://, TLS from the first byte */
	bool use_starttls;      /* --useStartTLS: ldap://, then StartTLS before anything else */
	bool trust_all;         /* --trustAll: do not verify the server's certificate */
	const char *truststore; /* --trustStorePath: CA certificates (PEM); NULL: the system's */
	bool resume_tls;        /* --resumeTLSSessions: offer each thread's newest session (lean) */
	uint64_t
	    reconnect_every; /* --iterationsBeforeReconnect: searches per connection; 0: no limit */
	struct pattern base, filter;
	int scope; /* LDAP_SCOPE_* */
	const char *scope_name;
	char **attrs; /* owned, NULL terminated; NULL: all user attributes */
	int nattrs;
	int threads, conns; /* conns >= threads */
	double interval;    /* seconds */
	uint64_t intervals; /* 0: until SIGINT or SIGTERM */
	uint64_t warmup;
	double rate; /* target total searches per second; 0: as fast as possible */
	bool async;
	int max_outstanding; /* per connection, with async */
	int sizelimit, timelimit;
	bool csv;
	char uri[600];
	char *bindpw_owned; /* read from --bindPasswordFile */
	struct {
		const char *base, *filter, *pwfile;
	} arg; /* option values kept for the checks after the options are read */
};

/*
 * Parses argv into *cfg and checks one expansion of each pattern (the base a DN, the
 * filter an LDAP filter), so that bad input is one message rather than a stream of errors.
 * Returns -1 when the run may start; otherwise the exit status: 0 after printing --help to
 * stdout, 2 after printing "searchrate: REASON" and the usage text to stderr. In every case
 * cfg must be released with options_free.
 */
int options_parse(struct sr_config *cfg, int argc, char **argv);

/* Frees what cfg owns. */
void options_free(struct sr_config *cfg);

/* The size of an engine's table of the requests in flight on one connection: a power of
 * two of at least twice the most cfg keeps in flight (so slots are found by a mask). */
static inline unsigned sr_slot_table_size(const struct sr_config *cfg)
{
	unsigned table = 2;
	while (table < 2u * (unsigned)(cfg->async ? cfg->max_outstanding : 1))
		table *= 2;
	return table;
}

#endif
