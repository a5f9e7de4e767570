/* minidir-export: writes the config's database as LDIF on standard output. */
#include <stdio.h>

#include "conf/cli.h"
#include "protocol/schema.h"
#include "ldif/ldif_import.h"

static const char usage[] =
    "usage: minidir-export [-q] -f CONFIG\n"
    "\n"
    "Writes every entry of the config's database as LDIF on standard output,\n"
    "parents before children, so that minidir-import can read it back.\n"
    "\n"
    "  -f CONFIG   configuration file (database)\n"
    "  -q          no progress line (shown on standard error when it is a terminal)\n"
    "  -h, --help  this help; --version: the version\n";

static void show_progress(void *arg, size_t done, size_t total)
{
	cli_progress_show(arg, done, total, 0, 0);
}

int main(int argc, char **argv)
{
	bool quiet = false;
	const struct cli_flag flags[] = {{'q', &quiet, NULL, NULL}};
	struct cli cli = {.prog = "minidir-export", .usage = usage, .flags = flags, .nflags = 1};
	struct config cfg;
	int status = cli_start(&cli, argc, argv, &cfg);
	if (status >= 0)
		return status;
	char err[1024];
	/* The schema names each entry's structuralObjectClass, as the server answers it. */
	if (schema_load(cfg.schema_dir, cfg.schema, err, sizeof(err)) < 0) {
		fprintf(stderr, "minidir-export: schema: %s\n", err);
		config_free(&cfg);
		return 1;
	}
	struct cli_progress progress;
	cli_progress_start(&progress, "minidir-export", quiet);
	int rc = ldif_export(cfg.database, stdout, err, sizeof(err), show_progress, &progress);
	cli_progress_end(&progress);
	if (rc < 0)
		fprintf(stderr, "minidir-export: %s\n", err);
	config_free(&cfg);
	schema_free();
	return rc < 0 ? 1 : 0;
}
