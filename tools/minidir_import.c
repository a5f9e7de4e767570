/* minidir-import: builds the database named in the config from an LDIF file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/cli.h"
#include "conf/id_names.h"
#include "conf/file_owner.h"
#include "protocol/schema.h"
#include "ldif/ldif_import.h"

static const char usage[] =
    "usage: minidir-import [-q] [-s] [-U] [-j THREADS] -f CONFIG FILE.ldif\n"
    "\n"
    "Imports the entries of FILE.ldif (RFC 2849 content records, parents before\n"
    "children, all under the config's suffix) into a new database that atomically\n"
    "replaces the config's database file. On any error the previous database is\n"
    "left untouched and the first problem is printed as FILE:LINE: reason.\n"
    "A running minidir serves the new database within a second, without a restart\n"
    "(searches already running finish on the old one).\n"
    "\n"
    "  -f CONFIG   configuration file (database, suffix, index)\n"
    "  -q          quiet: print nothing on success, and no progress line (shown\n"
    "              on a terminal: entries, megabytes read, entries/s, time left)\n"
    "  -s          skip schema checking (as slapadd -s): accept undefined\n"
    "              attribute types and object classes, missing MUST\n"
    "              attributes, attributes no class allows, values that\n"
    "              violate their syntax\n"
    "  -U, --allow-url-values\n"
    "              read the file a \"type:< file:///PATH\" value names (a regular\n"
    "              file, at most 16 MiB a record); without it such a value is an\n"
    "              error: an LDIF file could otherwise copy any file the importer\n"
    "              can read (/etc/shadow) into an entry\n"
    "  -j THREADS  threads that parse, check and encode entries while one more\n"
    "              stores them (1 to 16; default 2); 1: one thread does all.\n"
    "              The database is the same.\n"
    "  -h, --help  this help; --version: the version\n";

static void show_progress(void *arg, size_t entries, long long bytes, long long total)
{
	cli_progress_show(arg, entries, 0, bytes, total);
}

int main(int argc, char **argv)
{
	bool quiet = false, skip_schema = false, threads_set = false, url_values = false;
	const char *threads = "2";
	const struct cli_flag flags[] = {{'q', &quiet, NULL, NULL},
	                                 {'s', &skip_schema, NULL, NULL},
	                                 {'U', &url_values, NULL, "allow-url-values"},
	                                 {'j', &threads_set, &threads, NULL}};
	struct cli cli = {
	    .prog = "minidir-import", .usage = usage, .flags = flags, .nflags = 4, .noperands = 1};
	struct config cfg;
	int status = cli_parse(&cli, argc, argv);
	if (status >= 0)
		return status;
	char *end;
	long nthreads = strtol(threads, &end, 10);
	if (*threads == '\0' || *end != '\0' || nthreads < 1 || nthreads > 16) {
		fprintf(stderr, "minidir-import: -j %s: THREADS must be a number from 1 to 16\n",
		        threads);
		return 2;
	}
	if (cli_load_config(&cli, &cfg) < 0)
		return 1;
	char err[1024];
	if (schema_load(cfg.schema_dir, cfg.schema, err, sizeof(err)) < 0) {
		fprintf(stderr, "minidir-import: schema: %s\n", err);
		config_free(&cfg);
		return 1;
	}
	if (cfg.schema_dir_from_tree && !quiet)
		fprintf(stderr,
		        "minidir-import: schema_dir: the source tree's %s (none installed)\n",
		        cfg.schema_dir);
	struct import_opts opts = {.suffix = cfg.suffix,
	                           .index = cfg.index,
	                           .nindex = cfg.nindex,
	                           .err = stderr,
	                           .creator = cfg.rootdn,
	                           .skip_schema = skip_schema,
	                           .url_values = url_values,
	                           .memberof_nested = cfg.memberof_nested == MEMBEROF_NESTED_YES,
	                           .threads = (int)nthreads,
	                           .dynamic_groups = cfg.dynamic_groups,
	                           .dynamic_groups_max = cfg.dynamic_groups_max};
	struct file_owner owner;
	if (file_owner_pick(&cfg, cfg.database, &owner, err, sizeof(err)) < 0) {
		fprintf(stderr, "minidir-import: %s\n", err);
		config_free(&cfg);
		schema_free();
		return 1;
	}
	if (owner.warning[0])
		fprintf(stderr, "minidir-import: warning: %s\n", owner.warning);
	opts.chown = owner.chown;
	opts.uid = owner.uid;
	opts.gid = owner.gid;
	struct cli_progress progress;
	cli_progress_start(&progress, "minidir-import", quiet);
	opts.progress = show_progress;
	opts.progress_arg = &progress;
	size_t n = 0;
	int rc = ldif_import(cli.operands[0], cfg.database, &opts, &n);
	cli_progress_end(&progress);
	if (rc != 0)
		fprintf(stderr, "minidir-import: import failed; %s is unchanged\n", cfg.database);
	else if (!quiet)
		printf("minidir-import: %zu entries from %s into %s\n", n, cli.operands[0],
		       cfg.database);
	if (rc == 0 && !quiet && opts.chown) {
		char names[160];
		id_names(opts.uid, opts.gid, names, sizeof(names));
		printf("minidir-import: %s owned by %s (%s)\n", cfg.database, names, owner.who);
	}
	config_free(&cfg);
	schema_free();
	return rc == 0 ? 0 : 1;
}
