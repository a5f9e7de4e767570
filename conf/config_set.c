/* The set functions of minidir.conf's key table: conf/config_set.h. */
#include "conf/config_set.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/metrics_addr.h"
#include "conf/syncrepl.h"
#include "protocol/buf.h"
#include "protocol/dn.h"

int config_bad(struct config_parse *st, const char *fmt, ...)
{
	if (st->why[0] == '\0') {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(st->why, st->whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int copy_str(struct config_parse *st, char *dst, size_t cap, const char *key,
                    const char *value)
{
	if (strlen(value) >= cap)
		return config_bad(st, "%s: value too long", key);
	strcpy(dst, value);
	return 0;
}

/* A value kept as written (a file, a name, a list for OpenSSL). */
int config_set_string(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	return copy_str(ctx, field, k->size, k->name, value);
}

int config_set_database(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	return value[0] ? config_set_string(ctx, k, field, value)
	                : config_bad(ctx, "database: path expected");
}

int config_set_access_log(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	return value[0] ? config_set_string(ctx, k, field, value)
	                : config_bad(ctx, "access_log: none, stderr, syslog or a file path");
}

/* A DN, kept as written; its normalized form at least k->min bytes (the suffix: not ""). */
int config_set_dn(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	struct buf n = {0};
	int ok = dn_normalize(value, strlen(value), &n, NULL) == 0 && n.len >= (size_t)k->min;
	buf_free(&n);
	if (!ok)
		return config_bad(ctx, "%s: \"%s\" is not a valid DN", k->name, value);
	return config_set_string(ctx, k, field, value);
}

/* suffix: a DN, once (one naming context per server: a second line would silently win). */
int config_set_suffix(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	if (((const char *)field)[0])
		return config_bad(
		    ctx,
		    "suffix is set twice (one naming context per server: \"%s\", then "
		    "\"%s\")",
		    (const char *)field, value);
	return config_set_dn(ctx, k, field, value);
}

/* updateref: an ldap:// or ldaps:// URL, kept as written. */
int config_set_url(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	if (strncasecmp(value, "ldap://", 7) != 0 && strncasecmp(value, "ldaps://", 8) != 0)
		return config_bad(ctx, "updateref: \"%s\" is not an ldap:// or ldaps:// URL",
		                  value);
	return config_set_string(ctx, k, field, value);
}

/* One of k->names, stored as its index (an enum); the member unchanged if not one. */
int config_set_choice(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	int i = kv_choice(value, k->names, false);
	if (i >= 0) {
		*(int *)field = i;
		return 0;
	}
	char why[512];
	int len = snprintf(why, sizeof(why), "%s: \"%s\" is not one of ", k->name, value);
	for (size_t j = 0; k->names[j] && len > 0 && (size_t)len < sizeof(why); j++)
		len += snprintf(why + len, sizeof(why) - (size_t)len, "%s%s", j ? ", " : "",
		                k->names[j]);
	return config_bad(ctx, "%s", why);
}

/* "yes" or "no". */
int config_set_bool(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
		return config_bad(ctx, "%s: expected yes or no, got \"%s\"", k->name, value);
	*(bool *)field = value[0] == 'y';
	return 0;
}

/* A whole number in k->min..k->max; what marks it in the error ("seconds"). */
static int parse_int(void *ctx, const struct kv_key *k, int *dst, const char *value,
                     const char *what)
{
	long n;
	if (!kv_long(value, k->min, k->max, &n)) {
		char expect[96];
		snprintf(expect, sizeof(expect), "%s: expected %s %ld..%ld, got", k->name, what,
		         k->min, k->max);
		return config_bad(ctx, "%s \"%s\"", expect, value);
	}
	*dst = (int)n;
	return 0;
}

int config_set_count(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	return parse_int(ctx, k, field, value, "a number");
}

int config_set_seconds(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	return parse_int(ctx, k, field, value, "seconds");
}

/* sizelimit, timelimit: a number, or "unlimited" (0). */
int config_set_limit(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	long n = 0;
	if (strcmp(value, "unlimited") != 0 && !kv_long(value, 0, 2147483647L, &n))
		return config_bad(ctx, "%s: expected a number or \"unlimited\", got \"%s\"",
		                  k->name, value);
	*(int *)field = (int)n;
	return 0;
}

/* A number of bytes in k->min..k->max, k or m (KiB, MiB) after it allowed, into *out. */
static bool parse_size(const struct kv_key *k, const char *value, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(value, &end, 10), mult = 1;
	unsigned long long min = (unsigned long long)k->min, max = (unsigned long long)k->max;
	if (*end == 'k' || *end == 'K')
		mult = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mult = 1024 * 1024, end++;
	if (v > max / mult)
		v = max + 1; /* out of range, reported below */
	else
		v *= mult;
	if (errno || end == value || *end || value[0] == '-' || v < min || v > max)
		return false;
	*out = (size_t)v;
	return true;
}

int config_set_size(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	if (!parse_size(k, value, field))
		return config_bad(ctx, "%s: expected a number of bytes in %ld..%ld", k->name,
		                  k->min, k->max);
	return 0;
}

/* memo_bytes: a number of bytes as config_set_size takes them, 0 (off) or "unlimited". */
int config_set_memo_bytes(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	if (strcmp(value, "unlimited") == 0)
		*(size_t *)field = SIZE_MAX;
	else if (strcmp(value, "auto") == 0)
		*(size_t *)field = CONFIG_MEMO_AUTO;
	else if (!parse_size(k, value, field))
		return config_bad(
		    ctx,
		    "%s: expected a number of bytes up to %ld (k or m after it: KiB, MiB), "
		    "0 (no memos), \"auto\" or \"unlimited\", got \"%s\"",
		    k->name, k->max, value);
	return 0;
}

/*
 * max_filter_items (items of a search filter), inchain_max (entries its in-chain items reach)
 * or max_search_work (filter work of a search,
 * filter.h's units): a number up to k->max, or "unlimited" (0). At most 2^32 items, 2^60
 * units: beyond that they stand for "unlimited" anyway.
 */
static int cost_limit(void *ctx, const struct kv_key *k, const char *value, unsigned long long *n)
{
	char *end = (char *)value;
	*n = 0;
	if (strcmp(value, "unlimited") == 0)
		return 0;
	errno = 0;
	*n = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
	if (end == value || *end || errno || *n == 0 || *n > (unsigned long long)k->max)
		return config_bad(ctx, "%s: expected a number from 1 or \"unlimited\", got \"%s\"",
		                  k->name, value);
	return 0;
}

int config_set_filter_items(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	unsigned long long n;
	if (cost_limit(ctx, k, value, &n) < 0)
		return -1;
	*(size_t *)field = (size_t)n;
	return 0;
}

int config_set_search_work(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	unsigned long long n;
	if (cost_limit(ctx, k, value, &n) < 0)
		return -1;
	*(unsigned long long *)field = n;
	return 0;
}

int config_set_tls_min_version(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k;
	if (strcmp(value, "1.2") != 0 && strcmp(value, "1.3") != 0)
		return config_bad(ctx, "tls_min_version: expected 1.2 or 1.3, got \"%s\"", value);
	*(int *)field = value[2] == '2' ? 12 : 13;
	return 0;
}

/* syncrepl: the directive's words, each line of it (conf/syncrepl.h). */
int config_set_syncrepl(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	(void)k;
	char why[512];
	if (syncrepl_parse(field, value, why, sizeof(why)) < 0)
		return config_bad(ctx, "%s", why);
	return 0;
}

/* metrics_listen: ADDRESS:PORT (conf/metrics_addr.h). */
int config_set_metrics_listen(void *ctx, const struct kv_key *k, void *field, const char *value)
{
	char why[400];
	if (metrics_addr_parse(field, value, why, sizeof(why)) < 0)
		return config_bad(ctx, "%s: %s", k->name, why);
	return 0;
}
