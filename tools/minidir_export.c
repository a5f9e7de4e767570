/* minidir-export: writes the config's database as LDIF on standard output. */
#include <stdio.h>

#include "conf/cli.h"
#include "storage/ldif_import.h"

static const char usage[] =
    "usage: minidir-export -f CONFIG\n"
    "\n"
    "Writes every entry of the config's database as LDIF on standard output,\n"
    "parents before children, so that minidir-import can read it back.\n"
    "\n"
    "  -f CONFIG   configuration file (database)\n"
    "  -h, --help  this help; --version: the version\n";

int main(int argc, char **argv)
{
	struct cli cli = {.prog = "minidir-export", .usage = usage};
	struct config cfg;
	int status = cli_start(&cli, argc, argv, &cfg);
	if (status >= 0)
		return status;
	char err[1024];
	int rc = ldif_export(cfg.database, stdout, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "minidir-export: %s\n", err);
	config_free(&cfg);
	return rc < 0 ? 1 : 0;
}
