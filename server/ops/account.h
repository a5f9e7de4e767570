/*
 * An account's state at bind: whether the entry a simple or SASL EXTERNAL bind names may
 * bind now, as the provider that wrote its state would decide, and what the Password
 * Policy response control says about it (docs/replica.md "Account state").
 *
 * Honoured: slapd ppolicy's pwdStartTime, pwdEndTime, pwdAccountTmpLockoutEnd and
 * pwdAccountLockedTime (000001010000Z permanent; otherwise ending after the entry's
 * policy's pwdLockoutDuration, 0 meaning never; a policy without pwdLockout TRUE ignores
 * the lock, as slapd 2.5 does; an entry whose policy is not on this server is locked by
 * any pwdAccountLockedTime, its duration unknown), and after a right password pwdMaxAge,
 * pwdExpireWarning, pwdGraceAuthNLimit, pwdGraceExpiry and pwdMustChange with pwdReset,
 * computed as slapd 2.5's ppolicy_bind_response computes them; 389-ds's nsAccountLock and
 * accountUnlockTime, and after a right password its passwordExpirationTime under the
 * policy that applies (its cn=config's, storage/provider_pwpolicy.h, or under
 * nsslapd-pwpolicy-local the entry's own pwdpolicysubentry's) as 389-ds's need_new_pw
 * decides: expired with passwordGraceLimit grace binds not used up (passwordGraceUserTime),
 * the warning under passwordWarning, 19700101000000Z under passwordMustChange a change
 * after reset; a past value is ignored while passwordExp is off, as 389-ds ignores it (it
 * leaves the values in place when expiry is turned off). Active Directory's userAccountControl
 * ACCOUNTDISABLE bit (0x2) and lockoutTime (ending after the domain entry's lockoutDuration when
 * the suffix entry holds one). Not honoured: pwdMaxIdle (a replica's binds do not reach the
 * provider's pwdLastSuccess, so honouring it would lock out those who bind only here).
 *
 * account.c decides from values already read (struct account_input: no I/O, any thread);
 * account_read.c reads them from the database for a bind.
 */
#ifndef MINIDIR_SERVER_OPS_ACCOUNT_H
#define MINIDIR_SERVER_OPS_ACCOUNT_H

#include <lber.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "storage/db.h"
#include "storage/provider_pwpolicy.h"

/* The password policy that applies to an entry (a pwdPolicy entry's values). */
struct account_policy {
	bool found; /* the entry pwdPolicySubentry or ppolicy_default names is here */
	bool lockout;
	bool must_change;
	int64_t lockout_duration, max_age, expire_warning, grace_limit, grace_expiry;
};

/* What an entry says of its account: each attribute's first value, borrowed (bv_val NULL
 * when absent), valid as long as the read transaction they point into. */
struct account_input {
	struct berval start, end, tmp_lockout_end, locked, changed, reset;
	int grace_uses;    /* pwdGraceUseTime values */
	bool has_failures; /* pwdFailureTime values: the provider counts failed binds */
	struct berval ns_lock, unlock_time, uac, lockout_time;
	bool ad_duration_known;
	int64_t ad_lockout_duration; /* the domain's lockoutDuration (negative 100 ns units) */
	struct account_policy policy;
	/* 389-ds: passwordExpirationTime, the passwordGraceUserTime count, and the policy
	 * that applies (ds_policy.known false: none known, the time is not honoured). */
	struct berval pw_expiration;
	int64_t ds_grace_uses;
	struct provider_pwpolicy ds_policy;
};

/* Why an account may not bind now, before its password is checked. */
enum account_refusal {
	ACCOUNT_USABLE,
	ACCOUNT_LOCKED,        /* a lock: ppolicy, 389-ds accountUnlockTime, AD lockoutTime */
	ACCOUNT_DISABLED,      /* nsAccountLock, AD ACCOUNTDISABLE */
	ACCOUNT_NOT_YET_VALID, /* pwdStartTime in the future */
	ACCOUNT_EXPIRED,       /* pwdEndTime passed */
};

/* The access log's word for r ("locked", "disabled", "not-yet-valid", "expired"). */
const char *account_refusal_word(enum account_refusal r);

/* Whether in's account may bind at now (seconds since the epoch); when not, the attribute
 * that says so in *attr (static). */
enum account_refusal account_refused(const struct account_input *in, time_t now, const char **attr);

/* What a right password meets (slapd 2.5's ppolicy_bind_response, without its writes: a
 * grace bind is not used up here, the provider's count stays as it was). */
struct account_after {
	bool password_expired;   /* expired with no grace bind left: the bind fails (49) */
	bool change_after_reset; /* pwdReset under pwdMustChange, or 389-ds's reset stamp
	                            under passwordMustChange (change_by_ds389) */
	bool change_by_ds389;
	int32_t expire;         /* timeBeforeExpiration, -1 none */
	int32_t grace;          /* graceAuthNsRemaining, -1 none */
	const char *expired_by; /* the attribute password_expired comes from (static) */
};
void account_after_bind(const struct account_input *in, time_t now, struct account_after *out);

/*
 * A Generalized Time value v[0..len) as seconds since the epoch into *t: value_gentime
 * (storage/value_syntax.h, which says what it accepts), but year 0000 (slapd's
 * 000001010000Z) is 0, as slapd's parse_time makes it. False when v is not one.
 */
bool account_gentime(const char *v, size_t len, time_t *t);

/* An INTEGER value v (at most 20 characters; bv_val NULL: absent) into *x; false (*x left
 * alone) when it is not one. */
bool account_integer(const struct berval *v, int64_t *x);

/* --- account_read.c ----------------------------------------------------------------------- */

/*
 * Fills *in from entry id (its record viewed as e; its kept operational attributes, and
 * the policy entry its pwdPolicySubentry names, else default_policy (a DN, "" for none),
 * read in txn; AD's lockoutDuration from the entry at suffix, when the entry has a
 * lockoutTime; with a passwordExpirationTime, the 389-ds policy that applies: the
 * nsPwPolicyEntry its pwdPolicySubentry names when the provider's policy says local ones
 * apply (or is not known), else the provider's). Returns 0 or an LMDB error (a read failed: the
 * caller refuses the bind).
 */
int account_read(const struct db *db, struct db_read *txn, entry_id id, const struct entry_view *e,
                 const char *default_policy, const char *suffix, struct account_input *in);

#endif
