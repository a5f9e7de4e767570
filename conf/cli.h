/*
 * The command line the three programs share (minidir, minidir-import,
 * minidir-export): "-f CONFIG", "-h"/"--help", "--version", some one-letter
 * flags of their own, and a fixed number of operands; then the config file.
 */
#ifndef MINIDIR_CONF_CLI_H
#define MINIDIR_CONF_CLI_H

#include <stdbool.h>

#include "conf/config.h"
#include "conf/version.h" /* MINIDIR_VERSION, printed by --version */

/* A one-letter flag: -LETTER sets *set to true; with arg (not NULL) it takes a value,
 * "-LETTER VALUE", and *arg points to it (borrowed from argv). With a name (not NULL),
 * --NAME is the same flag. */
struct cli_flag {
	char letter;
	bool *set;
	const char **arg;
	const char *name;
};

struct cli {
	const char *prog;             /* "minidir-import": messages start with it */
	const char *usage;            /* the --help text, from its "usage:" line on */
	const struct cli_flag *flags; /* flags[0..nflags) */
	int nflags;
	int noperands;         /* operands required after the options */
	bool config_optional;  /* -f may be left out (cli->config then NULL) */
	const char *config;    /* set by cli_parse: the -f argument (borrowed from argv) */
	char *const *operands; /* set by cli_parse: argv's operands */
};

/*
 * Parses argv into cli. Returns -1 when the program should go on, else the exit
 * status to return at once: 0 after --help (usage on standard output) or
 * --version, 2 after a usage error (usage on standard error).
 */
int cli_parse(struct cli *cli, int argc, char **argv);

/*
 * cli_parse, then cli_load_config: what every program does first. Returns -1
 * when the program should go on (cfg loaded, the caller frees it), else the
 * exit status to return at once (1 for a config error).
 */
int cli_start(struct cli *cli, int argc, char **argv, struct config *cfg);

/* config_load of cli->config into cfg; on error prints "PROG: FILE:LINE: reason"
 * to standard error and returns -1 (cfg then owns nothing), else 0. */
int cli_load_config(const struct cli *cli, struct config *cfg);

/*
 * A progress line on standard error, redrawn in place at most 4 times a second:
 * "minidir-import: 120000 entries, 70.4 of 588.0 MB (12%), 98000 entries/s, 0:05 left".
 * Only when standard error is a terminal and not quiet; otherwise every call does
 * nothing. cli_progress_end clears the line.
 */
struct cli_progress {
	const char *prog;
	bool on;
	double start, last; /* CLOCK_MONOTONIC seconds */
	bool drawn;
};
void cli_progress_start(struct cli_progress *p, const char *prog, bool quiet);
/* done items so far of total (0: unknown); bytes read of bytes_total (bytes_total 0: no
 * byte figures). */
void cli_progress_show(struct cli_progress *p, size_t done, size_t total, long long bytes,
                       long long bytes_total);
void cli_progress_end(struct cli_progress *p);

#endif
