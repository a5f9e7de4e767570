/* For the fuzz targets whose input is a file: writes the input to path. */
#ifndef MINIDIR_FUZZ_INPUT_FILE_H
#define MINIDIR_FUZZ_INPUT_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Writes data[0..size) to path (replacing it); aborts if it cannot. */
static inline void input_file_write(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
}

#endif
