/* minidir-export: writes the config's database as LDIF on standard output. */
#include <getopt.h>
#include <stdio.h>

#include "conf/config.h"
#include "storage/ldif_import.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: minidir-export -f CONFIG\n"
	           "\n"
	           "Writes every entry of the config's database as LDIF on standard output,\n"
	           "parents before children, so that minidir-import can read it back.\n"
	           "\n"
	           "  -f CONFIG   configuration file (database)\n"
	           "  -h, --help  this help\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
	const char *conf = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!conf || optind != argc) {
		usage(stderr);
		return 2;
	}
	struct config cfg;
	char err[1024];
	if (config_load(&cfg, conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "minidir-export: %s\n", err);
		return 1;
	}
	int rc = ldif_export(cfg.database, stdout, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "minidir-export: %s\n", err);
	config_free(&cfg);
	return rc < 0 ? 1 : 0;
}
