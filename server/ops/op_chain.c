/*
 * chain_passwd: a user's password change on a replica, forwarded to the provider as that
 * user (server/replica/replica.h: chain_submit's threads do the round trip), then held
 * until the change has come back here through syncrepl, so that a bind with the new
 * password right after the answer succeeds on this replica.
 *
 * The request is c's task while it waits: it looks at the job (done) and then at the
 * entry from the worker's waking queue every CHAIN_POLL_NS, never blocking the loop. The
 * change has arrived when the entry's userPassword values differ from what they were
 * before the change was sent (a provider that hashes salts each new value, so even the
 * same password set again differs); when they have not after chain_wait_ms, the answer
 * goes anyway, as the provider gave it.
 */
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/ber_in.h"
#include "protocol/buf.h"
#include "protocol/dn.h"
#include "server/clock.h"
#include "server/db/db.h"
#include "server/limit_key.h"
#include "server/log.h"
#include "server/net/conn.h"
#include "server/net/reply.h"
#include "server/ops/bind_account.h"
#include "server/ops/ops.h"
#include "server/replica/replica.h"

/* How often a waiting change looks at its job and at the entry. */
#define CHAIN_POLL_NS 1000000u

struct chain_task {
	struct conn_task task; /* first: a conn_task * is a chain_task * */
	struct conn_wake wake;
	struct chain_job *job;
	unsigned char optag;  /* LDAP_RES_EXTENDED or LDAP_RES_MODIFY */
	struct buf key;       /* the entry whose userPassword changes (empty: none watched) */
	struct buf before;    /* its userPassword values before (the stored bytes) */
	bool had_entry;       /* the entry was on this replica before */
	bool arriving;        /* the provider answered success: waiting for the change here */
	uint64_t deadline_ns; /* while arriving: answered then at the latest */
};

/* Copies the userPassword values of the entry at key into out; false when there is no
 * such entry (out is then empty). A fresh read of the replica's latest commit. */
static bool read_passwords(struct conn *c, const struct buf *key, struct buf *out)
{
	struct worker *w = c->w;
	struct db *db = &db_worker(w)->gen->db;
	entry_id id;
	struct entry_view e;
	const unsigned char *vals;
	size_t vlen;
	bool found = false;
	out->len = 0;
	if (db_gen_txn_begin(w) != 0)
		return false;
	int rc = db_dn2id(db, db_worker(w)->txn, key->data, key->len, &id);
	if (rc == 0)
		rc = db_get_entry(db, db_worker(w)->txn, id, &e);
	if (rc != 0 && rc != DB_NOTFOUND)
		db_gen_txn_failed(w);
	if (rc == 0) {
		found = true;
		if (entry_find_attr(&e, "userPassword", 12, &vals, &vlen))
			buf_append(out, vals, vlen);
	}
	db_gen_txn_end(w);
	return found;
}

/* True once the watched entry's userPassword differs from t->before. */
static bool arrived(struct conn *c, struct chain_task *t)
{
	struct buf now = {0};
	bool found = read_passwords(c, &t->key, &now);
	bool changed = found != t->had_entry || now.len != t->before.len ||
	               (now.len && memcmp(now.data, t->before.data, now.len) != 0);
	buf_free(&now);
	return changed;
}

static void chain_task_free(struct conn_task *ct)
{
	struct chain_task *t = (struct chain_task *)ct;
	conn_wake_cancel(&t->wake); /* closed or abandoned while waiting */
	chain_job_put(t->job);      /* the thread may still hold the other reference */
	buf_free(&t->key);
	buf_free(&t->before);
	free(t);
}

static void answer(struct conn *c, struct chain_task *t)
{
	struct chain_job *job = t->job;
	struct result_extra extra = {0};
	if (job->data && t->optag == LDAP_RES_EXTENDED)
		extra = (struct result_extra){
		    .has_value = true, .value = job->data->bv_val, .vlen = job->data->bv_len};
	c->task = NULL;
	reply_begin(c);
	reply_result(c, t->task.msgid, t->optag, job->rc, job->matched, job->msg, &extra);
	chain_task_free(&t->task);
}

static void chain_task_resume(struct conn *c)
{
	struct chain_task *t = (struct chain_task *)c->task;
	if (t->wake.queued)
		return; /* woken for another reason (the socket took output): still queued */
	uint64_t now = clock_ns();
	if (!t->arriving) {
		if (!atomic_load_explicit(&t->job->done, memory_order_acquire)) {
			conn_wake_at(&t->wake, c, now + CHAIN_POLL_NS);
			return;
		}
		if (t->job->rc != LDAP_SUCCESS || t->key.len == 0) {
			answer(c, t);
			return;
		}
		t->arriving = true;
		t->deadline_ns = now + (uint64_t)c->w->srv->cfg.chain_wait_ms * 1000000u;
	}
	if (arrived(c, t)) {
		answer(c, t);
		return;
	}
	if (now >= t->deadline_ns) {
		log_info("chain_passwd: the change of \"%.200s\" had not come back from the "
		         "provider after chain_wait_ms (%d ms); answered anyway",
		         t->job->dn, c->w->srv->cfg.chain_wait_ms);
		answer(c, t);
		return;
	}
	uint64_t next = now + CHAIN_POLL_NS;
	conn_wake_at(&t->wake, c, next < t->deadline_ns ? next : t->deadline_ns);
}

/*
 * Forwards job for c's request msgid: the entry at dn[0..dnlen) (a DN as the client wrote
 * it; NULL: the bound entry) is the one watched. Answers busy when the pool is full.
 */
static void forward(struct conn *c, int32_t msgid, unsigned char optag, struct chain_job *job,
                    const void *dn, size_t dnlen)
{
	struct chain_task *t = calloc(1, sizeof(*t));
	if (!t) {
		chain_job_put(job);
		chain_job_put(job);
		reply_done(c, msgid, optag, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	*t = (struct chain_task){
	    .task = {.msgid = msgid, .resume = chain_task_resume, .free = chain_task_free},
	    .job = job,
	    .optag = optag};
	struct buf ndn = {0};
	if (dn) {
		if (dn_normalize(dn, dnlen, &ndn, &t->key) < 0)
			t->key.len =
			    0; /* not a DN here: the provider decides, nothing is watched */
	} else {
		buf_append(&t->key, c->bound_key.data, c->bound_key.len);
	}
	buf_free(&ndn);
	if (t->key.len)
		t->had_entry = read_passwords(c, &t->key, &t->before);
	/* Whose change it is, for the pool's share of each user (CHAIN_MAX_JOBS_PER_USER). */
	job->user = limit_key_dn(c->bound_key.data, c->bound_key.len);
	int rc = chain_submit(c->w->srv, job);
	if (rc < 0) {
		chain_job_put(job); /* the thread's reference: it never took it */
		t->job = job;
		chain_task_free(&t->task);
		reply_done(c, msgid, optag, LDAP_BUSY, NULL,
		           rc == CHAIN_USER_FULL
		               ? "your earlier password changes are still being forwarded to the "
		                 "provider; try again"
		               : "too many password changes are being forwarded to the provider; "
		                 "try again");
		return;
	}
	c->task = &t->task;
	conn_wake_at(&t->wake, c, clock_ns() + CHAIN_POLL_NS);
}

/* True when c bound with a password (kept for chain_passwd) and its account may still act;
 * else answers msgid as slapd answers a change it cannot make for it, and false. */
static bool has_password(struct conn *c, int32_t msgid, unsigned char optag)
{
	if (c->bound_pw.data) {
		/* Locked or disabled since it bound: answered as the provider answers its bind. */
		if (op_account_refused(c, c->bound_key.data, c->bound_key.len) == ACCOUNT_USABLE)
			return true;
		reply_done(c, msgid, optag, LDAP_INVALID_CREDENTIALS, NULL, NULL);
		return false;
	}
	if (c->auth == AUTH_ANONYMOUS)
		reply_done(c, msgid, optag, LDAP_STRONG_AUTH_REQUIRED, NULL,
		           "only authenticated users may change passwords");
	else {
		char why[160];
		snprintf(why, sizeof(why),
		         "a replica forwards password changes only for a simple bind with a "
		         "password of at most %d bytes (chain_passwd)",
		         CHAIN_MAX_PASSWORD);
		reply_done(c, msgid, optag, LDAP_UNWILLING_TO_PERFORM, NULL, why);
	}
	return false;
}

void op_chain_passwd(struct conn *c, struct ldap_request *req)
{
	const struct extended_request *x = &req->u.extended;
	/* PasswdModifyRequestValue ::= SEQUENCE { userIdentity [0] OCTET STRING OPTIONAL,
	 * oldPasswd [1] OPTIONAL, newPasswd [2] OPTIONAL } (RFC 3062): only userIdentity is
	 * read here, the provider checks the rest. */
	struct berval ident = {0, NULL};
	if (x->has_value) {
		struct ber_in whole = ber_in_make(x->value.bv_val, x->value.bv_len), seq;
		if (ber_in_take(&whole, LBER_SEQUENCE, &seq) < 0 || !ber_in_end(&whole) ||
		    (!ber_in_end(&seq) && ber_in_peek(&seq) == 0x80 &&
		     ber_in_string(&seq, 0x80, &ident) < 0)) {
			reply_done(c, req->msgid, LDAP_RES_EXTENDED, LDAP_PROTOCOL_ERROR, NULL,
			           "malformed PasswdModifyRequestValue");
			return;
		}
	}
	if (!has_password(c, req->msgid, LDAP_RES_EXTENDED))
		return;
	struct chain_job *job = chain_job_new(CHAIN_PASSWD, c->bound_dn.data, c->bound_dn.len,
	                                      c->bound_pw.data, c->bound_pw.len);
	if (job && x->has_value) {
		job->has_value = true;
		job->value.bv_val = malloc(x->value.bv_len ? x->value.bv_len : 1);
		job->value.bv_len = x->value.bv_len;
		if (job->value.bv_val)
			memcpy(job->value.bv_val, x->value.bv_val, x->value.bv_len);
	}
	if (!job || (job->has_value && !job->value.bv_val)) {
		if (job) {
			chain_job_put(job);
			chain_job_put(job);
		}
		reply_done(c, req->msgid, LDAP_RES_EXTENDED, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	forward(c, req->msgid, LDAP_RES_EXTENDED, job, ident.bv_len ? ident.bv_val : NULL,
	        ident.bv_len);
}

/* True if type names userPassword (its name or OID, no options). */
static bool is_user_password(const struct berval *type)
{
	return (type->bv_len == 12 && strncasecmp(type->bv_val, "userPassword", 12) == 0) ||
	       (type->bv_len == 8 && memcmp(type->bv_val, "2.5.4.35", 8) == 0);
}

/*
 * The changes of a ModifyRequest (their SEQUENCE's content), each
 * SEQUENCE { operation ENUMERATED, modification SEQUENCE { type, vals SET OF value } },
 * as libldap's LDAPMod array, when every one is of userPassword. NULL otherwise (or out
 * of memory, or malformed: refused as any write then).
 */
static LDAPMod **password_mods(const struct berval *changes)
{
	struct ber_in in = ber_in_make(changes->bv_val, changes->bv_len), ch, mod, vals;
	size_t n = 0;
	for (struct ber_in scan = in; !ber_in_end(&scan); n++)
		if (ber_in_take(&scan, LBER_SEQUENCE, &ch) < 0)
			return NULL;
	if (n == 0)
		return NULL;
	LDAPMod **mods = ber_memcalloc(n + 1, sizeof(*mods));
	if (!mods)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int32_t op;
		struct berval type, v;
		if (ber_in_take(&in, LBER_SEQUENCE, &ch) < 0 ||
		    ber_in_int(&ch, LBER_ENUMERATED, &op) < 0 || op < 0 || op > 2 ||
		    ber_in_take(&ch, LBER_SEQUENCE, &mod) < 0 || !ber_in_end(&ch) ||
		    ber_in_string(&mod, LBER_OCTETSTRING, &type) < 0 || !is_user_password(&type) ||
		    ber_in_take(&mod, LBER_SET, &vals) < 0 || !ber_in_end(&mod))
			goto fail;
		size_t nv = 0;
		for (struct ber_in scan = vals; !ber_in_end(&scan); nv++)
			if (ber_in_string(&scan, LBER_OCTETSTRING, &v) < 0)
				goto fail;
		if (!(mods[i] = ber_memcalloc(1, sizeof(**mods))))
			goto fail;
		mods[i]->mod_op = op | LDAP_MOD_BVALUES;
		if (!(mods[i]->mod_type = ber_strdup("userPassword")) ||
		    !(mods[i]->mod_bvalues = ber_memcalloc(nv + 1, sizeof(struct berval *))))
			goto fail;
		for (size_t j = 0; j < nv; j++) {
			ber_in_string(&vals, LBER_OCTETSTRING, &v);
			if (!(mods[i]->mod_bvalues[j] = ber_mem2bv(v.bv_val, v.bv_len, 1, NULL)))
				goto fail;
		}
	}
	return mods;
fail:
	ldap_mods_free(mods, 1);
	return NULL;
}

bool op_chain_modify(struct conn *c, struct ldap_request *req)
{
	const struct modify_request *m = &req->u.modify;
	if (!m->valid || c->auth != AUTH_USER || !c->bound_pw.data)
		return false;
	struct buf ndn = {0}, key = {0};
	bool own = dn_normalize(m->dn.bv_val, m->dn.bv_len, &ndn, &key) == 0 &&
	           key.len == c->bound_key.len && memcmp(key.data, c->bound_key.data, key.len) == 0;
	buf_free(&ndn);
	buf_free(&key);
	LDAPMod **mods = own ? password_mods(&m->changes) : NULL;
	if (!mods)
		return false;
	struct chain_job *job = chain_job_new(CHAIN_MODIFY, c->bound_dn.data, c->bound_dn.len,
	                                      c->bound_pw.data, c->bound_pw.len);
	if (job) {
		job->mods = mods;
		job->target = strndup(m->dn.bv_val, m->dn.bv_len);
	}
	if (!job || !job->target) {
		if (job) {
			chain_job_put(job);
			chain_job_put(job);
		} else {
			ldap_mods_free(mods, 1);
		}
		reply_done(c, req->msgid, LDAP_RES_MODIFY, LDAP_OTHER, NULL, "out of memory");
		return true;
	}
	forward(c, req->msgid, LDAP_RES_MODIFY, job, NULL, 0);
	return true;
}
