/*
 * libFuzzer target: an LDIF file given to minidir-import. The input is written
 * to a file and imported with storage's public ldif_import into a database in a
 * private temporary directory (suffix dc=test,dc=org, the default indexes), as
 * tools/minidir-import does; what it accepts or rejects is not checked, only
 * that it neither crashes nor leaks.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/input_file.h"
#include "protocol/schema.h"
#include "tests/tree_schema.h" /* the tree's schema/: fuzz/run.sh runs from the root */
#include "ldif/ldif_import.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/minidir-fuzz-ldif.XXXXXX";
static char ldif_path[64], db_path[64];
static FILE *devnull;

static void remove_dir(void)
{
	char lock[80];
	snprintf(lock, sizeof(lock), "%s-lock", db_path);
	unlink(ldif_path);
	unlink(db_path);
	unlink(lock);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char err[256];
	schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err));
	if (!mkdtemp(dir))
		abort();
	snprintf(ldif_path, sizeof(ldif_path), "%s/in.ldif", dir);
	snprintf(db_path, sizeof(db_path), "%s/db.mdb", dir);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	atexit(remove_dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input_file_write(ldif_path, data, size);
	static char *const index[] = {"objectClass", "uid", "cn", "mail", "member"};
	struct import_opts opts = {.suffix = "dc=test,dc=org",
	                           .index = index,
	                           .nindex = 5,
	                           .err = devnull,
	                           .creator = "cn=admin,dc=test,dc=org"};
	size_t count = 0;
	ldif_import(ldif_path, db_path, &opts, &count);
	return 0;
}
