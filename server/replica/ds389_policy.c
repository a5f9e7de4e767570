/* What a 389-ds provider decides outside its changelog, read and recorded: its global
 * password policy, and memberOf nesting (see apply.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/log.h"
#include "server/replica/apply.h"
#include "server/replica/ds389.h"
#include "server/server.h"
#include "storage/memberof_nested.h"

/* The first value of attr in e, or NULL. */
static struct berval *first(LDAP *ld, LDAPMessage *e, const char *attr, struct berval ***vals)
{
	*vals = ldap_get_values_len(ld, e, attr);
	return *vals && (*vals)[0] ? (*vals)[0] : NULL;
}

/* An on/off attribute into *on (left alone when absent). */
static void read_on(LDAP *ld, LDAPMessage *e, const char *attr, bool *on)
{
	struct berval **vals;
	struct berval *v = first(ld, e, attr, &vals);
	if (v)
		*on = v->bv_len == 2 && strncasecmp(v->bv_val, "on", 2) == 0;
	ldap_value_free_len(vals);
}

/* A count of seconds or grace binds into *n (left alone when absent or not digits). */
static void read_number(LDAP *ld, LDAPMessage *e, const char *attr, int64_t *n)
{
	struct berval **vals;
	struct berval *v = first(ld, e, attr, &vals);
	long long x = v ? ds389_decimal(v->bv_val, v->bv_len) : -1;
	if (x >= 0)
		*n = x;
	ldap_value_free_len(vals);
}

/* cn=config's policy into *p (p->known false when the entry or passwordExp is not readable:
 * 389-ds shows an account without read access no entry, or one without the attribute). */
static void read_policy(LDAP *ld, int timeout_s, struct provider_pwpolicy *p)
{
	static char *const attrs[] = {
	    "passwordExp",     "passwordMustChange",     "passwordGraceLimit",
	    "passwordWarning", "nsslapd-pwpolicy-local", NULL};
	struct timeval t = {timeout_s, 0};
	LDAPMessage *res = NULL, *e;
	provider_pwpolicy_defaults(p);
	p->known = false;
	if (ldap_search_ext_s(ld, "cn=config", LDAP_SCOPE_BASE, "(objectClass=*)", (char **)attrs,
	                      0, NULL, NULL, &t, 1, &res) == LDAP_SUCCESS &&
	    (e = ldap_first_entry(ld, res)) != NULL) {
		struct berval **vals;
		p->known = first(ld, e, "passwordExp", &vals) != NULL;
		ldap_value_free_len(vals);
		read_on(ld, e, "passwordExp", &p->exp);
		read_on(ld, e, "passwordMustChange", &p->must_change);
		read_on(ld, e, "nsslapd-pwpolicy-local", &p->local);
		read_number(ld, e, "passwordGraceLimit", &p->grace_limit);
		read_number(ld, e, "passwordWarning", &p->warning);
	}
	ldap_msgfree(res);
}

static bool same(const struct provider_pwpolicy *a, const struct provider_pwpolicy *b)
{
	return a->known == b->known && a->exp == b->exp && a->must_change == b->must_change &&
	       a->local == b->local && a->grace_limit == b->grace_limit && a->warning == b->warning;
}

static int record(struct replica *r, const struct provider_pwpolicy *p)
{
	if (r->txn)
		return provider_pwpolicy_put(r->db, r->txn, p);
	struct db_write *w;
	int rc = db_write_begin(r->db, &w);
	if (rc)
		return rc;
	if ((rc = provider_pwpolicy_put(r->db, w, p)) != 0) {
		db_write_abort(w);
		return rc;
	}
	return db_write_commit(w);
}

int replica_ds389_policy(struct replica *r, char *why, size_t cap)
{
	const struct syncrepl_conf *s = r->conf;
	struct provider_pwpolicy p;
	read_policy(r->ld, s->network_timeout + 25, &p);
	if (!p.known) {
		if (!r->ds_policy_unread_logged)
			log_warning(
			    "syncrepl rid=%03d: the provider's password policy (cn=config's "
			    "passwordExp) is not readable as \"%.200s\": its "
			    "passwordExpirationTime values are honoured at bind only under "
			    "the policy this file recorded last, if any, or an entry's own "
			    "policy (docs/replica.md, \"389 Directory Server\")",
			    s->rid, s->binddn);
		r->ds_policy_unread_logged = true;
		return 0;
	}
	r->ds_policy_unread_logged = false;
	if (same(&p, &r->ds_policy))
		return 0;
	int rc = record(r, &p);
	if (rc) {
		snprintf(why, cap, "recording the provider's password policy: %s",
		         db_error_text(db_write_error(r->db, rc)));
		return -1;
	}
	r->ds_policy = p;
	log_info("syncrepl rid=%03d: the provider's password policy: passwords %s (passwordExp), "
	         "%lld grace binds, a reset password %s changed, fine-grained policies %s",
	         s->rid, p.exp ? "expire" : "do not expire", (long long)p.grace_limit,
	         p.must_change ? "must be" : "need not be", p.local ? "on" : "off");
	return 0;
}

int replica_ds389_nesting(struct replica *r, char *why, size_t cap)
{
	/* (a file with entries keeps what it holds: no write transaction at every session's
	 * start for that) */
	if (r->srv->cfg.memberof_nested != MEMBEROF_NESTED_AUTO || r->txn ||
	    __atomic_load_n(&r->db->entries, __ATOMIC_RELAXED) > 0)
		return 0;
	struct db_write *w;
	size_t entries = 0;
	bool nested = true;
	int rc = db_write_begin(r->db, &w);
	if (rc)
		goto failed;
	if ((rc = db_entry_count(r->db, db_write_reads(w), &entries)) != 0 ||
	    (rc = memberof_nested_get(r->db, db_write_reads(w), &nested)) != 0 || entries > 0 ||
	    nested) {
		db_write_abort(w); /* a file with entries keeps what it holds */
		if (rc)
			goto failed;
		return 0;
	}
	if ((rc = memberof_nested_set(r->db, w, true)) != 0) {
		db_write_abort(w);
		goto failed;
	}
	if ((rc = db_write_commit(w)) != 0)
		goto failed;
	log_info("syncrepl rid=%03d: memberof_nested = auto and the provider is 389 Directory "
	         "Server, whose memberOf plugin counts groups in groups: %s holds nested memberOf",
	         r->conf->rid, r->srv->cfg.database);
	return 0;
failed:
	snprintf(why, cap, "recording memberof_nested: %s",
	         db_error_text(db_write_error(r->db, rc)));
	return -1;
}
