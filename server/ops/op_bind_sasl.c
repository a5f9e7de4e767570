/*
 * SASL binds through Cyrus SASL (server/net/sasl.h: GSSAPI): the steps answered with
 * saslBindInProgress until the session ends; then the identity it authenticated made a
 * DN (authz_map.h), the account state of the entry it names checked as a simple bind's
 * is, and the connection bound as it, with the security layer the session set up.
 */
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "server/bind_limit.h"
#include "server/clock.h"
#include "server/limit_key.h"
#include "server/log.h"
#include "server/net/conn.h"
#include "server/net/reply.h"
#include "server/net/sasl.h"
#include "server/ops/account.h"
#include "server/ops/bind_account.h"
#include "server/ops/authz_identity.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"
#include "server/ops/sasl_pool.h"

/* Refused: the session goes, the client is told rc and why (NULL: nothing more). */
static void refuse(struct conn *c, int32_t msgid, int rc, const char *why)
{
	conn_sasl_drop(c);
	reply_done(c, msgid, LDAP_RES_BIND, rc, NULL, why);
}

/* The session authenticated: bound as the DN its identity maps to, or as the identity it
 * asked to act as when authz_policy and the entry's authzTo allow it (authz_identity.h),
 * unless that entry's account is refused. Answers msgid with the session's last data. */
static void bound(struct conn *c, int32_t msgid, const struct buf *out)
{
	const char *user, *realm, *authzid;
	unsigned ssf;
	conn_sasl_who(c, &user, &realm, &authzid, &ssf);
	struct buf ndn = {0}, key = {0}, pndn = {0}, pkey = {0};
	if (!user || authz_user_dn(c, user, realm, "gssapi", &ndn, &key) < 0) {
		refuse(c, msgid, LDAP_INVALID_CREDENTIALS, "SASL: the identity is not a DN");
		goto out;
	}
	if (authzid) {
		if (!authz_proxy_allowed(c, &key, authzid, realm, "gssapi", &pndn, &pkey)) {
			refuse(c, msgid, LDAP_INSUFFICIENT_ACCESS,
			       "SASL(-14): authorization failure: not authorized");
			goto out;
		}
		log_debug("conn fd=%d SASL: \"%.*s\" acts as \"%s\" (authzTo)", c->fd, (int)ndn.len,
		          (const char *)ndn.data, authzid);
		buf_free(&ndn), buf_free(&key);
		ndn = pndn, key = pkey;
		pndn = (struct buf){0}, pkey = (struct buf){0};
	}
	bool root = op_is_rootdn(c->w->srv, &ndn);
	if ((!root && op_account_refused(c, key.data, key.len) != ACCOUNT_USABLE) ||
	    conn_set_identity(c, root ? AUTH_ROOT : AUTH_USER, ndn.data, ndn.len, key.data,
	                      root ? 0 : key.len) < 0) {
		refuse(c, msgid, LDAP_INVALID_CREDENTIALS, NULL);
		goto out;
	}
	log_debug("conn fd=%d SASL GSSAPI bind of \"%s\" as \"%.*s\" (security strength %u)", c->fd,
	          user, (int)ndn.len, (const char *)ndn.data, ssf);
	struct result_extra x = {
	    .has_value = out->len > 0, .sasl_creds = true, .value = out->data, .vlen = out->len};
	reply_begin(c);
	reply_result(c, msgid, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL, &x);
	conn_sasl_layer_start(c); /* from the byte after that answer */
out:
	buf_free(&ndn);
	buf_free(&key);
	buf_free(&pndn);
	buf_free(&pkey);
}

/* How often a bind waiting for its step looks at it (a GSSAPI step takes about 0.6 ms). */
#define SASL_STEP_POLL_NS 300000u

/* A step running on the SASL threads, the connection's task meanwhile. */
struct step_task {
	struct conn_task task; /* first: a conn_task * is a step_task * */
	struct conn_wake wake;
	struct sasl_job *job;
	uint64_t addr_key; /* bind_fail_limit's key of the client's address */
};

static void step_free(struct conn_task *ct)
{
	struct step_task *t = (struct step_task *)ct;
	conn_wake_cancel(&t->wake); /* closed or abandoned while waiting */
	sasl_job_put(t->job);       /* the pool may still hold the other reference */
	free(t);
}

/* The step ran: answered as its outcome says. */
static void step_resume(struct conn *c)
{
	struct step_task *t = (struct step_task *)c->task;
	if (t->wake.queued)
		return; /* woken for another reason (the socket took output): still queued */
	if (!atomic_load_explicit(&t->job->done, memory_order_acquire)) {
		conn_wake_at(&t->wake, c, clock_ns() + SASL_STEP_POLL_NS);
		return;
	}
	c->task = NULL;
	struct server *srv = c->w->srv;
	struct sasl_step st;
	enum sasl_step_status s = conn_sasl_finish(c, t->job->s, t->job->rc, &st);
	if (s != SASL_STEP_FAILED && srv->bind_limit)
		bind_limit_succeeded(srv->bind_limit, 0, t->addr_key);
	if (s == SASL_STEP_CONTINUE) {
		struct result_extra x = {.has_value = true,
		                         .sasl_creds = true,
		                         .value = t->job->out.data,
		                         .vlen = t->job->out.len};
		reply_begin(c);
		reply_result(c, t->task.msgid, LDAP_RES_BIND, LDAP_SASL_BIND_IN_PROGRESS, NULL,
		             NULL, &x);
	} else if (s == SASL_STEP_FAILED) {
		log_debug("conn fd=%d SASL bind: %d %s", c->fd, st.rc, st.why);
		reply_done(c, t->task.msgid, LDAP_RES_BIND, st.rc, NULL, st.why);
	} else {
		bound(c, t->task.msgid, &t->job->out);
	}
	step_free(&t->task);
}

void op_bind_sasl(struct conn *c, const struct ldap_request *req)
{
	const struct bind_request *b = &req->u.bind;
	struct server *srv = c->w->srv;
	struct sasl_pool *pool = ops_shared(srv)->sasl_pool;
	if (!pool || !sasl_offers(srv->sasl, b->mech.bv_val, b->mech.bv_len)) {
		conn_sasl_drop(c);
		reply_done(c, req->msgid, LDAP_RES_BIND, LDAP_AUTH_METHOD_NOT_SUPPORTED, NULL,
		           srv->sasl ? "SASL mechanisms offered: EXTERNAL (ldapi://, TLS client "
		                       "certificates) and GSSAPI"
		                     : "the only SASL mechanism is EXTERNAL (ldapi:// or TLS "
		                       "client certificates); GSSAPI needs sasl_keytab");
		return;
	}
	/* bind_fail_limit by the client's address: each step counts as a failure until it
	 * did not fail (the identity is not known before the last step). */
	uint64_t addr = limit_key_peer(c->peer);
	if (srv->bind_limit && !bind_limit_try(srv->bind_limit, 0, addr, clock_seconds())) {
		STAT_ADD(c->w->stats.binds_limited, 1);
		refuse(c, req->msgid, LDAP_INVALID_CREDENTIALS, NULL);
		return;
	}
	struct sasl_step st;
	bool first;
	struct sasl_session *s = conn_sasl_begin(c, &b->mech, &first, &st);
	if (!s) {
		refuse(c, req->msgid, st.rc, st.why);
		return;
	}
	/* The job takes the step's reference to s (sasl_job_new puts it when it fails). */
	struct step_task *t = calloc(1, sizeof(*t));
	struct sasl_job *job = t ? sasl_job_new(s, first, &b->cred, b->has_cred) : NULL;
	if (!t)
		sasl_session_put(s);
	if (!job || sasl_pool_submit(pool, job) < 0) {
		conn_sasl_finish(c, s, SASL_STEP_NOT_RUN, &st); /* c's session dropped */
		sasl_job_put(job);
		free(t);
		reply_done(c, req->msgid, LDAP_RES_BIND, job ? LDAP_BUSY : LDAP_OTHER, NULL,
		           job ? "too many SASL binds are in progress; try again"
		               : "out of memory");
		return;
	}
	*t = (struct step_task){
	    .task = {.msgid = req->msgid, .resume = step_resume, .free = step_free},
	    .job = job,
	    .addr_key = addr};
	c->task = &t->task;
	conn_wake_at(&t->wake, c, clock_ns() + SASL_STEP_POLL_NS);
}
