/* Logging to standard error: "minidir[pid]: level: message", one line each. */
#ifndef MINIDIR_SERVER_LOG_H
#define MINIDIR_SERVER_LOG_H

#include <stdbool.h>

/* Debug messages (per connection and operation) are printed when true. */
extern bool log_debug_enabled;

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Evaluates its arguments only when debug logging is on. */
#define log_debug(...)                                                                             \
	do {                                                                                       \
		if (log_debug_enabled)                                                             \
			log_debug_msg(__VA_ARGS__);                                                \
	} while (0)

#endif
