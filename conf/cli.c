#include "conf/cli.h"

#include <time.h>
#include <unistd.h>

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum { OPT_VERSION = 256 };

int cli_parse(struct cli *cli, int argc, char **argv)
{
	enum { MAX_LONG = 8 };
	struct option longopts[MAX_LONG + 3] = {{"help", no_argument, NULL, 'h'},
	                                        {"version", no_argument, NULL, OPT_VERSION}};
	char spec[64] = "f:h";
	for (int i = 0, nlong = 2; i < cli->nflags && strlen(spec) + 2 < sizeof(spec); i++) {
		spec[strlen(spec)] = cli->flags[i].letter;
		if (cli->flags[i].arg)
			spec[strlen(spec)] = ':';
		if (cli->flags[i].name && nlong < MAX_LONG + 2)
			longopts[nlong++] = (struct option){
			    cli->flags[i].name, cli->flags[i].arg ? required_argument : no_argument,
			    NULL, cli->flags[i].letter};
	}
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
			if (cli->flags[i].arg)
				*cli->flags[i].arg = optarg;
		}
	}
	if ((!cli->config && !cli->config_optional) || argc - optind != cli->noperands) {
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_start(struct cli_progress *p, const char *prog, bool quiet)
{
	p->prog = prog;
	p->on = !quiet && isatty(STDERR_FILENO);
	p->start = p->last = now_s();
	p->drawn = false;
}

void cli_progress_show(struct cli_progress *p, size_t done, size_t total, long long bytes,
                       long long bytes_total)
{
	if (!p->on)
		return;
	double t = now_s();
	if (t - p->last < 0.25)
		return;
	p->last = t;
	double rate = done / (t - p->start > 0 ? t - p->start : 1e-9);
	/* What is left, by bytes when known (entries of an LDIF vary less than their count). */
	double frac = bytes_total > 0 ? (double)bytes / (double)bytes_total
	              : total > 0     ? (double)done / (double)total
	                              : 0;
	char line[256];
	int n = snprintf(line, sizeof(line), "\r%s: %zu entries", p->prog, done);
	if (bytes_total > 0)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.1f of %.1f MB", bytes / 1e6,
		              bytes_total / 1e6);
	else if (total > 0)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " of %zu", total);
	n += snprintf(line + n, sizeof(line) - (size_t)n, " (%.0f%%), %.0f entries/s", 100 * frac,
	              rate);
	if (frac > 0.01) {
		long left = (long)((t - p->start) * (1 - frac) / frac);
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %ld:%02ld left", left / 60,
		              left % 60);
	}
	fprintf(stderr, "%s\033[K", line);
	fflush(stderr);
	p->drawn = true;
}

void cli_progress_end(struct cli_progress *p)
{
	if (p->on && p->drawn)
		fprintf(stderr, "\r\033[K");
}
