/*
 * The set functions of minidir.conf's key table (CONFIG_KEYS in conf/config.h, read
 * through conf/keyval.h) for the keys that fill one member: each reads one value into
 * field, the member its row names, knowing only the row (k: its name, range, names).
 * conf/config.c owns the table made from those rows, the keys that fill the config as a
 * whole (listen, proxy_from, index, access), the file's reading and what the keys require
 * of each other; this file owns what one value may be, and knows nothing of struct config.
 *
 * Every set function takes ctx, the struct config_parse of the file being read, and
 * returns 0, or -1 with the reason in its why (the first reason is kept: inih goes on to
 * later lines, and the load fails). Nothing stays allocated.
 *
 * Thread rules: no state; the member written is the caller's alone.
 */
#ifndef MINIDIR_CONF_CONFIG_SET_H
#define MINIDIR_CONF_CONFIG_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/keyval.h"

struct config;

/* The state of one file's reading, the set functions' ctx (cfg: conf/config.c's). */
struct config_parse {
	struct config *cfg;
	char *why; /* reason of the first error */
	size_t whylen;
	bool have_index; /* the file names indexes: defaults dropped */
};

/* Keeps the printf-style reason in st->why unless one is there already; returns -1. */
__attribute__((format(printf, 2, 3))) int config_bad(struct config_parse *st, const char *fmt, ...);

/* Kept as written (a file, a name, a list for OpenSSL), shorter than the member;
 * database and access_log: not empty. */
int config_set_string(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_database(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_access_log(void *ctx, const struct kv_key *k, void *field, const char *value);
/* A DN kept as written, its normal form at least k->min bytes; suffix: a DN, once;
 * updateref: an ldap:// or ldaps:// URL. */
int config_set_dn(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_suffix(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_url(void *ctx, const struct kv_key *k, void *field, const char *value);
/* One of k->names, stored as its index into an int (an enum); "yes" or "no". */
int config_set_choice(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_bool(void *ctx, const struct kv_key *k, void *field, const char *value);
/* An int in k->min..k->max (a count, seconds); a limit: a number or "unlimited" (0). */
int config_set_count(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_seconds(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_limit(void *ctx, const struct kv_key *k, void *field, const char *value);
/* memo_bytes = auto (the default): sized when a file is opened, from the memory the
 * process may use (server/db/memo_auto.h). */
#define CONFIG_MEMO_AUTO (SIZE_MAX - 1)

/* A size_t of bytes in k->min..k->max, k or m after it (KiB, MiB); memo_bytes: also
 * "unlimited" (SIZE_MAX) and "auto" (CONFIG_MEMO_AUTO). */
int config_set_size(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_memo_bytes(void *ctx, const struct kv_key *k, void *field, const char *value);
/* A cost bound from 1 to k->max or "unlimited" (0): into a size_t (filter items, in-chain
 * entries) or an unsigned long long (search work). */
int config_set_filter_items(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_search_work(void *ctx, const struct kv_key *k, void *field, const char *value);
/* "1.2" or "1.3", stored as 12 or 13. */
int config_set_tls_min_version(void *ctx, const struct kv_key *k, void *field, const char *value);
/* A syncrepl line's words (conf/syncrepl.h); metrics_listen's ADDRESS:PORT
 * (conf/metrics_addr.h). */
int config_set_syncrepl(void *ctx, const struct kv_key *k, void *field, const char *value);
int config_set_metrics_listen(void *ctx, const struct kv_key *k, void *field, const char *value);

#endif
