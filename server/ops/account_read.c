/* An account's state read from the database for a bind: see account.h. */
#include <ldap.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "server/ops/account.h"
#include "storage/entry_opattrs.h"

/* The first value of name in e into *v (left alone when e has none); the count in *n. */
static void first_value(const struct entry_view *e, const char *name, struct berval *v, int *n)
{
	const unsigned char *vals, *val;
	size_t vlen, len;
	if (!e || !entry_find_attr(e, name, strlen(name), &vals, &vlen))
		return;
	int count = 0;
	for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &val, &len); count++)
		if (count == 0)
			*v = (struct berval){len, (char *)val};
	if (n)
		*n = count;
}

/* name's first value, from the record or the kept operational attributes (a type the
 * schema does not call operational stays in the record: a site schema may define it). */
static void value(const struct entry_view *e, const struct entry_view *kept, const char *name,
                  struct berval *v)
{
	first_value(e, name, v, NULL);
	if (!v->bv_val)
		first_value(kept, name, v, NULL);
}

/* The entry at DN text[0..len) into *e; 0, DB_NOTFOUND (none, or not a DN) or an error. */
static int entry_at(const struct db *db, struct db_read *txn, const char *text, size_t len,
                    struct entry_view *e)
{
	struct buf key = {0};
	entry_id id;
	int rc = dn_normalize(text, len, NULL, &key) < 0 ? DB_NOTFOUND : 0;
	if (rc == 0 && key.len == 0)
		rc = DB_NOTFOUND; /* the root DSE holds no policy */
	if (rc == 0)
		rc = db_dn2id(db, txn, key.data, key.len, &id);
	if (rc == 0)
		rc = db_get_entry(db, txn, id, e);
	buf_free(&key);
	return rc;
}

/* An INTEGER attribute of e into *x (left alone when absent or not a number). */
static void int_value(const struct entry_view *e, const char *name, int64_t *x)
{
	struct berval v = {0, NULL};
	first_value(e, name, &v, NULL);
	account_integer(&v, x);
}

static bool bool_value(const struct entry_view *e, const char *name)
{
	struct berval v = {0, NULL};
	first_value(e, name, &v, NULL);
	return v.bv_len == 4 && strncasecmp(v.bv_val, "TRUE", 4) == 0;
}

/* An on/off attribute of a 389-ds policy entry into *on (left alone when absent). */
static void on_value(const struct entry_view *e, const char *name, bool *on)
{
	struct berval v = {0, NULL};
	first_value(e, name, &v, NULL);
	if (v.bv_val)
		*on = v.bv_len == 2 && strncasecmp(v.bv_val, "on", 2) == 0;
}

/* 389-ds's fine-grained policy pe into *p: its defaults, then the values it sets (389-ds's
 * new_passwdPolicy: a local policy does not inherit the global one's expiry). */
static void read_ds389_policy(const struct entry_view *pe, struct provider_pwpolicy *p)
{
	provider_pwpolicy_defaults(p);
	on_value(pe, "passwordExp", &p->exp);
	on_value(pe, "passwordMustChange", &p->must_change);
	int_value(pe, "passwordGraceLimit", &p->grace_limit);
	int_value(pe, "passwordWarning", &p->warning);
}

/* The policy at DN text[0..len) into in->policy (found false when it is not here), or a
 * 389-ds policy there into *local (left alone when it is not one). */
static int read_policy(const struct db *db, struct db_read *txn, const char *text, size_t len,
                       struct account_input *in, struct provider_pwpolicy *local)
{
	struct account_policy *p = &in->policy;
	struct entry_view pe;
	int rc = entry_at(db, txn, text, len, &pe);
	if (rc == DB_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (entry_has_class(&pe, "passwordPolicy", 14)) { /* 389-ds's fine-grained one */
		read_ds389_policy(&pe, local);
		return 0;
	}
	p->found = true;
	p->lockout = bool_value(&pe, "pwdLockout");
	p->must_change = bool_value(&pe, "pwdMustChange");
	int_value(&pe, "pwdLockoutDuration", &p->lockout_duration);
	int_value(&pe, "pwdMaxAge", &p->max_age);
	int_value(&pe, "pwdExpireWarning", &p->expire_warning);
	int_value(&pe, "pwdGraceAuthNLimit", &p->grace_limit);
	int_value(&pe, "pwdGraceExpiry", &p->grace_expiry);
	return 0;
}

int account_read(const struct db *db, struct db_read *txn, entry_id id, const struct entry_view *e,
                 const char *default_policy, const char *suffix, struct account_input *in)
{
	*in = (struct account_input){0};
	struct entry_view kept = {0};
	int rc = entry_opattrs_get(db, txn, id, &kept);
	if (rc && rc != DB_NOTFOUND)
		return rc;
	const struct entry_view *k = rc == 0 ? &kept : NULL;
	value(e, k, "pwdStartTime", &in->start);
	value(e, k, "pwdEndTime", &in->end);
	value(e, k, "pwdAccountTmpLockoutEnd", &in->tmp_lockout_end);
	value(e, k, "pwdAccountLockedTime", &in->locked);
	value(e, k, "pwdChangedTime", &in->changed);
	value(e, k, "pwdReset", &in->reset);
	value(e, k, "nsAccountLock", &in->ns_lock);
	value(e, k, "accountUnlockTime", &in->unlock_time);
	value(e, k, "userAccountControl", &in->uac);
	value(e, k, "lockoutTime", &in->lockout_time);
	struct berval v = {0, NULL};
	first_value(k, "pwdGraceUseTime", &v, &in->grace_uses);
	if (!v.bv_val)
		first_value(e, "pwdGraceUseTime", &v, &in->grace_uses);
	struct berval failed = {0, NULL};
	value(e, k, "pwdFailureTime", &failed);
	in->has_failures = failed.bv_val != NULL;
	/* The policy: pwdPolicySubentry's, else the configured default (slapd's order). */
	struct berval sub = {0, NULL};
	struct provider_pwpolicy local = {0};
	value(e, k, "pwdPolicySubentry", &sub);
	if (sub.bv_val)
		rc = read_policy(db, txn, sub.bv_val, sub.bv_len, in, &local);
	else if (default_policy && default_policy[0])
		rc = read_policy(db, txn, default_policy, strlen(default_policy), in, &local);
	else
		rc = 0;
	if (rc)
		return rc;
	/* 389-ds: its global policy, unless local ones apply (or whether they do is not
	 * known: a policy entry on the provider says an administrator made one) and the
	 * entry names one. */
	value(e, k, "passwordExpirationTime", &in->pw_expiration);
	if (in->pw_expiration.bv_val) {
		struct berval uses = {0, NULL};
		value(e, k, "passwordGraceUserTime", &uses);
		account_integer(&uses, &in->ds_grace_uses);
		if ((rc = provider_pwpolicy_get(db, txn, &in->ds_policy)) != 0)
			return rc;
		if (local.known && (in->ds_policy.local || !in->ds_policy.known))
			in->ds_policy = local;
	}
	/* AD: the domain's lockoutDuration, read only for a lockout in force. */
	int64_t stamp = 0;
	if (account_integer(&in->lockout_time, &stamp) && stamp != 0 && suffix && suffix[0]) {
		struct entry_view dom;
		rc = entry_at(db, txn, suffix, strlen(suffix), &dom);
		if (rc == 0) {
			struct berval d = {0, NULL};
			first_value(&dom, "lockoutDuration", &d, NULL);
			in->ad_duration_known = d.bv_val != NULL;
			int_value(&dom, "lockoutDuration", &in->ad_lockout_duration);
		} else if (rc != DB_NOTFOUND) {
			return rc;
		}
	}
	return 0;
}
