/*
 * An Active Directory domain controller (or Samba's AD DC) followed by its DirSync
 * control (syncrepl type=dirSync; [MS-ADTS] 3.1.1.3.4.1.3, LDAP_SERVER_DIRSYNC_OID
 * 1.2.840.113556.1.4.841), where there is no RFC 4533 provider. Each session is one
 * poll: a subtree search of searchbase (the naming context's root: DirSync answers there
 * only) with the control and the cookie the replica's file holds, page after page while
 * the DC says it has more; replica.c runs the next after `interval`. What the DC sends,
 * and how it is applied:
 *
 *   - objects are named by objectGUID (16 bytes): the replica's UUID for the entry;
 *   - an object the stream shows for the first time comes whole; a change brings only
 *     the attributes it changed (with objectGUID and instanceType): they replace the
 *     stored values of those types, the others are kept;
 *   - the values of a linked attribute (member) come with an option: ";range=1-1"
 *     values were added, ";range=0-0" values removed;
 *   - a deletion comes as a tombstone (isDeleted: TRUE, under CN=Deleted Objects): the
 *     entry goes, with what is below it;
 *   - objects come in no tree order: one whose parent has not come yet waits for it
 *     until the poll's end (held.h), as in a refresh.
 *
 * A poll without a cookie (the first, or after the DC refused the stored one) replaces
 * the replica's content: what it did not bring is deleted at its end. A poll's changes
 * and the cookie of its last page share one write transaction, committed at its end (a
 * failure drops both: the next poll asks again from the cookie before).
 *
 * Thread rules: the consumer's thread (replica.c), on r's session (r->ld bound).
 */
#ifndef MINIDIR_SERVER_REPLICA_DIRSYNC_H
#define MINIDIR_SERVER_REPLICA_DIRSYNC_H

#include <stddef.h>

#include "server/replica/apply.h"

/* The DirSync control's OID (libldap's LDAP_CONTROL_X_DIRSYNC). */
#define DIRSYNC_OID "1.2.840.113556.1.4.841"

/* Pages one poll asks for at most before it ends (each a search; a DC sends up to its
 * MaxBytes a page): bounds a poll against a DC that always says "more". */
#define DIRSYNC_MAX_PAGES 100000

/*
 * One poll on r's bound session. Returns SESSION_DONE (committed), SESSION_STOPPED,
 * SESSION_RELOAD (the DC refused the stored cookie: the next poll goes without it,
 * r->drop_cookie set) or SESSION_ERROR with why set.
 */
int dirsync_session(struct replica *r, char *why, size_t cap);

#endif
