/*
 * libFuzzer target: a configuration file. The input is written to a file and
 * read with config_load (libinih and every key's parser), then freed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf/config.h"
#include "fuzz/input_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[] = "/tmp/minidir-fuzz-config.XXXXXX";

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	atexit(remove_file);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input_file_write(path, data, size);
	static struct config cfg; /* 16 KB: not on the stack */
	char err[1024];
	if (config_load(&cfg, path, err, sizeof(err)) == 0)
		config_free(&cfg);
	return 0;
}
