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
#include "server/ops/authz_map.h"
#include "server/ops/authz_url.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"

/* The DN the authentication DN authdn binds as (authz_map.h), its normal form and key
 * appended to ndn and key: 0, or -1 (logged where a rule made what is not a DN). */
static int bound_dn(struct conn *c, const struct buf *authdn, struct buf *ndn, struct buf *key)
{
	struct buf to = {0};
	int rc = authz_map(ops_shared(c->w->srv)->authz, authdn, &to);
	if (rc == AUTHZ_TO_URL)
		rc = authz_url_search(c, (const char *)to.data, ndn, key); /* 0: none found */
	else if (rc == AUTHZ_TO_DN && dn_normalize((const char *)to.data, to.len, ndn, key) < 0) {
		log_info("authz_regexp: made \"%s\" of \"%.*s\", not a DN: the bind fails",
		         (const char *)to.data, (int)authdn->len, (const char *)authdn->data);
		rc = -1;
	}
	if (rc == AUTHZ_UNMAPPED &&
	    dn_normalize((const char *)authdn->data, authdn->len, ndn, key) < 0)
		rc = -1;
	buf_free(&to);
	return rc < 0 ? -1 : 0;
}

/* The session authenticated: bound as the DN its identity maps to, unless the client
 * asked for another identity (refused: no proxy authorization) or the entry's account
 * is refused. Answers msgid with the session's last data. */
static void bound(struct conn *c, int32_t msgid, const struct sasl_step *st)
{
	const char *user, *realm, *authzid;
	unsigned ssf;
	conn_sasl_who(c, &user, &realm, &authzid, &ssf);
	if (authzid) {
		conn_sasl_drop(c);
		reply_done(c, msgid, LDAP_RES_BIND, LDAP_INSUFFICIENT_ACCESS, NULL,
		           "SASL(-14): authorization failure: not authorized");
		return;
	}
	/* A principal of the service's own realm is named without it (alice, as slapd names
	 * alice@EXAMPLE.COM); one of another realm keeps its realm (carol@OTHER.COM), so that
	 * no mapping makes it the local user of the same name. */
	char *name = user ? strdup(user) : NULL;
	char *at = name ? strrchr(name, '@') : NULL;
	if (at && realm && strcasecmp(at + 1, realm) == 0)
		*at = '\0';
	struct buf authdn = {0}, ndn = {0}, key = {0};
	int mapped = name && authz_auth_dn(name, realm, "gssapi", &authdn) == 0
	                 ? bound_dn(c, &authdn, &ndn, &key)
	                 : -1;
	bool root = mapped >= 0 && op_is_rootdn(c->w->srv, &ndn);
	if (mapped < 0 || (!root && op_account_refused(c, key.data, key.len) != ACCOUNT_USABLE) ||
	    conn_set_identity(c, root ? AUTH_ROOT : AUTH_USER, ndn.data, ndn.len, key.data,
	                      root ? 0 : key.len) < 0) {
		conn_sasl_drop(c);
		reply_done(c, msgid, LDAP_RES_BIND, LDAP_INVALID_CREDENTIALS, NULL,
		           mapped < 0 ? "SASL: the identity is not a DN (authz_regexp)" : NULL);
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
	free(name);
	buf_free(&authdn);
	buf_free(&ndn);
	buf_free(&key);
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
