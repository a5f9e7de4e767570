/* minidir-import: builds the database named in the config from an LDIF file. */
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/cli.h"
#include "conf/id_names.h"
#include "conf/key_line.h"
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

/*
 * Who the new database is given to, so that the server can read it (mode 0600): as root,
 * the config's user and group (else the user's primary group), whom a server started as
 * root switches to; without them, the owner of the database's directory when that is not
 * root (the package's /var/lib/minidir is the minidir user's, and its unit runs as that
 * user with user unset). Sets opts->chown, uid and gid, and who ("the server's user"...).
 * Not root: nothing can be given away; a configured user other than the caller is warned
 * about. Returns 0, or -1 after printing why (an unknown user or group: CONFIG:LINE).
 */
static int pick_owner(const struct config *cfg, struct import_opts *opts, char *who, size_t wholen)
{
	if (cfg->user[0]) {
		struct passwd *pw = getpwnam(cfg->user);
		struct group *gr = cfg->group[0] ? getgrnam(cfg->group) : NULL;
		if (!pw || (cfg->group[0] && !gr)) {
			const char *key = pw ? "group" : "user";
			fprintf(stderr, "minidir-import: %s:%d: %s = %s: no such %s\n", cfg->path,
			        config_key_line(cfg->path, key), key, pw ? cfg->group : cfg->user,
			        key);
			return -1;
		}
		opts->uid = pw->pw_uid;
		opts->gid = gr ? gr->gr_gid : pw->pw_gid;
		snprintf(who, wholen, "the server's user");
	} else {
		char dir[sizeof(cfg->database)];
		snprintf(dir, sizeof(dir), "%s", cfg->database);
		const char *d = dirname(dir);
		struct stat st;
		/* A missing directory is the import's to report; root's keeps a root file. */
		if (stat(d, &st) < 0 || st.st_uid == 0)
			return 0;
		opts->uid = st.st_uid;
		opts->gid = st.st_gid;
		snprintf(who, wholen, "the owner of %s", d);
	}
	if (geteuid() == 0) {
		opts->chown = true;
		return 0;
	}
	if (cfg->user[0] && opts->uid != geteuid())
		fprintf(
		    stderr,
		    "minidir-import: warning: %s will be yours (uid %ld), not user = %s's: only "
		    "root can give a file away; run minidir-import as root or as %s\n",
		    cfg->database, (long)geteuid(), cfg->user, cfg->user);
	return 0;
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
	char who[4200] = "";
	if (pick_owner(&cfg, &opts, who, sizeof(who)) < 0) {
		config_free(&cfg);
		schema_free();
		return 1;
	}
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
		printf("minidir-import: %s owned by %s (%s)\n", cfg.database, names, who);
	}
	config_free(&cfg);
	schema_free();
	return rc == 0 ? 0 : 1;
}
