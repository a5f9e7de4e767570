/* Bind: anonymous, and simple binds as the rootdn or as an entry with userPassword. */
#include <ldap.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "server/log.h"
#include "server/ops.h"
#include "server/password.h"

/* True if the entry at key has a userPassword value that pw matches. */
static bool entry_password_ok(struct worker *w, const struct buf *key, const struct berval *pw)
{
	struct db *db = &w->srv->db;
	bool ok = false;
	if (mdb_txn_renew(w->txn) != 0)
		return false;
	entry_id id;
	struct entry_view e;
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (db_dn2id(db, w->txn, key->data, key->len, &id) == 0 &&
	    db_get_entry(db, w->txn, id, &e) == 0 &&
	    entry_find_attr(&e, "userPassword", 12, &vals, &vlen)) {
		for (const unsigned char *r = vals;
		     !ok && entry_next_value(&r, vals + vlen, &v, &len);)
			ok = password_check((const char *)v, len, pw->bv_val, pw->bv_len);
	}
	mdb_txn_reset(w->txn);
	return ok;
}

void op_bind(struct conn *c, struct ldap_request *req)
{
	struct bind_request *b = &req->u.bind;
	struct server *srv = c->w->srv;
	int32_t id = req->msgid;
	c->auth = AUTH_ANONYMOUS; /* a bind, even a failed one, drops the old identity */
	c->bound_key.len = 0;
	c->bound_dn.len = 0;
	if (b->version != LDAP_VERSION3) {
		conn_send_result(c, id, LDAP_RES_BIND, LDAP_PROTOCOL_ERROR, NULL,
		                 "only LDAP version 3 is supported");
		return;
	}
	if (!b->simple) {
		conn_send_result(c, id, LDAP_RES_BIND, LDAP_AUTH_METHOD_NOT_SUPPORTED, NULL,
		                 "SASL is not supported; use a simple bind");
		return;
	}
	if (b->dn.bv_len == 0 && b->cred.bv_len == 0) {
		conn_send_result(c, id, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	if (b->cred.bv_len == 0) {
		conn_send_result(c, id, LDAP_RES_BIND, LDAP_UNWILLING_TO_PERFORM, NULL,
		                 "unauthenticated bind (DN with no password) disallowed");
		return;
	}
	struct buf ndn = {0}, key = {0}, root = {0};
	if (dn_normalize(b->dn.bv_val, b->dn.bv_len, &ndn, &key) < 0) {
		conn_send_result(c, id, LDAP_RES_BIND, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		goto out;
	}
	bool ok = false;
	if (srv->cfg.rootdn[0] &&
	    dn_normalize(srv->cfg.rootdn, strlen(srv->cfg.rootdn), &root, NULL) == 0 &&
	    root.len == ndn.len && memcmp(root.data, ndn.data, ndn.len) == 0) {
		ok = srv->cfg.rootpw[0] && password_check(srv->cfg.rootpw, strlen(srv->cfg.rootpw),
		                                          b->cred.bv_val, b->cred.bv_len);
		if (ok) {
			c->auth = AUTH_ROOT;
			buf_append(&c->bound_dn, b->dn.bv_val, b->dn.bv_len);
		}
	} else if (entry_password_ok(c->w, &key, &b->cred)) {
		ok = true;
		c->auth = AUTH_USER;
		buf_append(&c->bound_key, key.data, key.len);
		buf_append(&c->bound_dn, b->dn.bv_val, b->dn.bv_len);
	}
	log_debug("conn fd=%d bind \"%.*s\": %s", c->fd, (int)b->dn.bv_len, b->dn.bv_val,
	          ok ? "ok" : "invalid credentials");
	conn_send_result(c, id, LDAP_RES_BIND, ok ? LDAP_SUCCESS : LDAP_INVALID_CREDENTIALS, NULL,
	                 NULL);
out:
	buf_free(&ndn);
	buf_free(&key);
	buf_free(&root);
}
