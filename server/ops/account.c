/* An account's state at bind, decided from values already read: see account.h. */
#include "server/ops/account.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/value_syntax.h"

/* Seconds between 1601-01-01 (AD's FILETIME epoch) and 1970-01-01. */
#define FILETIME_EPOCH_GAP 11644473600LL
#define FILETIME_PER_SECOND 10000000LL
/* AD's userAccountControl ACCOUNTDISABLE bit. */
#define UAC_ACCOUNTDISABLE 0x2

const char *account_refusal_word(enum account_refusal r)
{
	switch (r) {
	case ACCOUNT_USABLE:
		return "usable";
	case ACCOUNT_LOCKED:
		return "locked";
	case ACCOUNT_DISABLED:
		return "disabled";
	case ACCOUNT_NOT_YET_VALID:
		return "not-yet-valid";
	case ACCOUNT_EXPIRED:
		return "expired";
	}
	return "?";
}

bool account_gentime(const char *v, size_t len, time_t *t)
{
	if (!value_gentime(v, len, t))
		return false;
	if (memcmp(v, "0000", 4) == 0) /* slapd's "locked for good" stamp, 000001010000Z */
		*t = 0;
	return true;
}

bool account_integer(const struct berval *v, int64_t *x)
{
	if (!v->bv_val || v->bv_len == 0 || v->bv_len > 20)
		return false;
	char text[24];
	memcpy(text, v->bv_val, v->bv_len);
	text[v->bv_len] = '\0';
	char *end;
	long long n = strtoll(text, &end, 10);
	if (*end != '\0' || end == text)
		return false;
	*x = n;
	return true;
}

/* slapd 2.5's account_locked() on the ppolicy attributes (see account.h). */
static enum account_refusal ppolicy_refused(const struct account_input *in, time_t now,
                                            const char **attr)
{
	time_t then;
	if (in->start.bv_val) {
		*attr = "pwdStartTime";
		if (!account_gentime(in->start.bv_val, in->start.bv_len, &then) || now < then)
			return ACCOUNT_NOT_YET_VALID;
	}
	if (in->end.bv_val) {
		*attr = "pwdEndTime";
		if (!account_gentime(in->end.bv_val, in->end.bv_len, &then) || then <= now)
			return ACCOUNT_EXPIRED;
	}
	const struct account_policy *p = &in->policy;
	if (p->found && !p->lockout)
		return ACCOUNT_USABLE; /* slapd: a policy without pwdLockout locks nothing */
	if (in->tmp_lockout_end.bv_val) {
		*attr = "pwdAccountTmpLockoutEnd";
		if (!account_gentime(in->tmp_lockout_end.bv_val, in->tmp_lockout_end.bv_len,
		                     &then) ||
		    now < then)
			return ACCOUNT_LOCKED;
	}
	if (in->locked.bv_val) {
		*attr = "pwdAccountLockedTime";
		/* A value that is no time locks (slapd would not: it reads it as -1). */
		if (!account_gentime(in->locked.bv_val, in->locked.bv_len, &then) || then == 0)
			return ACCOUNT_LOCKED;
		if (now < then)
			return ACCOUNT_USABLE; /* not in effect yet, as slapd */
		/* No policy here: its duration unknown, the lock holds until the provider lifts it.
		 */
		if (!p->found || p->lockout_duration == 0 || now < then + p->lockout_duration)
			return ACCOUNT_LOCKED;
	}
	return ACCOUNT_USABLE;
}

/* 389-ds's account inactivation and lockout. */
static enum account_refusal ds389_refused(const struct account_input *in, time_t now,
                                          const char **attr)
{
	if (in->ns_lock.bv_val && in->ns_lock.bv_len == 4 &&
	    strncasecmp(in->ns_lock.bv_val, "true", 4) == 0) {
		*attr = "nsAccountLock";
		return ACCOUNT_DISABLED;
	}
	time_t then;
	if (in->unlock_time.bv_val) {
		*attr = "accountUnlockTime";
		/* 19700101000000Z: locked until an administrator unlocks it */
		if (!account_gentime(in->unlock_time.bv_val, in->unlock_time.bv_len, &then) ||
		    then == 0 || now < then)
			return ACCOUNT_LOCKED;
	}
	return ACCOUNT_USABLE;
}

/* Active Directory's account control flags and lockout stamp. */
static enum account_refusal ad_refused(const struct account_input *in, time_t now,
                                       const char **attr)
{
	int64_t x;
	if (in->uac.bv_val) {
		*attr = "userAccountControl";
		if (!account_integer(&in->uac, &x) || (x & UAC_ACCOUNTDISABLE))
			return ACCOUNT_DISABLED;
	}
	if (in->lockout_time.bv_val) {
		*attr = "lockoutTime";
		if (!account_integer(&in->lockout_time, &x) || x < 0)
			return ACCOUNT_LOCKED;
		if (x == 0)
			return ACCOUNT_USABLE;       /* unlocked */
		int64_t d = in->ad_lockout_duration; /* negative; 0 or the minimum: forever */
		if (!in->ad_duration_known || d == 0 || d == INT64_MIN)
			return ACCOUNT_LOCKED;
		int64_t locked_at = x / FILETIME_PER_SECOND - FILETIME_EPOCH_GAP;
		if ((int64_t)now < locked_at + (-d) / FILETIME_PER_SECOND)
			return ACCOUNT_LOCKED;
	}
	return ACCOUNT_USABLE;
}

enum account_refusal account_refused(const struct account_input *in, time_t now, const char **attr)
{
	enum account_refusal r = ppolicy_refused(in, now, attr);
	if (r == ACCOUNT_USABLE)
		r = ds389_refused(in, now, attr);
	if (r == ACCOUNT_USABLE)
		r = ad_refused(in, now, attr);
	if (r == ACCOUNT_USABLE)
		*attr = NULL;
	return r;
}

/* 389-ds's need_new_pw, without its writes (the grace count and the warning stamp stay as
 * the provider has them). */
static void ds389_after_bind(const struct account_input *in, time_t now, struct account_after *out)
{
	const struct provider_pwpolicy *p = &in->ds_policy;
	time_t at;
	if (!account_gentime(in->pw_expiration.bv_val, in->pw_expiration.bv_len, &at))
		return; /* 389-ds reads such a value as no time: not expired */
	if (at == 0)    /* reset by an administrator (NO_TIME) */
		out->change_after_reset = out->change_by_ds389 = p->must_change;
	if (!p->exp)
		return;
	if (at <= 1) { /* NO_TIME, or NOT_FIRST_TIME (389-ds's first login mark): not expired,
		        * and warned a passwordWarning ahead (389-ds then moves the stamp) */
		out->expire = (int32_t)(p->warning > INT32_MAX ? INT32_MAX : p->warning);
		return;
	}
	if (at <= now) {
		if (p->grace_limit > in->ds_grace_uses) {
			int64_t left = p->grace_limit - in->ds_grace_uses - 1;
			out->grace = (int32_t)(left > INT32_MAX ? INT32_MAX : left);
		} else {
			out->password_expired = true;
			out->expired_by = "passwordExpirationTime";
		}
		return;
	}
	int64_t left = (int64_t)(at - now);
	if (left <= p->warning)
		out->expire = (int32_t)(left > INT32_MAX ? INT32_MAX : left);
}

void account_after_bind(const struct account_input *in, time_t now, struct account_after *out)
{
	const struct account_policy *p = &in->policy;
	*out = (struct account_after){.expire = -1, .grace = -1};
	time_t changed = (time_t)-1;
	if (in->pw_expiration.bv_val && in->ds_policy.known)
		ds389_after_bind(in, now, out);
	if (!p->found || out->password_expired)
		return;
	if (in->changed.bv_val &&
	    !account_gentime(in->changed.bv_val, in->changed.bv_len, &changed))
		changed = (time_t)-1;
	bool expired = false;
	if (p->must_change && in->reset.bv_val && in->reset.bv_len == 4 &&
	    strncasecmp(in->reset.bv_val, "TRUE", 4) == 0)
		out->change_after_reset = true;
	else if (p->max_age > 0 && changed != (time_t)-1 && now - changed > p->max_age)
		expired = true;
	if (expired) {
		int64_t left;
		if (p->grace_expiry && now - changed > p->max_age + p->grace_expiry)
			left = 0; /* the grace period is over too */
		else
			left = p->grace_limit - in->grace_uses;
		left--; /* this bind would use one */
		if (left < 0) {
			out->password_expired = true;
			out->expired_by = "pwdChangedTime";
			return;
		}
		out->grace = (int32_t)(left > INT32_MAX ? INT32_MAX : left);
		return;
	}
	if (p->max_age < 1 || p->expire_warning < 1 || changed == (time_t)-1)
		return;
	int64_t age = (int64_t)(now - changed);
	if (p->max_age - age < p->expire_warning) {
		int64_t warn = p->max_age - age;
		out->expire = (int32_t)(warn < 0 ? 0 : warn > INT32_MAX ? INT32_MAX : warn);
	}
}
