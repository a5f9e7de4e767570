/*
 * Dynamic groups (groupOfURLs, slapd's dynlist overlay with
 * "dynlist-attrset groupOfURLs memberURL member+memberOf@groupOfNames"): an entry of
 * objectClass groupOfURLs has as members the entries its memberURL values' searches find
 * (RFC 4516 LDAP URLs, ldap:///BASE??SCOPE?FILTER; the host and attributes are ignored, as
 * the overlay ignores them; no scope is base, no filter (objectClass=*)).
 *
 * Refresh point: the import (minidir-import with dynamic_groups = yes). dyngroup_resolve
 * materializes the members: each found entry's DN is added to the group's record as a
 * member value (and to eq.member when member is indexed), and to memberdn, so that
 * memberof_resolve (storage/memberof.h), run after it, gives the found entries the group
 * in memberOf as a static group's members. The read path reads what a static group has.
 *
 * Cost: every entry is tested against every URL (scope, then the filter with
 * filter_eval), so an import spends entries x URLs filter evaluations; max_urls bounds
 * the URLs (an import past it fails with a message naming the limit). A URL that does not
 * parse (ldap_url_parse), whose base is not a DN or whose filter is not one is ignored with
 * a warning on warn, as slapd ignores it when it reads the group.
 *
 * Thread rules: the caller's write transaction; reads the loaded schema (filters and DNs).
 */
#ifndef MINIDIR_STORAGE_DYNGROUP_H
#define MINIDIR_STORAGE_DYNGROUP_H

#include <stddef.h>
#include <stdio.h>

#include "storage/db.h"

/*
 * Computes every groupOfURLs entry's members in txn, as above: before memberof_resolve.
 * label prefixes warnings ("LABEL: entry "DN": memberURL "URL" ignored: why").
 * Returns 0, or -1 with a message in err (more than max_urls URLs, a group grown past
 * ENTRY_MAX_BYTES, out of memory, an LMDB error).
 */
int dyngroup_resolve(struct db *db, struct db_write *txn, size_t max_urls, FILE *warn,
                     const char *label, char *err, size_t errlen);

#endif
