/*
 * What the syncrepl consumer does differently when its provider is 389 Directory Server
 * (or FreeIPA, which is 389-ds): RFC 4533 as 389-ds's Content Synchronization plugin
 * speaks it. Private to server/replica/.
 *
 * - Its refresh from a cookie sends the entries changed since (state add), the deleted
 *   ones in a syncIdSet, and ends with refreshDeletes FALSE but no present phase: entries
 *   not sent are unchanged, not gone (apply.c never deletes "not present" then).
 * - That refresh carries no operational attribute, not even those asked for by name
 *   (createTimestamp, nsAccountLock...): the entries it stored are asked again by
 *   nsUniqueId with a plain search before the refresh commits (ds389_refetch, called by
 *   apply.c), so that
 *   the timestamps and an account locked meanwhile are the provider's.
 * - With the default attribute list ("*,+") the operational attributes a replica keeps
 *   are asked for by name, not with "+", which would bring 389-ds's internal ones
 *   (nsUniqueId, entryid, parentid, dsEntryDN; the schema also marks them operational so
 *   that a list with "+" never stores them as user attributes).
 *
 * Thread rules: the consumer's thread.
 */
#ifndef MINIDIR_SERVER_REPLICA_DS389_H
#define MINIDIR_SERVER_REPLICA_DS389_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>

#include "conf/syncrepl.h"

/* A number written in decimal, 1 to 18 digits (a change number, a DirSync DC's USN or
 * instanceType), or -1 when text[0..len) is not one. */
long long ds389_decimal(const char *text, size_t len);

/* The change number of a cookie of the form 389-ds's sync plugin makes,
 * HOST:PORT#BINDDN:BASE:FILTER#CHANGENUMBER; -1 when cookie is not one (slapd's starts
 * "rid="). */
long long ds389_cookie(const char *cookie, size_t len);

/* What a provider's root DSE says of it. */
struct ds389_root {
	bool answered;     /* the root DSE was read */
	bool is389;        /* vendorName "389 Project" or vendorVersion "389-Directory/..." */
	char version[128]; /* vendorVersion ("" when none) */
	/* The Retro Changelog's first and last change numbers; -1 when not there. */
	long long first_change, last_change;
};

/* Reads the root DSE of the provider on ld into *out (answered false when it cannot). */
void ds389_read_root(LDAP *ld, int timeout_s, struct ds389_root *out);

/* The attributes of the root DSE ds389_read_root reads (NULL-terminated, static): for a
 * search of the caller's own (the probe). ds389_root_parse reads its answer. */
char **ds389_root_attrs(void);
void ds389_root_parse(LDAP *ld, LDAPMessage *res, struct ds389_root *out);

/* The attribute list asked of a 389-ds provider in place of "*,+": the user attributes
 * and, by name, the operational ones a replica keeps (storage/entry_opattrs.h) that
 * 389-ds has. NULL-terminated, static. */
char **ds389_attrs(void);

/* Called with each entry a refetch brings (its UUID from nsUniqueId, its DN); returns 0
 * or -1 with why set, which ends the refetch. */
typedef int (*ds389_store_fn)(void *arg, LDAPMessage *e, const unsigned char *uuid, const char *dn,
                              char *why, size_t cap);

/*
 * Asks the provider on ld again for the n entries uuids names (SYNC_UUID_LEN bytes each)
 * among those the session's searchbase, scope and filter select, with attrs and
 * nsUniqueId, 100 a search, and hands each to store. An entry gone or moved out meanwhile
 * is not brought (the next change names it). Returns 0, or -1 with why set (a failed
 * search, or store's -1).
 */
int ds389_refetch(LDAP *ld, const struct syncrepl_conf *s, char **attrs, const unsigned char *uuids,
                  size_t n, ds389_store_fn store, void *arg, char *why, size_t cap);

/* Called with the UUID of each entry ds389_list_ids finds; returns 0 or -1 (why set). */
typedef int (*ds389_id_fn)(void *arg, const unsigned char *uuid, char *why, size_t cap);

/*
 * Every entry the session's searchbase, scope and filter select on the provider, by its
 * nsUniqueId, handed to fn as it comes (one message at a time: no list of the whole
 * directory in libldap's memory). Returns 0 when the search ended with success and fn
 * saw every entry; else -1 with why set (a size or time limit of the provider's, a lost
 * connection, fn's -1): then the set is partial, and must not be used to delete.
 */
int ds389_list_ids(LDAP *ld, const struct syncrepl_conf *s, ds389_id_fn fn, void *arg, char *why,
                   size_t cap);

#endif
