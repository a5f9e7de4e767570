/* minidir-seed: a peer's /snapshot fetched into a new replica's database file. */
#include <stdio.h>

#include "conf/cli.h"
#include "server/clock.h"
#include "server/replica/replica.h"

static const char usage[] =
    "usage: minidir-seed [-q] -f CONFIG URL FILE\n"
    "\n"
    "Fetches a peer's copy of its database (URL: http[s]://PEER:PORT/snapshot, the\n"
    "peer's metrics_listen and snapshot_allow) into FILE, which must not exist, with\n"
    "the checks a replica's syncrepl seed= makes: the length and SHA-256 the peer\n"
    "sends after the copy, then that FILE opens as a minidir database of the config's\n"
    "suffix holding a replication cookie and, when the config has a syncrepl key,\n"
    "replicating what it says. Written as FILE.seed, renamed to FILE once checked;\n"
    "on any error nothing is left. A replica started on FILE follows its provider\n"
    "from the copy's cookie.\n"
    "\n"
    "  -f CONFIG   the replica's configuration file (suffix, syncrepl, tls_ca_file:\n"
    "              the CA an https:// peer's certificate must chain to)\n"
    "  -q          print nothing on success\n"
    "  -h, --help  this help; --version: the version\n";

int main(int argc, char **argv)
{
	bool quiet = false;
	const struct cli_flag flags[] = {{'q', &quiet, NULL, NULL}};
	struct cli cli = {
	    .prog = "minidir-seed", .usage = usage, .flags = flags, .nflags = 1, .noperands = 2};
	struct config cfg;
	int status = cli_start(&cli, argc, argv, &cfg);
	if (status >= 0)
		return status;
	const char *url = cli.operands[0], *file = cli.operands[1];
	char why[1024];
	struct seed_result got;
	uint64_t start = clock_ns();
	int rc = replica_seed_file(&cfg, url, file, &got, why, sizeof(why));
	if (rc < 0)
		fprintf(stderr, "minidir-seed: %s: %s\n", url, why);
	else if (!quiet)
		printf("minidir-seed: %s: %llu bytes, %zu entries, in %.1f s, from %s\n", file,
		       (unsigned long long)got.bytes, got.entries,
		       (double)(clock_ns() - start) / 1e9, url);
	config_free(&cfg);
	return rc < 0 ? 1 : 0;
}
