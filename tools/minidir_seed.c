/* minidir-seed: a peer's /snapshot fetched into a new replica's database file. */
#include <stdio.h>

#include "conf/cli.h"
#include "conf/file_owner.h"
#include "conf/id_names.h"
#include "server/clock.h"
#include "server/replica/replica.h"

static const char usage[] =
    "usage: minidir-seed [-q] [-f CONFIG] URL FILE\n"
    "\n"
    "Fetches a peer's copy of its database (URL: http[s]://PEER:PORT/snapshot, the\n"
    "peer's metrics_listen and snapshot_allow) into FILE, which must not exist: the\n"
    "length and checksum the peer sends after the copy are checked, then that FILE\n"
    "opens as a minidir database holding a replication cookie and saying what it\n"
    "replicates (printed). With -f, the checks a replica's syncrepl seed= makes too:\n"
    "the config's suffix and, when it has a syncrepl key, the same provider, base,\n"
    "scope, filter, attributes and type. Written as FILE.seed, renamed to FILE once\n"
    "checked; on any error nothing is left. As root, FILE is given to the config's\n"
    "user (else to the owner of FILE's directory). A replica started on FILE follows\n"
    "its provider from the copy's cookie; one whose key replicates other entries or\n"
    "attributes drops the cookie and refreshes in full.\n"
    "\n"
    "  -f CONFIG   the replica's configuration file (suffix, syncrepl, tls_ca_file:\n"
    "              the CA an https:// peer's certificate must chain to; user, group)\n"
    "  -q          print nothing on success\n"
    "  -h, --help  this help; --version: the version\n";

int main(int argc, char **argv)
{
	bool quiet = false;
	const struct cli_flag flags[] = {{'q', &quiet, NULL, NULL}};
	struct cli cli = {.prog = "minidir-seed",
	                  .usage = usage,
	                  .flags = flags,
	                  .nflags = 1,
	                  .noperands = 2,
	                  .config_optional = true};
	static struct config cfg; /* zeroed: no config's checks, the system's CAs */
	int status = cli_parse(&cli, argc, argv);
	if (status >= 0)
		return status;
	if (cli.config && cli_load_config(&cli, &cfg) < 0)
		return 1;
	const char *url = cli.operands[0], *file = cli.operands[1];
	char why[1024];
	static struct seed_result got;
	struct file_owner owner;
	uint64_t start = clock_ns();
	int rc = file_owner_pick(&cfg, file, &owner, why, sizeof(why));
	if (rc == 0 && owner.warning[0])
		fprintf(stderr, "minidir-seed: warning: %s\n", owner.warning);
	if (rc == 0)
		rc = replica_seed_file(&cfg, url, file, &owner, &got, why, sizeof(why));
	if (rc < 0)
		fprintf(stderr, "minidir-seed: %s: %s\n", url, why);
	else if (!quiet) {
		printf("minidir-seed: %s: %llu bytes, %zu entries, in %.1f s, from %s\n", file,
		       (unsigned long long)got.bytes, got.entries,
		       (double)(clock_ns() - start) / 1e9, url);
		printf("minidir-seed: %s holds %s, replicating %s\n", file, got.suffix, got.source);
		if (owner.chown) {
			char names[160];
			id_names(owner.uid, owner.gid, names, sizeof(names));
			printf("minidir-seed: %s owned by %s (%s)\n", file, names, owner.who);
		}
	}
	if (cli.config)
		config_free(&cfg);
	return rc < 0 ? 1 : 0;
}
