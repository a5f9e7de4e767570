/* minidir-import: builds the database named in the config from an LDIF file. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "protocol/schema.h"
#include "storage/ldif_import.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: minidir-import [-q] [-s] -f CONFIG FILE.ldif\n"
	           "\n"
	           "Imports the entries of FILE.ldif (RFC 2849 content records, parents before\n"
	           "children, all under the config's suffix) into a new database that atomically\n"
	           "replaces the config's database file. On any error the previous database is\n"
	           "left untouched and the first problem is printed as FILE:LINE: reason.\n"
	           "A running minidir keeps serving the old data until restarted.\n"
	           "\n"
	           "  -f CONFIG   configuration file (database, suffix, index)\n"
	           "  -q          quiet: print nothing on success\n"
	           "  -s          skip schema checking (as slapadd -s): accept undefined\n"
	           "              attribute types and object classes, missing MUST\n"
	           "              attributes, attributes no class allows, values that\n"
	           "              violate their syntax\n"
	           "  -h, --help  this help\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
	const char *conf = NULL;
	int quiet = 0, skip_schema = 0, c;
	while ((c = getopt_long(argc, argv, "f:qsh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 's':
			skip_schema = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!conf || optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	struct config cfg;
	char err[1024];
	if (config_load(&cfg, conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "minidir-import: %s\n", err);
		return 1;
	}
	if (schema_load(cfg.schema_dir, cfg.schema, err, sizeof(err)) < 0) {
		fprintf(stderr, "minidir-import: schema: %s\n", err);
		config_free(&cfg);
		return 1;
	}
	struct import_opts opts = {.suffix = cfg.suffix,
	                           .index = cfg.index,
	                           .nindex = cfg.nindex,
	                           .err = stderr,
	                           .creator = cfg.rootdn,
	                           .skip_schema = skip_schema};
	size_t n = 0;
	int rc = ldif_import(argv[optind], cfg.database, &opts, &n);
	if (rc == 0 && !quiet)
		printf("minidir-import: %zu entries from %s into %s\n", n, argv[optind],
		       cfg.database);
	else if (rc != 0)
		fprintf(stderr, "minidir-import: import failed; %s is unchanged\n", cfg.database);
	config_free(&cfg);
	schema_free();
	return rc == 0 ? 0 : 1;
}
