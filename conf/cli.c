#include "conf/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum { OPT_VERSION = 256 };

int cli_parse(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, OPT_VERSION}, {0}};
	char spec[64] = "f:h";
	for (int i = 0; i < cli->nflags && strlen(spec) + 1 < sizeof(spec); i++)
		spec[strlen(spec)] = cli->flags[i].letter;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, spec, longopts, NULL)) != -1) {
		if (c == 'f') {
			cli->config = optarg;
		} else if (c == 'h') {
			fputs(cli->usage, stdout);
			return 0;
		} else if (c == OPT_VERSION) {
			printf("%s %s\n", cli->prog, MINIDIR_VERSION);
			return 0;
		} else {
			int i = 0;
			while (i < cli->nflags && cli->flags[i].letter != c)
				i++;
			if (i == cli->nflags) {
				fputs(cli->usage, stderr);
				return 2;
			}
			*cli->flags[i].set = true;
		}
	}
	if (!cli->config || argc - optind != cli->noperands) {
		fputs(cli->usage, stderr);
		return 2;
	}
	cli->operands = argv + optind;
	return -1;
}

int cli_load_config(const struct cli *cli, struct config *cfg)
{
	char err[1024];
	if (config_load(cfg, cli->config, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", cli->prog, err);
		return -1;
	}
	return 0;
}

int cli_start(struct cli *cli, int argc, char **argv, struct config *cfg)
{
	int status = cli_parse(cli, argc, argv);
	if (status >= 0)
		return status;
	return cli_load_config(cli, cfg) < 0 ? 1 : -1;
}
