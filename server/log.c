#include "server/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "server/clock.h"

bool log_debug_enabled;

/* Call sites seen so far; a site beyond the table is not limited (there are ~40). */
#define LOG_SITES 128
#define LOG_LINE_MAX 1024

struct log_site {
	const char *fmt;
	const char *level;
	time_t second;      /* the second the counts below are for */
	int printed;        /* lines printed in that second */
	unsigned long held; /* lines suppressed, not yet reported */
	char *last;         /* the last of them, formatted (malloc'd) */
};

static struct log_site sites[LOG_SITES];
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;

void log_stamp_parts(time_t sec, char date[24], char zone[8])
{
	struct tm tm;
	char z[8];
	localtime_r(&sec, &tm);
	strftime(date, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm); /* +hhmm; RFC 3339 wants +hh:mm */
	snprintf(zone, 8, "%.3s:%.2s", z, z + 3);
}

__attribute__((format(printf, 2, 0))) static void emit(const char *level, const char *fmt,
                                                       va_list ap)
{
	char line[LOG_LINE_MAX], date[24], zone[8];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	log_stamp_parts(ts.tv_sec, date, zone);
	int n = snprintf(line, sizeof(line), "%s.%03ld%s minidir[%ld]: %s: ", date,
	                 ts.tv_nsec / 1000000, zone, (long)getpid(), level);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* One write per line, so lines of different threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}

__attribute__((format(printf, 2, 3))) static void emit_args(const char *level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(level, fmt, ap);
	va_end(ap);
}

static void report_held(struct log_site *s)
{
	if (s->held == 1)
		emit_args(s->level, "%s", s->last ? s->last : s->fmt);
	else if (s->held)
		emit_args(s->level, "%lu more like this, the last: %s", s->held,
		          s->last ? s->last : s->fmt);
	s->held = 0;
}

/* Keeps the text of a line held back, to show with the count. */
__attribute__((format(printf, 2, 0))) static void hold(struct log_site *s, const char *fmt,
                                                       va_list ap)
{
	if (!s->last)
		s->last = malloc(LOG_LINE_MAX);
	if (s->last)
		vsnprintf(s->last, LOG_LINE_MAX, fmt, ap);
}

/* Whether a line of this site may be printed now; counts and keeps it when not. */
__attribute__((format(printf, 2, 0))) static bool site_allows(const char *level, const char *fmt,
                                                              va_list ap)
{
	time_t now = clock_seconds();
	bool allow = true;
	pthread_mutex_lock(&sites_lock);
	for (int i = 0; i < LOG_SITES; i++) {
		struct log_site *s = &sites[i];
		if (s->fmt && s->fmt != fmt)
			continue;
		if (!s->fmt) {
			*s = (struct log_site){.fmt = fmt, .level = level, .second = now};
		} else if (s->second != now) {
			report_held(s);
			s->second = now;
			s->printed = 0;
		}
		if (s->printed < LOG_BURST)
			s->printed++;
		else {
			s->held++;
			hold(s, fmt, ap);
			allow = false;
		}
		break;
	}
	pthread_mutex_unlock(&sites_lock);
	return allow;
}

void log_tick(void)
{
	time_t now = clock_seconds();
	pthread_mutex_lock(&sites_lock);
	for (int i = 0; i < LOG_SITES && sites[i].fmt; i++)
		if (sites[i].second != now)
			report_held(&sites[i]);
	pthread_mutex_unlock(&sites_lock);
}

/* A rate-limited line: printed, or counted and kept by its site. */
__attribute__((format(printf, 2, 0))) static void log_limited(const char *level, const char *fmt,
                                                              va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	bool allow = site_allows(level, fmt, copy);
	va_end(copy);
	if (allow)
		emit(level, fmt, ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_limited("error", fmt, ap);
	va_end(ap);
}

void log_warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_limited("warning", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_limited("info", fmt, ap);
	va_end(ap);
}

void log_debug_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("debug", fmt, ap);
	va_end(ap);
}
