/*
 * What an Active Directory DC says of itself, read before a poll (dirsync.h, usn.h): its
 * highestCommittedUSN (the root DSE's: every change it has committed has a USN at most
 * that), and its invocationId (the attribute of its NTDS Settings object, which the root
 * DSE's dsServiceName names): the identity of its database, new when the DC is restored
 * from a backup, so USNs read from another invocation mean nothing to it.
 *
 * Thread rules: the consumer's thread (replica.c), on r's bound session.
 */
#ifndef MINIDIR_SERVER_REPLICA_AD_DC_H
#define MINIDIR_SERVER_REPLICA_AD_DC_H

#include <stddef.h>

#include "server/replica/apply.h"

/* Room for an invocationId as text ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and NUL). */
#define AD_DC_INVOCATION_LEN 37

/*
 * Returns the DC's highestCommittedUSN, or -1 when it does not say (or the search
 * failed). When invocation is not NULL (cap bytes, at least AD_DC_INVOCATION_LEN), the
 * DC's invocationId as text there, in the GUID form AD tools print (its first three
 * fields little-endian); "" when the account cannot read it.
 */
long long ad_dc_usn(struct replica *r, char *invocation, size_t cap);

#endif
