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

/* Refused: the session goes, the client is told rc and why (NULL: nothing more). */
static void refuse(struct conn *c, int32_t msgid, int rc, const char *why)
{
	conn_sasl_drop(c);
	reply_done(c, msgid, LDAP_RES_BIND, rc, NULL, why);
}

/* The session authenticated: bound as the DN its identity maps to, or as the identity it
 * asked to act as when authz_policy and the entry's authzTo allow it (authz_identity.h),
 * unless that entry's account is refused. Answers msgid with the session's last data. */
static void bound(struct conn *c, int32_t msgid, const struct sasl_step *st)
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
	    .has_value = st->out != NULL, .sasl_creds = true, .value = st->out, .vlen = st->outlen};
	reply_begin(c);
	reply_result(c, msgid, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL, &x);
	conn_sasl_layer_start(c); /* from the byte after that answer */
out:
	buf_free(&ndn);
	buf_free(&key);
	buf_free(&pndn);
	buf_free(&pkey);
}

void op_bind_sasl(struct conn *c, const struct ldap_request *req)
{
	const struct bind_request *b = &req->u.bind;
	struct server *srv = c->w->srv;
	if (!sasl_offers(srv->sasl, b->mech.bv_val, b->mech.bv_len)) {
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
		conn_sasl_drop(c);
		reply_done(c, req->msgid, LDAP_RES_BIND, LDAP_INVALID_CREDENTIALS, NULL, NULL);
		return;
	}
	struct sasl_step st;
	enum sasl_step_status s = conn_sasl_step(c, &b->mech, &b->cred, b->has_cred, &st);
	if (s != SASL_STEP_FAILED && srv->bind_limit)
		bind_limit_succeeded(srv->bind_limit, 0, addr);
	if (s == SASL_STEP_CONTINUE) {
		struct result_extra x = {
		    .has_value = true, .sasl_creds = true, .value = st.out, .vlen = st.outlen};
		reply_begin(c);
		reply_result(c, req->msgid, LDAP_RES_BIND, LDAP_SASL_BIND_IN_PROGRESS, NULL, NULL,
		             &x);
	} else if (s == SASL_STEP_FAILED) {
		log_debug("conn fd=%d SASL %.*s bind: %d %s", c->fd, (int)b->mech.bv_len,
		          b->mech.bv_val, st.rc, st.why);
		reply_done(c, req->msgid, LDAP_RES_BIND, st.rc, NULL, st.why);
	} else {
		bound(c, req->msgid, &st);
	}
}
