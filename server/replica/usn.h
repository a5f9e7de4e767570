/*
 * An Active Directory domain controller followed by uSNChanged polling (syncrepl
 * type=usnChanged): the fallback for an account the DC refuses the replication right
 * DirSync needs (dirsync.h). Each session is one poll, on the one DC the provider names:
 *
 *   1. the DC's highestCommittedUSN H and its invocationId (ad_dc.h), read before any
 *      search: every change with a USN up to H is committed, so what comes after is the
 *      next poll's;
 *   2. a subtree search of searchbase, the configured filter ANDed with
 *      (uSNChanged>=L+1)(uSNChanged<=H), L the USN of the stored cookie, paged (the
 *      Paged Results control, USN_PAGE_SIZE a page): each object comes whole and
 *      replaces the stored entry, keyed by objectGUID (its DN may be new: a rename or a
 *      move); a value list the DC cut ("member;range=0-1499", past its MaxValRange) is
 *      asked again, window after window, until the DC says it is the last ("N-*");
 *   3. a search with the Show Deleted control (1.2.840.113556.1.4.417) for the
 *      tombstones with a USN in the same bounds: their objectGUIDs are deleted. An
 *      account that may not list CN=Deleted Objects is shown none, silently: the first
 *      poll asks for one there and logs once when none comes, as deletions then reach
 *      the replica only with a full load.
 *
 * The cookie, stored as text in the replica's file like any other: "usn=H;invocationId=
 * GUID". A poll without one (the first), with one that does not parse, or whose
 * invocationId is not the DC's now (the DC was restored from a backup, or another DC
 * answers behind the name: its USNs are not the ones the cookie counted), or whose USN is
 * above the DC's, is a full load: the search without the USN bounds, and at its end every
 * entry it did not bring is deleted (as a DirSync poll without a cookie). A full load
 * has no upper bound either: an object changed after H comes now and again next poll
 * (whole, so harmlessly), where a bound would delete it until then.
 *
 * What it costs, against DirSync: every changed object comes whole (a group with one
 * member more comes with every member), and a poll is three to five searches. An object
 * changed so that it no longer matches the filter stays until a full load.
 *
 * A poll's changes and its cookie share one write transaction, committed by replica.c
 * (a failure drops both: the next poll asks again from the cookie before).
 *
 * Thread rules: the consumer's thread (replica.c), on r's session (r->ld bound).
 */
#ifndef MINIDIR_SERVER_REPLICA_USN_H
#define MINIDIR_SERVER_REPLICA_USN_H

#include <stddef.h>

#include "server/replica/apply.h"

/* The Show Deleted control's OID ([MS-ADTS] LDAP_SERVER_SHOW_DELETED_OID). */
#define USN_SHOW_DELETED_OID "1.2.840.113556.1.4.417"

/* Objects a page (under AD's and Samba's MaxPageSize, 1000). */
#define USN_PAGE_SIZE 500

/* Pages one search asks for at most, and windows of one ranged attribute: bounds a poll
 * against a DC that always says "more". */
#define USN_MAX_PAGES 100000

/*
 * One poll on r's bound session, left uncommitted in r's transaction. Returns
 * SESSION_DONE, SESSION_STOPPED or SESSION_ERROR with why set.
 */
int usn_session(struct replica *r, char *why, size_t cap);

#endif
