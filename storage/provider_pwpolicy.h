/*
 * A 389 Directory Server provider's global password policy (its cn=config's passwordExp,
 * passwordMustChange, passwordGraceLimit, passwordWarning and nsslapd-pwpolicy-local), as
 * a replica's file records it: 389-ds keeps that policy outside every replicated tree, so
 * the consumer reads it at each session's start and reconciliation
 * (server/replica/ds389_policy.c) and writes it here, and a bind reads it in the same
 * read transaction as the entry (server/ops/account_read.c), so a replica started while
 * its provider is down honours what it last read. Recorded in meta under
 * "ds389_pwpolicy" as text ("exp=1 must_change=0 local=1 grace_limit=3 warning=86400");
 * a file without the key (never read, or not a 389-ds replica) has no such policy.
 *
 * Thread rules: those of the transaction passed.
 */
#ifndef MINIDIR_STORAGE_PROVIDER_PWPOLICY_H
#define MINIDIR_STORAGE_PROVIDER_PWPOLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/db.h"

struct provider_pwpolicy {
	bool known;       /* a policy was read (get: the file records one) */
	bool exp;         /* passwordExp: passwords expire at passwordExpirationTime */
	bool must_change; /* passwordMustChange: a reset password must be changed */
	bool local;       /* nsslapd-pwpolicy-local: an entry's pwdpolicysubentry applies */
	int64_t grace_limit, warning; /* passwordGraceLimit; passwordWarning (seconds) */
};

/* 389-ds's defaults for a fine-grained policy entry's unset attributes (its
 * pwpolicy_init_defaults): no expiry, no grace, no forced change, a day's warning. */
void provider_pwpolicy_defaults(struct provider_pwpolicy *p);

/* The recorded policy into *p (p->known false when none, or not readable as written).
 * Returns 0 or an LMDB error. */
int provider_pwpolicy_get(const struct db *db, struct db_read *txn, struct provider_pwpolicy *p);

/* Records p (p->known must be true). Returns 0 or an LMDB error. */
int provider_pwpolicy_put(const struct db *db, struct db_write *txn,
                          const struct provider_pwpolicy *p);

#endif
