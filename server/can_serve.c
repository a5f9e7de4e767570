/* minidir --can-serve (can_serve.h). */
#include "server/can_serve.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

int server_can_serve(const struct config *cfg)
{
	if (cfg->syncrepl.set)
		return CAN_SERVE_YES;
	struct stat st;
	/* Only a path that names nothing means no database: a file start-up cannot read
	 * (EACCES on it or its directory) gets start-up's error, which says how to fix it. */
	if (stat(cfg->database, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return CAN_SERVE_YES;
	fprintf(stderr,
	        "minidir: no database at %s and no syncrepl: import one with minidir-import -f "
	        "%s data.ldif\n",
	        cfg->database, cfg->path);
	return CAN_SERVE_NO;
}
