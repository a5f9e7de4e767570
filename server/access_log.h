/*
 * The access log (access_log = none | stderr | syslog | FILE): one line per
 * connection opened or closed and per operation, as admins grep slapd's
 * "stats" level:
 *
 *   2026-11-30T13:51:14.123+00:00 conn=12 op=3 SEARCH base="dc=example,dc=com"
 *     scope=sub filter="(uid=alice)" attrs="cn mail" dn="uid=bob,..." result=0
 *     entries=1 etime=0.000123
 *
 * (one line; wrapped here). Lines go into the worker's own buffer, without a
 * lock, and the buffer is written when 32 KiB are waiting or, at the end of a
 * round of the worker's event loop, when its oldest line is 200 ms old (the loop
 * wakes at least once a second): a few writes a second, not one per line.
 * To a file it is opened O_APPEND and each write holds whole lines, so the
 * workers' lines do not mix within a line. syslog gets one syslog() call per
 * line at the same moments (LOG_INFO, facility LOG_DAEMON).
 *
 * SIGHUP opens the destination again (after logrotate moved the file away,
 * the server writes to a new one); the previous descriptor is closed at the
 * following SIGHUP, once no worker can still be writing to it: each worker notes
 * at every round the SIGHUP generation it writes under (an acquire load, then a
 * release store), and the main thread closes the descriptor only when every one
 * has noted the generation that replaced it (waiting up to 2 s for a round).
 *
 * Thread rules: access_log_open/_reopen/_close run in the main thread;
 * access_log_on, _add and _flush in the worker that owns the buffer.
 */
#ifndef MINIDIR_SERVER_ACCESS_LOG_H
#define MINIDIR_SERVER_ACCESS_LOG_H

#include <stdbool.h>

#include "server/server.h"

/* Opens spec ("none", "stderr", "syslog" or a path). Returns 0, or -1 after logging why. */
int access_log_open(struct server *srv, const char *spec);
/* SIGHUP: spec again (perhaps another one); on failure logs it and keeps the old one. */
void access_log_reopen(struct server *srv, const char *spec);
/* Flushes nothing (the workers did); closes the destination. */
void access_log_close(struct server *srv);

/* True if lines are wanted: callers build their text only then. */
bool access_log_on(struct server *srv);

/* Appends a timestamp, fmt's text and a newline to w's buffer (nothing when off). */
void access_log_add(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Notes the SIGHUP generation w writes under, and writes w's buffer if it waited 200 ms;
 * called by the event loop after each round. */
void access_log_tick(struct worker *w);
/* Writes what w's buffer holds now. */
void access_log_flush(struct worker *w);

#endif
