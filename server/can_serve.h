/*
 * minidir --can-serve: whether the server has something to serve, for systemd's
 * ExecCondition= (packaging/minidir.service.in). A server without a database would
 * stop at start-up with an error, and the unit would be marked failed on a machine
 * where the package was only installed; an empty suffix served instead would answer
 * noSuchObject to every client as if the directory were empty (docs/install.md says
 * why the first was chosen).
 */
#ifndef MINIDIR_SERVER_CAN_SERVE_H
#define MINIDIR_SERVER_CAN_SERVE_H

#include "conf/config.h"

/* Exit statuses, as ExecCondition= reads them: 1..254 skip the unit (not failed), 255
 * fails it. */
enum { CAN_SERVE_YES = 0, CAN_SERVE_NO = 1, CAN_SERVE_CONFIG_ERROR = 255 };

/*
 * CAN_SERVE_YES when cfg has a syncrepl key (a replica makes its database) or something
 * is at cfg->database (whether it can be read is start-up's to say, with its error);
 * else CAN_SERVE_NO after one line on standard error: "minidir: no database at PATH and
 * no syncrepl: import one with minidir-import -f CONFIG data.ldif".
 */
int server_can_serve(const struct config *cfg);

#endif
