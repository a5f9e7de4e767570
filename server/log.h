/*
 * Logging to standard error: "TIMESTAMP minidir[pid]: level: message", one line each.
 *
 * Error, warning and info lines are rate-limited per call site (the format string): in
 * any one second the first LOG_BURST lines of a site are printed, the rest are
 * counted, and the count is reported once, as "N more like: FORMAT", by the next
 * line of that site in a later second or by log_tick(). A client (or a fault)
 * that makes the same thing happen thousands of times a second thus costs a few
 * lines a second, not a flooded disk. Debug lines (-d) are not limited.
 *
 * Every function is safe to call from any thread.
 */
#ifndef MINIDIR_SERVER_LOG_H
#define MINIDIR_SERVER_LOG_H

#include <stdbool.h>
#include <time.h>

/* Lines of one call site printed per second before the rest are counted. */
#define LOG_BURST 3

/* Debug messages (per connection and operation) are printed when true. */
extern bool log_debug_enabled;

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A setting that works but should not be left so (the examples' rootpw): "warning:". */
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The parts of an RFC 3339 timestamp of sec in local time: date "2026-11-30T13:51:14"
 * and zone "+00:00" (both NUL-terminated), to which a caller adds its fraction. */
void log_stamp_parts(time_t sec, char date[24], char zone[8]);

/* Reports the counts of lines suppressed in earlier seconds; call about once a second. */
void log_tick(void);

/* Evaluates its arguments only when debug logging is on. */
#define log_debug(...)                                                                             \
	do {                                                                                       \
		if (log_debug_enabled)                                                             \
			log_debug_msg(__VA_ARGS__);                                                \
	} while (0)

#endif
