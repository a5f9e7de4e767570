/*
 * The memberURL values of dynamic groups (storage/dyngroup.h), parsed once and tested
 * against entries: what the import (storage/dyngroup.c) and a replica's changes
 * (storage/dyngroup_update.c) share. A URL is ldap:///BASE??SCOPE?FILTER (RFC 4516, by
 * libldap's ldap_url_parse); no scope is base, no filter (objectClass=*); the host and
 * attributes are ignored. A value that does not parse, whose base is not a DN or whose
 * filter is not one is left out with a warning.
 *
 * Thread rules: a set is its caller's; reads the loaded schema (filters and DNs).
 */
#ifndef MINIDIR_STORAGE_DYNGROUP_URL_H
#define MINIDIR_STORAGE_DYNGROUP_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "protocol/arena.h"
#include "protocol/buf.h"
#include "protocol/filter.h"
#include "storage/entry.h"

/* One memberURL that parsed: its search. */
struct dyngroup_url {
	entry_id group;
	size_t group_ix; /* the caller's number for its group */
	size_t base_off; /* its base's reversed key in struct dyngroup_urls.bases */
	size_t base_len;
	int scope;             /* LDAP_SCOPE_* */
	struct filter *filter; /* in struct dyngroup_urls.mem */
};

/* The URLs of some groups, at most max in all; warnings go to warn (NULL: none), each
 * "LABEL: entry "DN": memberURL "URL" ignored: why". Zeroed and then dyngroup_urls_init. */
struct dyngroup_urls {
	struct arena mem;
	struct buf bases, scratch;
	struct dyngroup_url *url;
	size_t n, cap, max;
	FILE *warn;
	const char *label;
};

void dyngroup_urls_init(struct dyngroup_urls *u, size_t max, FILE *warn, const char *label);
void dyngroup_urls_free(struct dyngroup_urls *u);

/* Whether e is a dynamic group: objectClass groupOfURLs (any case) and a memberURL. */
bool dyngroup_is_dynamic(const struct entry_view *e);

/* What dyngroup_urls_add returns when group's URLs would pass max (none of them added). */
#define DYNGROUP_URLS_FULL (-2)

/* Adds the memberURL values of e, the entry group (group_ix: the caller's number for it).
 * Returns 0, DYNGROUP_URLS_FULL, or -1 (out of memory). */
int dyngroup_urls_add(struct dyngroup_urls *u, entry_id group, size_t group_ix,
                      const struct entry_view *e);

/* Whether url's search finds e (its scope, then its filter on e's stored attributes). */
bool dyngroup_url_finds(struct dyngroup_urls *u, const struct dyngroup_url *url,
                        const struct entry_view *e);

#endif
