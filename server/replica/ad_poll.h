/*
 * A poll of an Active Directory DC (dirsync.h, usn.h) run as a refresh of the replica:
 * the state a poll starts from, and how it ends in the write transaction. The searches
 * between are each way's own.
 *
 * Thread rules: the consumer's thread (replica.c).
 */
#ifndef MINIDIR_SERVER_REPLICA_AD_POLL_H
#define MINIDIR_SERVER_REPLICA_AD_POLL_H

#include <stdbool.h>
#include <stddef.h>

#include "server/replica/apply.h"

/* Starts a poll: full when it goes from no cookie (its end then deletes every entry it
 * did not put); usn, the DC's highestCommittedUSN read before its searches (-1:
 * unknown), is the provider's last change for the lag. */
void replica_poll_begin(struct replica *r, bool full, long long usn);

/*
 * Ends the poll in the open transaction (opened when none is): the held entries stored,
 * after a full poll every entry not put deleted, and cookie (borrowed) stored with what
 * it covers. The commit is the caller's. 0, or -1 with why set.
 */
int replica_poll_end(struct replica *r, const struct berval *cookie, char *why, size_t cap);

#endif
