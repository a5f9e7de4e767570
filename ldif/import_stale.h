/*
 * Stale temporary files of interrupted imports. An import builds its database
 * as "DATABASE.tmp.PID"; one killed with SIGKILL (or by a crash or power cut)
 * leaves that file behind. The next import removes them.
 */
#ifndef MINIDIR_LDIF_IMPORT_STALE_H
#define MINIDIR_LDIF_IMPORT_STALE_H

#include <stdio.h>

/*
 * Removes every "db_path.tmp.PID" in db_path's directory whose process is gone
 * (kill(PID, 0) fails with ESRCH). A file whose process lives (or may live:
 * EPERM), this process's own, and names with anything but digits after ".tmp."
 * are left alone. Prints one line per removed file to log. Returns the number
 * removed; problems (an unreadable directory, a failed unlink) are printed to
 * log and otherwise ignored: they do not stop an import.
 */
int import_remove_stale(const char *db_path, FILE *log);

#endif
