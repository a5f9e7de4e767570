/* Bind: anonymous, and simple binds as the rootdn or as an entry with userPassword. */
#include <ldap.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/dn.h"
#include "server/access.h"
#include "server/clock.h"
#include "server/db_gen.h"
#include "server/log.h"
#include "server/ops.h"
#include "server/reply.h"
#include "server/password.h"
#include "server/tls.h"

/*
 * Checks pw against the userPassword values of the entry at key. Returns true on
 * a match; *checked tells whether any value was checked (false: no such entry,
 * or no userPassword).
 */
static bool entry_password_ok(struct conn *c, const struct buf *key, const struct berval *pw,
                              bool *checked)
{
	struct worker *w = c->w;
	struct db *db = &w->gen->db;
	bool ok = false;
	*checked = false;
	if (db_gen_txn_begin(w) != 0)
		return false;
	entry_id id;
	struct entry_view e;
	const unsigned char *vals, *v;
	size_t vlen, len;
	/* The rules must give an anonymous client (who binds) auth on userPassword. */
	struct access_op aop;
	struct access_entry ae;
	access_op_init(&aop, c);
	if (db_dn2id(db, w->txn, key->data, key->len, &id) == 0 &&
	    db_get_entry(db, w->txn, id, &e) == 0 &&
	    (access_entry_init(&ae, &aop, id, &e),
	     access_attr_level(&ae, "userPassword", 12) >= ACCESS_AUTH) &&
	    entry_find_attr(&e, "userPassword", 12, &vals, &vlen)) {
		for (const unsigned char *r = vals;
		     !ok && entry_next_value(&r, vals + vlen, &v, &len);) {
			ok = password_check((const char *)v, len, pw->bv_val, pw->bv_len);
			*checked = true;
		}
	}
	db_gen_txn_end(w);
	access_op_free(&aop);
	return ok;
}

/* Password classes seen in the directory, one sample value each. */
#define DECOY_CLASSES 32
struct decoy_scan {
	struct {
		char cls[64];
		char *sample;
		size_t len;
	} c[DECOY_CLASSES];
	int n;
};

static void decoy_add(struct decoy_scan *s, const char *v, size_t len)
{
	char cls[64];
	password_cost_class(v, len, cls, sizeof(cls));
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->c[i].cls, cls) == 0)
			return;
	if (s->n == DECOY_CLASSES || !(s->c[s->n].sample = strndup(v, len)))
		return;
	memcpy(s->c[s->n].cls, cls, sizeof(cls));
	s->c[s->n++].len = len;
}

static int decoy_scan_entry(MDB_txn *txn, entry_id id, const struct entry_view *e, void *arg)
{
	(void)txn;
	(void)id;
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (entry_find_attr(e, "userPassword", 12, &vals, &vlen))
		for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &len);)
			decoy_add(arg, (const char *)v, len);
	return 0;
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

int op_bind_prepare(struct server *srv, struct db_gen *g)
{
	struct decoy_scan s = {.n = 0};
	if (srv->cfg.rootpw[0])
		decoy_add(&s, srv->cfg.rootpw, strlen(srv->cfg.rootpw));
	int rc = db_foreach_entry(&g->db, decoy_scan_entry, &s);
	if (rc) {
		log_error("%s: reading passwords: %s", srv->cfg.database, mdb_strerror(rc));
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
	if (best < 0) {
		/* No password anywhere: every simple bind but the anonymous one fails. */
		static const char none[] = "{SSHA}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
		g->bind_decoy = strdup(none);
		g->bind_decoy_len = sizeof(none) - 1;
	} else {
		g->bind_decoy = s.c[best].sample;
		g->bind_decoy_len = s.c[best].len;
		s.c[best].sample = NULL;
		log_info("bind: %d password schemes in use; binds to unknown DNs and to entries "
		         "without userPassword check a %s hash (%.0f us) so that timing does not "
		         "tell which DNs exist",
		         s.n, s.c[best].cls[0] ? s.c[best].cls : "plaintext", (double)best_t / 1e3);
	}
	for (int i = 0; i < s.n; i++)
		free(s.c[i].sample);
	return g->bind_decoy ? 0 : -1;
}

/* True if ndn (a normal form, dn_normalize's) is the configured rootdn. */
static bool is_rootdn(const struct server *srv, const struct buf *ndn)
{
	struct buf root = {0};
	bool same = srv->cfg.rootdn[0] &&
	            dn_normalize(srv->cfg.rootdn, strlen(srv->cfg.rootdn), &root, NULL) == 0 &&
	            root.len == ndn->len && memcmp(root.data, ndn->data, ndn->len) == 0;
	buf_free(&root);
	return same;
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
	bool is_root = is_rootdn(srv, &ndn);
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

void op_bind(struct conn *c, struct ldap_request *req)
{
	struct bind_request *b = &req->u.bind;
	struct server *srv = c->w->srv;
	int32_t id = req->msgid;
	conn_clear_identity(c); /* a bind, even a failed one, drops the old identity */
	if (b->version != LDAP_VERSION3) {
		reply_done(c, id, LDAP_RES_BIND, LDAP_PROTOCOL_ERROR, NULL,
		           "only LDAP version 3 is supported");
		return;
	}
	if (!b->simple) {
		if (b->mech.bv_len == 8 && strncasecmp(b->mech.bv_val, "EXTERNAL", 8) == 0)
			sasl_external(c, id);
		else
			reply_done(c, id, LDAP_RES_BIND, LDAP_AUTH_METHOD_NOT_SUPPORTED, NULL,
			           "the only SASL mechanism is EXTERNAL (ldapi:// or TLS client "
			           "certificates)");
		return;
	}
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
	bool ok = false;
	if (is_rootdn(srv, &ndn)) {
		ok = srv->cfg.rootpw[0] && password_check(srv->cfg.rootpw, strlen(srv->cfg.rootpw),
		                                          b->cred.bv_val, b->cred.bv_len);
		ok =
		    ok && conn_set_identity(c, AUTH_ROOT, b->dn.bv_val, b->dn.bv_len, NULL, 0) == 0;
	} else {
		bool checked;
		ok = entry_password_ok(c, &key, &b->cred, &checked);
		if (!checked) /* the same work as for a real user (see op_bind_prepare) */
			password_check(c->w->gen->bind_decoy, c->w->gen->bind_decoy_len,
			               b->cred.bv_val, b->cred.bv_len);
		ok = ok && conn_set_identity(c, AUTH_USER, b->dn.bv_val, b->dn.bv_len, key.data,
		                             key.len) == 0;
	}
	log_debug("conn fd=%d bind \"%.*s\": %s", c->fd, (int)b->dn.bv_len, b->dn.bv_val,
	          ok ? "ok" : "invalid credentials");
	reply_done(c, id, LDAP_RES_BIND, ok ? LDAP_SUCCESS : LDAP_INVALID_CREDENTIALS, NULL, NULL);
out:
	buf_free(&ndn);
	buf_free(&key);
}
