/*
 * The command line the three programs share (minidir, minidir-import,
 * minidir-export): "-f CONFIG", "-h"/"--help", "--version", some one-letter
 * flags of their own, and a fixed number of operands; then the config file.
 */
#ifndef MINIDIR_CONF_CLI_H
#define MINIDIR_CONF_CLI_H

#include <stdbool.h>

#include "conf/config.h"

#define MINIDIR_VERSION "0.9.0"

/* A one-letter flag: -LETTER sets *set to true. */
struct cli_flag {
	char letter;
	bool *set;
};

struct cli {
	const char *prog;             /* "minidir-import": messages start with it */
	const char *usage;            /* the --help text, from its "usage:" line on */
	const struct cli_flag *flags; /* flags[0..nflags) */
	int nflags;
	int noperands;         /* operands required after the options */
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

#endif
