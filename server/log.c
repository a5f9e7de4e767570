#include "server/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

bool log_debug_enabled;

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char line[1024], stamp[32];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	int n = snprintf(line, sizeof(line), "%s.%03ld minidir[%ld]: %s: ", stamp,
	                 ts.tv_nsec / 1000000, (long)getpid(), level);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* One write per line, so lines of different threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("info", fmt, ap);
	va_end(ap);
}

void log_debug_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("debug", fmt, ap);
	va_end(ap);
}
