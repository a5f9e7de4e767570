/*
 * The one key=value parser of the configuration: a table of keys, each naming the
 * function that reads its value and the member of the struct that value fills. Both the
 * file's keys (conf/config.c: libinih hands over each "key = value" line) and the syncrepl
 * directive's words (conf/syncrepl.c: its "name=value" words) are read through it.
 *
 * The table and the set functions are the caller's, and so are the error messages (the
 * file's and the directive's read differently): this file finds a key and converts the
 * value shapes both have (a whole number in a range, one of a list of names).
 *
 * Thread rules: no state; tables are const.
 */
#ifndef MINIDIR_CONF_KEYVAL_H
#define MINIDIR_CONF_KEYVAL_H

#include <stdbool.h>
#include <stddef.h>

struct kv_key {
	const char *name;
	/*
	 * Reads value into field (the member at offset in the struct being filled; the
	 * struct itself when offset and size are 0). ctx is the caller's (where the reason
	 * of an error goes). Returns 0, or -1 with the reason left in ctx.
	 */
	int (*set)(void *ctx, const struct kv_key *key, void *field, const char *value);
	size_t offset, size;      /* of the member (a string's: its capacity) */
	long min, max;            /* a number's range */
	const char *const *names; /* a choice's names, NULL-ended; the index is stored */
	const char *def;          /* the default, as written in the file; NULL: none (zero) */
	int reload;               /* the caller's: when a changed value applies (minidir.conf's
	                             keys: conf/config.h, enum config_reload) */
};

/* The key called name in keys[0..n), or NULL. */
const struct kv_key *kv_find(const struct kv_key *keys, size_t n, const char *name);

/*
 * Looks name up in keys[0..n) and has its set function read value into obj's member.
 * Returns 0, -1 as the set function does, or -2 when no key is called name (obj untouched).
 */
int kv_set(const struct kv_key *keys, size_t n, void *obj, void *ctx, const char *name,
           const char *value);

/* s, a whole number in min..max (decimal, nothing after it), into *out; false if not. */
bool kv_long(const char *s, long min, long max, long *out);

/* The index of v in names (NULL-ended), compared as is or ignoring case; or -1. */
int kv_choice(const char *v, const char *const *names, bool ignore_case);

/* Writes the printf-style reason into why (whylen bytes, cut short if need be) and returns
 * -1: the parsers' one way of saying what is wrong with a value. */
__attribute__((format(printf, 3, 4))) int kv_fail(char *why, size_t whylen, const char *fmt, ...);

#endif
