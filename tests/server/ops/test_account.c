/* server/ops/account.c: an account's state at bind, decided as slapd 2.5's ppolicy, 389-ds
 * and Active Directory decide it; protocol/controls.c's Password Policy response as slapd
 * encodes it. */
#include <check.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/controls.h"
#include "server/ops/account.h"
#include "tests/check_run.h"

#define BV(s) ((struct berval){sizeof(s) - 1, (char *)(s)})

/* 2026-12-06T12:00:00Z */
static const time_t NOW = 1796558400;

static time_t gentime(const char *s)
{
	time_t t = -1;
	ck_assert_msg(account_gentime(s, strlen(s), &t), "%s is a Generalized Time", s);
	return t;
}

START_TEST(generalized_time)
{
	ck_assert_int_eq(gentime("20261206120000Z"), NOW);
	ck_assert_int_eq(gentime("202612061200Z"), NOW);
	ck_assert_int_eq(gentime("20261206120000.123456Z"), NOW);
	ck_assert_int_eq(gentime("20261206130000+0100"), NOW);
	ck_assert_int_eq(gentime("20261206130000+01"), NOW); /* RFC 4517's hour-only zone */
	ck_assert_int_eq(gentime("000001010000Z"), 0);       /* slapd's lock for good */
	time_t t;
	ck_assert(!account_gentime("2026120612", 10, &t));
	ck_assert(!account_gentime("20261306120000Z", 15, &t));
	ck_assert(!account_gentime("20261206120000", 14, &t));   /* no zone */
	ck_assert(!account_gentime("20261206120000.Z", 16, &t)); /* a fraction without digits */
	ck_assert(!account_gentime("00000101000Z", 12, &t));     /* year 0, malformed */
	ck_assert(!account_gentime("yesterday", 9, &t));
}
END_TEST

static enum account_refusal refused(const struct account_input *in, const char *want_attr)
{
	const char *attr = "unset";
	enum account_refusal r = account_refused(in, NOW, &attr);
	if (want_attr)
		ck_assert_str_eq(attr, want_attr);
	else
		ck_assert_ptr_null(attr);
	return r;
}

START_TEST(ppolicy_locks)
{
	struct account_input in = {.locked = BV("000001010000Z")};
	/* No policy here: any lock holds (its duration unknown). */
	ck_assert_int_eq(refused(&in, "pwdAccountLockedTime"), ACCOUNT_LOCKED);
	in.locked = BV("20261206115900Z"); /* a minute ago */
	ck_assert_int_eq(refused(&in, "pwdAccountLockedTime"), ACCOUNT_LOCKED);
	/* A policy with pwdLockout and a 5-minute duration: the minute-old lock holds, an
	 * hour-old one is over, the permanent one holds; a duration of 0 holds for good. */
	in.policy =
	    (struct account_policy){.found = true, .lockout = true, .lockout_duration = 300};
	ck_assert_int_eq(refused(&in, "pwdAccountLockedTime"), ACCOUNT_LOCKED);
	in.locked = BV("20261206110000Z");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	in.locked = BV("000001010000Z");
	ck_assert_int_eq(refused(&in, "pwdAccountLockedTime"), ACCOUNT_LOCKED);
	in.policy.lockout_duration = 0;
	in.locked = BV("20200101000000Z");
	ck_assert_int_eq(refused(&in, "pwdAccountLockedTime"), ACCOUNT_LOCKED);
	/* A lock stamped in the future is not in effect yet (slapd 2.5). */
	in.locked = BV("20270101000000Z");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	/* A policy without pwdLockout ignores the lock, as slapd 2.5 does; a value that is not
	 * a time locks under a policy that locks. */
	in.locked = BV("000001010000Z");
	in.policy.lockout = false;
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	in.policy.lockout = true;
	in.locked = BV("garbage");
	ck_assert_int_eq(refused(&in, "pwdAccountLockedTime"), ACCOUNT_LOCKED);
	/* pwdAccountTmpLockoutEnd */
	in = (struct account_input){.tmp_lockout_end = BV("20261206120100Z"),
	                            .policy = {.found = true, .lockout = true}};
	ck_assert_int_eq(refused(&in, "pwdAccountTmpLockoutEnd"), ACCOUNT_LOCKED);
	in.tmp_lockout_end = BV("20261206115900Z");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
}
END_TEST

START_TEST(ppolicy_validity_window)
{
	struct account_input in = {.start = BV("20261206120001Z")};
	ck_assert_int_eq(refused(&in, "pwdStartTime"), ACCOUNT_NOT_YET_VALID);
	in.start = BV("20261206120000Z");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	in.end = BV("20261206120000Z"); /* ends at now: over (slapd: then <= now) */
	ck_assert_int_eq(refused(&in, "pwdEndTime"), ACCOUNT_EXPIRED);
	in.end = BV("20261206120001Z");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	/* Honoured whatever the policy says of lockout. */
	in = (struct account_input){.end = BV("20000101000000Z"), .policy = {.found = true}};
	ck_assert_int_eq(refused(&in, "pwdEndTime"), ACCOUNT_EXPIRED);
}
END_TEST

START_TEST(ds389_and_ad)
{
	struct account_input in = {.ns_lock = BV("TRUE")};
	ck_assert_int_eq(refused(&in, "nsAccountLock"), ACCOUNT_DISABLED);
	in.ns_lock = BV("false");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	in.unlock_time = BV("20261206121000Z");
	ck_assert_int_eq(refused(&in, "accountUnlockTime"), ACCOUNT_LOCKED);
	in.unlock_time = BV("19700101000000Z"); /* until an administrator unlocks */
	ck_assert_int_eq(refused(&in, "accountUnlockTime"), ACCOUNT_LOCKED);
	in.unlock_time = BV("20261206110000Z");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);

	in = (struct account_input){.uac = BV("514")};
	ck_assert_int_eq(refused(&in, "userAccountControl"), ACCOUNT_DISABLED);
	in.uac = BV("512");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	in.lockout_time = BV("0");
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
	/* Locked a minute ago (FILETIME: 100 ns since 1601); no duration known: locked. */
	long long ft = ((long long)NOW - 60 + 11644473600LL) * 10000000LL;
	char text[32];
	snprintf(text, sizeof(text), "%lld", ft);
	in.lockout_time = (struct berval){strlen(text), text};
	ck_assert_int_eq(refused(&in, "lockoutTime"), ACCOUNT_LOCKED);
	/* The domain's lockoutDuration: 30 minutes holds, 30 seconds is over. */
	in.ad_duration_known = true;
	in.ad_lockout_duration = -30LL * 60 * 10000000LL;
	ck_assert_int_eq(refused(&in, "lockoutTime"), ACCOUNT_LOCKED);
	in.ad_lockout_duration = -30LL * 10000000LL;
	ck_assert_int_eq(refused(&in, NULL), ACCOUNT_USABLE);
}
END_TEST

START_TEST(after_a_right_password)
{
	struct account_after a;
	/* No policy: nothing. */
	struct account_input in = {.changed = BV("20200101000000Z")};
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired && !a.change_after_reset && a.expire == -1 && a.grace == -1);
	/* Expiring: changed 100 s ago, max age 1000, warned 5000 before: 900 s left. */
	in = (struct account_input){
	    .changed = BV("20261206115820Z"),
	    .policy = {.found = true, .max_age = 1000, .expire_warning = 5000}};
	account_after_bind(&in, NOW, &a);
	ck_assert_int_eq(a.expire, 900);
	ck_assert_int_eq(a.grace, -1);
	in.policy.expire_warning = 800; /* not yet in the warning */
	account_after_bind(&in, NOW, &a);
	ck_assert_int_eq(a.expire, -1);
	/* Expired with 3 grace binds, one used: this one leaves 1 (slapd counts it). */
	in = (struct account_input){.changed = BV("20200101000000Z"),
	                            .grace_uses = 1,
	                            .policy = {.found = true, .max_age = 60, .grace_limit = 3}};
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired);
	ck_assert_int_eq(a.grace, 1);
	in.grace_uses = 3;
	account_after_bind(&in, NOW, &a);
	ck_assert(a.password_expired);
	/* pwdGraceExpiry passed: no grace left whatever the count. */
	in.grace_uses = 0;
	in.policy.grace_expiry = 3600;
	account_after_bind(&in, NOW, &a);
	ck_assert(a.password_expired);
	/* pwdReset under pwdMustChange. */
	in = (struct account_input){.reset = BV("TRUE"),
	                            .policy = {.found = true, .must_change = true}};
	account_after_bind(&in, NOW, &a);
	ck_assert(a.change_after_reset && !a.password_expired);
}
END_TEST

/* 389-ds's need_new_pw: passwordExpirationTime under the policy that applies. */
START_TEST(ds389_password_expiry)
{
	struct account_after a;
	struct provider_pwpolicy on = {
	    .known = true, .exp = true, .grace_limit = 2, .warning = 86400};
	/* Expired an hour ago, no grace bind used: this one leaves 1. */
	struct account_input in = {.pw_expiration = BV("20261206110000Z"), .ds_policy = on};
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired);
	ck_assert_int_eq(a.grace, 1);
	/* Both used: refused, and said so by passwordExpirationTime. */
	in.ds_grace_uses = 2;
	account_after_bind(&in, NOW, &a);
	ck_assert(a.password_expired);
	ck_assert_str_eq(a.expired_by, "passwordExpirationTime");
	/* passwordExp off: a past value (389-ds leaves them when expiry is turned off) is
	 * none of a bind's business. */
	in.ds_policy.exp = false;
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired && a.grace == -1 && a.expire == -1);
	/* No policy known (cn=config never read): not honoured either. */
	in.ds_policy = (struct provider_pwpolicy){0};
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired);
	/* Expiring in an hour, inside the day's warning: timeBeforeExpiration 3600. */
	in = (struct account_input){.pw_expiration = BV("20261206130000Z"), .ds_policy = on};
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired && a.grace == -1);
	ck_assert_int_eq(a.expire, 3600);
	in.ds_policy.warning = 60;
	account_after_bind(&in, NOW, &a);
	ck_assert_int_eq(a.expire, -1);
	/* 19700101000000Z: reset by an administrator; under passwordMustChange a change after
	 * reset, never expired; 19700101000001Z (first login seen) neither. */
	in = (struct account_input){.pw_expiration = BV("19700101000000Z"), .ds_policy = on};
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired && !a.change_after_reset);
	in.ds_policy.must_change = true;
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired && a.change_after_reset);
	ck_assert_int_eq(a.expire, 86400); /* warned a passwordWarning ahead, as 389-ds */
	in.pw_expiration = BV("19700101000001Z");
	account_after_bind(&in, NOW, &a);
	ck_assert(!a.password_expired && !a.change_after_reset && a.expire == 86400);
	in.ds_policy.exp = false; /* no expiry: a change after reset, no warning */
	in.pw_expiration = BV("19700101000000Z");
	account_after_bind(&in, NOW, &a);
	ck_assert(a.change_after_reset && a.expire == -1);
}
END_TEST

/* The response control's value (after its OID) as hex, from one control appended alone. */
static void value_hex(int32_t expire, int32_t grace, enum ppolicy_error error, char *hex)
{
	struct buf b = {0};
	ck_assert_int_eq(control_ppolicy_response(&b, expire, grace, error), 0);
	/* SEQUENCE { OCTET STRING oid, OCTET STRING value }: the value is the tail */
	const unsigned char *p = b.data;
	size_t oidlen = p[3];
	const unsigned char *v = p + 4 + oidlen;
	ck_assert_uint_eq(v[0], 0x04);
	size_t vlen = v[1];
	for (size_t i = 0; i < vlen; i++)
		sprintf(hex + 2 * i, "%02x", v[2 + i]);
	hex[2 * vlen] = '\0';
	buf_free(&b);
}

START_TEST(ppolicy_control_as_slapd_encodes_it)
{
	char hex[64];
	value_hex(-1, -1, PPOLICY_NO_ERROR, hex);
	ck_assert_str_eq(hex, "3000");
	value_hex(-1, -1, PPOLICY_ACCOUNT_LOCKED, hex);
	ck_assert_str_eq(hex, "3003810101");
	value_hex(-1, -1, PPOLICY_PASSWORD_EXPIRED, hex);
	ck_assert_str_eq(hex, "3003810100");
	value_hex(-1, 2, PPOLICY_NO_ERROR, hex);
	ck_assert_str_eq(hex, "3005a003810102");
	value_hex(99992, -1, PPOLICY_NO_ERROR, hex);
	ck_assert_str_eq(hex, "3007a0058003018698"); /* 99992 = 0x018698 */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("account");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, generalized_time);
	tcase_add_test(tc, ppolicy_locks);
	tcase_add_test(tc, ppolicy_validity_window);
	tcase_add_test(tc, ds389_and_ad);
	tcase_add_test(tc, after_a_right_password);
	tcase_add_test(tc, ds389_password_expiry);
	tcase_add_test(tc, ppolicy_control_as_slapd_encodes_it);
	suite_add_tcase(s, tc);
	return check_run(s);
}
