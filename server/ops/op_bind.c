/* Bind: anonymous, and simple binds as the rootdn or as an entry with userPassword (or,
 * with bind_passthrough, one checked by the provider: bind_passthrough.h). */
#include <ldap.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/controls.h"
#include "server/access_log.h"
#include "server/ops/access.h"
#include "server/ops/account.h"
#include "server/ops/bind_account.h"
#include "server/ops/bind_pad.h"
#include "server/ops/bind_passthrough.h"
#include "server/bind_limit.h"
#include "server/clock.h"
#include "server/limit_key.h"
#include "server/replica/replica.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/ops/ops.h"
#include "server/net/conn.h"
#include "server/net/reply.h"
#include "server/net/sasl.h"
#include "server/net/tls.h"
#include "password/password.h"
#include "storage/db_passwords.h"

/* What a simple bind as an entry met (entry_bind_check). */
struct bind_outcome {
	bool ok;                      /* the password matched and the account may bind */
	bool checked;                 /* a password was checked against the entry's values */
	enum account_refusal refusal; /* refused before the password was checked */
	const char *attr;             /* the attribute that refused it */
	struct account_after after;   /* a right password's policy state */
	bool forward_success; /* the provider should see this success (chain_bind_failures) */
	bool has_password;    /* the entry has userPassword values the bind may use */
};

/*
 * Checks pw against the userPassword values of the entry at key, and the account's state
 * (server/ops/account.h) first: a refused account's password is not checked, as slapd's
 * ppolicy refuses it. o->ok is false also when there is no such entry, or no userPassword
 * it may authenticate with.
 */
static void entry_bind_check(struct conn *c, const struct buf *key, const struct berval *pw,
                             struct bind_outcome *o)
{
	struct worker *w = c->w;
	*o = (struct bind_outcome){.after = {.expire = -1, .grace = -1}};
	if (db_gen_txn_begin(w) != 0)
		return;
	entry_id id;
	struct entry_view e;
	const unsigned char *vals, *v;
	size_t vlen, len;
	/* The rules must give an anonymous client (who binds) auth on userPassword. */
	struct access_op aop;
	struct access_entry ae;
	struct account_input in;
	access_op_init(&aop, c);
	int rc = bind_read_entry(c, key->data, key->len, &id, &e);
	if (rc == 0)
		o->has_password = (access_entry_init(&ae, &aop, id, &e),
		                   access_attr_level(&ae, "userPassword", 12) >= ACCESS_AUTH &&
		                       entry_find_attr(&e, "userPassword", 12, &vals, &vlen));
	/* Nothing to check: as an unknown DN; but with bind_passthrough the provider checks
	 * it, and an account refused here is refused without asking it. */
	if (rc == 0 && !o->has_password && !w->srv->cfg.bind_passthrough)
		rc = DB_NOTFOUND;
	if (rc == 0)
		rc = bind_read_account(c, id, &e, &in);
	if (rc != 0 && rc != DB_NOTFOUND)
		db_gen_txn_failed(w); /* answered as a wrong password; the next one renews */
	time_t now = time(NULL);
	if (rc == 0 && (o->refusal = account_refused(&in, now, &o->attr)) == ACCOUNT_USABLE &&
	    o->has_password) {
		o->checked = true;
		for (const unsigned char *r = vals;
		     !o->ok && entry_next_value(&r, vals + vlen, &v, &len);)
			o->ok = password_check((const char *)v, len, pw->bv_val, pw->bv_len);
		if (o->ok) {
			account_after_bind(&in, now, &o->after);
			o->ok = !o->after.password_expired;
			o->forward_success = o->ok && (in.has_failures || o->after.grace >= 0);
		}
	}
	db_gen_txn_end(w);
	access_op_free(&aop);
}

/* Nanoseconds one failed check against stored takes (the fastest of three). */
static uint64_t check_ns(const char *stored, size_t len)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t a = clock_ns();
		password_check(stored, len, "decoy-password", 14);
		uint64_t t = clock_ns() - a;
		best = t < best ? t : best;
	}
	return best;
}

/*
 * A failed bind is answered at least this long after it was read: twice the costliest
 * check measured, and a margin over the lookups, so that the check of any value in use
 * and the reading of any entry end before it (bind_pad_ns below adds more on a busy
 * machine), and the answer's time tells neither the scheme nor whether the DN exists.
 */
#define BIND_PAD_FACTOR 2
#define BIND_PAD_MARGIN_NS 250000u

/* Logs the schemes in use (minidir -t shows them) and the values no password matches. */
static void log_schemes(const struct server *srv, const struct password_record *s, int costliest,
                        uint64_t cost_ns, uint64_t pad_ns)
{
	char list[1024];
	size_t n = 0;
	list[0] = '\0';
	for (int i = 0; i < s->n && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s %llu", i ? ", " : "",
		                      s->c[i].cls[0] ? s->c[i].cls : "plaintext",
		                      (unsigned long long)s->c[i].values);
	if (s->n)
		log_info("bind: password schemes in use (values): %s; a failed bind is answered "
		         "%.2f ms after it was read (the costliest check, %s, takes %.2f ms), so "
		         "that its time tells neither the scheme nor whether the DN exists",
		         list, (double)pad_ns / 1e6,
		         s->c[costliest].cls[0] ? s->c[costliest].cls : "plaintext",
		         (double)cost_ns / 1e6);
	if (s->unknown)
		log_info("warning: %llu userPassword values of a scheme minidir does not know (the "
		         "first: %s): no password matches them, binds as those entries fail",
		         (unsigned long long)s->unknown, s->unknown_first);
	if (srv->cfg.rootpw[0] && !password_scheme_known(srv->cfg.rootpw, strlen(srv->cfg.rootpw)))
		log_info(
		    "warning: rootpw is of a scheme minidir does not know: no password matches "
		    "it, the rootdn cannot bind");
}

/*
 * The file's password classes into *s: its record (storage/db_passwords.h), which a
 * file imported or written by this version holds, so that opening reads no entry; else
 * (a file made before, a bad record) every entry, once, logged with what to do about
 * it; a file the server writes (a replica's) then stores the record for its next start.
 */
static int read_classes(struct server *srv, struct db_gen *g, struct password_record *s)
{
	struct db *db = &g->db;
	struct password_record stored;
	char why[200] = "";
	struct db_read *txn;
	int rc = db_read_begin(db, &txn);
	if (rc == 0) {
		rc = db_passwords_get(db, txn, &stored, why, sizeof(why));
		db_read_end(txn);
	}
	if (rc == 0) {
		rc = password_record_merge(s, &stored);
		password_record_free(&stored);
		log_info("%s: password schemes read from the file's record (no entry scan)",
		         srv->cfg.database);
		return rc;
	}
	if (rc != DB_NOTFOUND && rc != DB_CORRUPTED)
		return rc;
	uint64_t t0 = clock_ns();
	bool store = db->changes_in_place;
	if ((rc = db_passwords_scan(db, s, store)) != 0)
		return rc;
	double ms = (double)(clock_ns() - t0) / 1e6;
	if (store && db->entries == 0)
		return 0; /* a replica's new file: nothing read, the record made */
	if (why[0])
		log_info("%s: its record of password schemes is bad (%s): scanned all %zu entries "
		         "for userPassword instead (%.1f ms)%s",
		         srv->cfg.database, why, db->entries, ms,
		         store ? "; stored a new record" : "; re-import it (minidir-import)");
	else
		log_info("%s: no record of password schemes (a file made before minidir kept "
		         "one): scanned all %zu entries for userPassword (%.1f ms)%s",
		         srv->cfg.database, db->entries, ms,
		         store ? "; stored the record, later starts read it"
		               : "; re-import it (minidir-import) to open it without the scan");
	return 0;
}

int op_bind_prepare(struct server *srv, struct db_gen *g)
{
	struct password_record s = {.n = 0};
	int rc = 0;
	/* The rootpw first, as the list has always shown it. */
	if (srv->cfg.rootpw[0] && password_scheme_known(srv->cfg.rootpw, strlen(srv->cfg.rootpw)))
		rc = password_record_value(&s, srv->cfg.rootpw, strlen(srv->cfg.rootpw), "", 0, 1);
	if (rc == 0)
		rc = read_classes(srv, g, &s);
	if (rc) {
		log_error("%s: reading passwords: %s", srv->cfg.database, db_error_text(rc));
		password_record_free(&s);
		return -1;
	}
	int best = -1;
	uint64_t best_t = 0;
	for (int i = 0; i < s.n; i++) {
		uint64_t t = check_ns(s.c[i].sample, s.c[i].len);
		if (best < 0 || t > best_t) {
			best = i;
			best_t = t;
		}
	}
	g->bind_decoy_ns = best_t;
	g->bind_pad_ns = BIND_PAD_FACTOR * best_t + BIND_PAD_MARGIN_NS;
	log_schemes(srv, &s, best, best_t, g->bind_pad_ns);
	if (best < 0) {
		/* No password anywhere: every simple bind but the anonymous one fails. */
		static const char none[] = "{SSHA}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
		g->bind_decoy = strdup(none);
		g->bind_decoy_len = sizeof(none) - 1;
	} else {
		g->bind_decoy = s.c[best].sample;
		g->bind_decoy_len = s.c[best].len;
		s.c[best].sample = NULL;
	}
	password_record_free(&s);
	return g->bind_decoy ? 0 : -1;
}

/*
 * A failed simple bind msgid whose checks began at checks_from: the work of a costly check
 * when none was done (an unknown DN, no userPassword, a cheap scheme, a bind refused by
 * bind_fail_limit), so that the worker's CPU time, which decides how soon the scheduler
 * wakes it for the answer on a busy machine, does not tell them apart either (no more
 * than a bind to an unknown DN always cost); then the answer at its time.
 */
static void bind_failed(struct conn *c, int32_t msgid, const struct berval *cred,
                        uint64_t checks_from, struct buf *controls)
{
	struct db_gen *g = db_worker(c->w)->gen;
	if (clock_ns() - checks_from < g->bind_decoy_ns / 2)
		password_check(g->bind_decoy, g->bind_decoy_len, cred->bv_val, cred->bv_len);
	bind_fail_padded(c, msgid, controls);
}

/* The [0] Controls of a bind's answer holding the Password Policy response (its values as
 * control_ppolicy_response takes them) into out; left empty when out of memory (the
 * answer then goes without it). */
static void policy_controls(struct buf *out, int32_t expire, int32_t grace,
                            enum ppolicy_error error)
{
	struct buf list = {0};
	out->len = 0;
	if (control_ppolicy_response(&list, expire, grace, error) < 0 ||
	    controls_wrap(out, &list) < 0)
		out->len = 0;
	buf_free(&list);
}

/*
 * chain_bind_failures: the bind as the client gave it (dn, cred) replayed to the provider
 * by chain.c's threads, so that its password policy counts a failure (and locks the
 * account, which then comes back here by syncrepl) or clears its count on a success. Not
 * waited for: the client's answer does not depend on it. Dropped (counted) when the pool
 * is full or the DN's share of it taken (replica.h, CHAIN_MAX_JOBS_PER_USER), or the
 * password is longer than CHAIN_MAX_PASSWORD: the local bind_fail_limit still counts.
 */
static void replay_bind(struct conn *c, const struct berval *dn, const struct berval *cred,
                        const struct buf *ndn)
{
	struct server *srv = c->w->srv;
	if (!srv->cfg.chain_bind_failures || cred->bv_len > CHAIN_MAX_PASSWORD)
		return;
	struct chain_job *job =
	    chain_job_new(CHAIN_BIND, dn->bv_val, dn->bv_len, cred->bv_val, cred->bv_len);
	if (!job)
		return;
	job->user = limit_key_dn(ndn->data, ndn->len);
	chain_job_put(job); /* nobody waits for it: the thread's reference is the last */
	if (chain_submit(srv, job) < 0) {
		STAT_ADD(c->w->stats.binds_replay_dropped, 1);
		chain_job_put(job);
		return;
	}
	STAT_ADD(c->w->stats.binds_replayed, 1);
}

/*
 * SASL EXTERNAL (RFC 4422 appendix A): on ldapi:// the identity is the peer's
 * uid and gid ("gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth", as
 * slapd); over TLS the subject of the client's verified certificate, as an LDAP
 * DN ("cn=client,o=example"). The rootdn's DN makes it the rootdn. An authorization identity the
 * client asks for is not honoured: it gets the certificate's.
 */
static void sasl_external(struct conn *c, int32_t id)
{
	struct server *srv = c->w->srv;
	char subject[1024];
	size_t n = 0;
	if (c->local && c->peer_cred) /* ldapi://: the peer's uid and gid, as slapd names them */
		n = (size_t)snprintf(subject, sizeof(subject),
		                     "gidNumber=%u+uidNumber=%u,cn=peercred,cn=external,cn=auth",
		                     (unsigned)c->peer_gid, (unsigned)c->peer_uid);
	else if (c->tls)
		n = tls_peer_subject(c->tls, subject, sizeof(subject));
	struct buf ndn = {0}, key = {0};
	if (n == 0 || dn_normalize(subject, n, &ndn, &key) < 0 || ndn.len == 0) {
		reply_done(
		    c, id, LDAP_RES_BIND, LDAP_INAPPROPRIATE_AUTH, NULL,
		    "SASL EXTERNAL needs ldapi:// or TLS with a client certificate tls_ca_file "
		    "verifies");
		goto out;
	}
	bool is_root = op_is_rootdn(srv, &ndn);
	/* The entry the identity names, if there is one here, may be locked or disabled. */
	if (!is_root && op_account_refused(c, key.data, key.len) != ACCOUNT_USABLE) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_INVALID_CREDENTIALS, NULL, NULL);
		goto out;
	}
	/* WhoAmI says it as slapd does: the peercred DN as made, a certificate's normalized. */
	if (conn_set_identity(c, is_root ? AUTH_ROOT : AUTH_USER,
	                      c->local ? (const void *)subject : ndn.data, c->local ? n : ndn.len,
	                      key.data, is_root ? 0 : key.len) < 0) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_OTHER, NULL, "out of memory");
		goto out;
	}
	log_debug("conn fd=%d SASL EXTERNAL bind as \"%.*s\"", c->fd, (int)ndn.len,
	          (const char *)ndn.data);
	reply_done(c, id, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL);
out:
	buf_free(&ndn);
	buf_free(&key);
}

/* What a bind the account state refused (o, and ok: it bound) tells: counted, and noted on
 * its access log line; the Password Policy error its control carries. */
static enum ppolicy_error policy_error(struct conn *c, const struct bind_outcome *o, bool ok)
{
	if (o->refusal != ACCOUNT_USABLE || o->after.password_expired)
		STAT_ADD(c->w->stats.binds_refused_account, 1);
	if (o->refusal != ACCOUNT_USABLE) {
		bind_note_account(c, account_refusal_word(o->refusal), o->attr);
		/* slapd tells a locked account only under ppolicy_use_lockout */
		return c->w->srv->cfg.ppolicy_use_lockout ? PPOLICY_ACCOUNT_LOCKED
		                                          : PPOLICY_NO_ERROR;
	}
	if (o->after.password_expired) {
		bind_note_account(c, "password-expired", o->after.expired_by);
		return PPOLICY_PASSWORD_EXPIRED;
	}
	return ok && o->after.change_after_reset ? PPOLICY_CHANGE_AFTER_RESET : PPOLICY_NO_ERROR;
}

/* bind_passthrough: the bind req (DN ndn, key) checked by the provider, answered with
 * controls (taken) and counted under bind_fail_limit's keys. */
static void to_provider(struct conn *c, const struct ldap_request *req, const struct buf *ndn,
                        const struct buf *key, struct buf *controls, uint64_t dn_key,
                        uint64_t addr_key)
{
	const struct bind_request *b = &req->u.bind;
	if (request_control(req, CONTROL_PASSWORD_POLICY))
		policy_controls(controls, -1, -1, PPOLICY_NO_ERROR);
	struct passthrough_bind pb = {.msgid = req->msgid,
	                              .dn = &b->dn,
	                              .cred = &b->cred,
	                              .key = key,
	                              .controls = controls,
	                              .dn_key = dn_key,
	                              .addr_key = addr_key,
	                              .user = limit_key_dn(ndn->data, ndn->len)};
	bind_passthrough(c, &pb);
}

/* A simple bind with a DN (normal form ndn, key) and a password: the rootdn's, or an
 * entry's as its account state allows; answered at once on success, at a failed bind's
 * time otherwise. */
static void simple_bind(struct conn *c, const struct ldap_request *req, const struct buf *ndn,
                        const struct buf *key)
{
	const struct bind_request *b = &req->u.bind;
	struct server *srv = c->w->srv;
	int32_t id = req->msgid;
	bool ok = false;
	uint64_t checks_from = clock_ns();
	/* The Password Policy control asked for: answered on every simple bind but the
	 * rootdn's (slapd's policy does not apply to it), even on an unknown DN, where slapd
	 * sends none: its absence would tell that the DN does not exist. */
	bool want_policy = request_control(req, CONTROL_PASSWORD_POLICY) != NULL;
	struct buf controls = {0};
	/* bind_fail_limit: a DN or address at the limit is refused without a check, answered
	 * as any failed bind (the decoy check below, the same time). An unknown DN counts as
	 * an existing one: nothing here looks it up. */
	uint64_t dn_key = 0, addr_key = 0;
	if (srv->bind_limit) {
		dn_key = limit_key_dn(ndn->data, ndn->len);
		addr_key = limit_key_peer(c->peer); /* 0 on ldapi://: the DN's count only */
		if (!bind_limit_try(srv->bind_limit, dn_key, addr_key, clock_seconds())) {
			STAT_ADD(c->w->stats.binds_limited, 1);
			log_debug("conn fd=%d bind \"%.*s\": refused (bind_fail_limit)", c->fd,
			          (int)b->dn.bv_len, b->dn.bv_val);
			if (want_policy)
				policy_controls(&controls, -1, -1, PPOLICY_NO_ERROR);
			bind_failed(c, id, &b->cred, checks_from, &controls);
			return;
		}
	}
	struct bind_outcome o = {.after = {.expire = -1, .grace = -1}};
	bool root = op_is_rootdn(srv, ndn);
	if (root) {
		ok = srv->cfg.rootpw[0] && password_check(srv->cfg.rootpw, strlen(srv->cfg.rootpw),
		                                          b->cred.bv_val, b->cred.bv_len);
		ok =
		    ok && conn_set_identity(c, AUTH_ROOT, b->dn.bv_val, b->dn.bv_len, NULL, 0) == 0;
	} else {
		entry_bind_check(c, key, &b->cred, &o);
		ok = o.ok && conn_set_identity(c, AUTH_USER, b->dn.bv_val, b->dn.bv_len, key->data,
		                               key->len) == 0;
		/* No password here (an Active Directory user, or no such entry: asked the same
		 * way, so that the answer's time does not tell them apart) and not refused. */
		if (srv->cfg.bind_passthrough && !o.has_password && o.refusal == ACCOUNT_USABLE) {
			to_provider(c, req, ndn, key, &controls, dn_key, addr_key);
			return;
		}
	}
	enum ppolicy_error error = policy_error(c, &o, ok);
	if (want_policy && !root)
		policy_controls(&controls, o.after.expire, o.after.grace, error);
	log_debug("conn fd=%d bind \"%.*s\": %s", c->fd, (int)b->dn.bv_len, b->dn.bv_val,
	          ok ? "ok" : "invalid credentials");
	/* chain_bind_failures: the provider counts a wrong password given here (and sees a
	 * success that clears its count, or uses a grace bind). */
	if (o.checked && (!o.ok || o.forward_success) && !o.after.password_expired)
		replay_bind(c, &b->dn, &b->cred, ndn);
	/* chain_passwd forwards a password change as the client: with the password it bound
	 * with, kept until the identity goes (conn_clear_identity wipes it); at most
	 * CHAIN_MAX_PASSWORD bytes of it (a longer one's changes are refused: op_chain.c). */
	if (ok && srv->cfg.chain_passwd && b->cred.bv_len <= CHAIN_MAX_PASSWORD &&
	    conn_set_password(c, b->cred.bv_val, b->cred.bv_len) < 0)
		log_info("conn fd=%d: out of memory keeping the bind's password: its password "
		         "changes are not forwarded",
		         c->fd);
	if (ok) {
		if (srv->bind_limit)
			bind_limit_succeeded(srv->bind_limit, dn_key, addr_key);
		if (o.after.change_after_reset)
			c->must_change = o.after.change_by_ds389 ? LDAP_UNWILLING_TO_PERFORM
			                                         : LDAP_INSUFFICIENT_ACCESS;
		struct result_extra x = {.controls = controls.data, .clen = controls.len};
		reply_begin(c);
		reply_result(c, id, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL, &x);
		buf_free(&controls);
		return;
	}
	bind_failed(c, id, &b->cred, checks_from, &controls);
}

void op_bind(struct conn *c, struct ldap_request *req)
{
	struct bind_request *b = &req->u.bind;
	int32_t id = req->msgid;
	/* A bind, even a failed one, drops the old identity, and with it a paged search parked
	 * between pages (its look-ahead entry was chosen for the old identity): its cookie then
	 * gets unwillingToPerform, as an unknown one. */
	conn_task_drop(&c->parked);
	conn_clear_identity(c);
	if (b->version != LDAP_VERSION3) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_PROTOCOL_ERROR, NULL,
		           "only LDAP version 3 is supported");
		return;
	}
	if (!b->simple) {
		if (b->mech.bv_len == 8 && strncasecmp(b->mech.bv_val, "EXTERNAL", 8) == 0) {
			conn_sasl_drop(c);
			sasl_external(c, id);
		} else {
			op_bind_sasl(c, req); /* Cyrus SASL's mechanisms: GSSAPI */
		}
		return;
	}
	conn_sasl_drop(c); /* a simple bind ends a SASL bind in progress */
	if (b->dn.bv_len == 0 && b->cred.bv_len == 0) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	if (b->cred.bv_len == 0) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_UNWILLING_TO_PERFORM, NULL,
		           "unauthenticated bind (DN with no password) disallowed");
		return;
	}
	struct buf ndn = {0}, key = {0};
	if (dn_normalize(b->dn.bv_val, b->dn.bv_len, &ndn, &key) < 0) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		goto out;
	}
	simple_bind(c, req, &ndn, &key);
out:
	buf_free(&ndn);
	buf_free(&key);
}
