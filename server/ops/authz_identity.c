/* A SASL bind's identities (authz_identity.h): the user's DN, and proxy authorization by
 * authzTo. */
#include "server/ops/authz_identity.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/config.h"
#include "protocol/dn.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/net/conn.h"
#include "server/ops/authz_map.h"
#include "server/ops/authz_url.h"
#include "server/ops/ops_impl.h"
#include "storage/entry_opattrs.h"

int authz_user_dn(struct conn *c, const char *user, const char *realm, const char *mech,
                  struct buf *ndn, struct buf *key)
{
	/* A principal of the service's own realm is named without it (alice, as slapd names
	 * alice@EXAMPLE.COM); one of another realm keeps its realm (carol@OTHER.COM), so that
	 * no mapping makes it the local user of the same name. */
	char *name = strdup(user);
	if (!name)
		return -1;
	char *at = strrchr(name, '@');
	if (at && realm && strcasecmp(at + 1, realm) == 0)
		*at = '\0';
	struct buf authdn = {0}, to = {0};
	int rc = authz_auth_dn(name, realm, mech, &authdn) < 0
	             ? -1
	             : authz_map(ops_shared(c->w->srv)->authz, &authdn, &to);
	if (rc == AUTHZ_TO_URL)
		rc = authz_url_search(c, (const char *)to.data, ndn, key); /* 0: none found */
	else if (rc == AUTHZ_TO_DN && dn_normalize((const char *)to.data, to.len, ndn, key) < 0) {
		log_info("authz_regexp: made \"%s\" of \"%.*s\", not a DN: the bind fails",
		         (const char *)to.data, (int)authdn.len, (const char *)authdn.data);
		rc = -1;
	}
	if (rc == AUTHZ_UNMAPPED &&
	    dn_normalize((const char *)authdn.data, authdn.len, ndn, key) < 0)
		rc = -1;
	free(name);
	buf_free(&authdn);
	buf_free(&to);
	return rc < 0 ? -1 : 0;
}

/* The DN and key an authorization identity ("dn:DN", "u:USER") names, into ndn and key:
 * 0, or -1 (malformed, or no DN). The GSSAPI plugin hands it on with "@REALM" added
 * ("dn:uid=bob,...,dc=com@EXAMPLE.COM", seen with Cyrus SASL 2.1.28): the service's realm
 * at its end is not the client's. */
static int identity_dn(struct conn *c, const char *id, const char *realm, const char *mech,
                       struct buf *ndn, struct buf *key)
{
	size_t len = strlen(id), rlen = realm ? strlen(realm) : 0;
	if (rlen && len > rlen + 1 && id[len - rlen - 1] == '@' &&
	    strcasecmp(id + len - rlen, realm) == 0)
		len -= rlen + 1;
	int rc = -1;
	char *u = NULL;
	if (strncasecmp(id, "dn:", 3) == 0)
		rc = dn_normalize(id + 3, len - 3, ndn, key);
	else if (strncasecmp(id, "u:", 2) == 0 && len > 2 && (u = strndup(id + 2, len - 2)))
		rc = authz_user_dn(c, u, realm, mech, ndn, key);
	free(u);
	return rc;
}

/* Whether an authzTo value rule[0..len) allows the identity (its normal form tndn and key
 * tkey). */
static bool rule_allows(struct conn *c, const char *rule, const struct buf *tndn,
                        const struct buf *tkey, const char *realm, const char *mech)
{
	static const struct {
		const char *prefix;
		int scope; /* 0 exact, 1 onelevel, 2 children, 3 subtree */
	} forms[] = {{"dn:", 0},          {"dn.exact:", 0},    {"dn.base:", 0},
	             {"dn.onelevel:", 1}, {"dn.children:", 2}, {"dn.subtree:", 3}};
	struct buf n = {0}, k = {0};
	bool ok = false;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t pl = strlen(forms[i].prefix);
		if (strncasecmp(rule, forms[i].prefix, pl) != 0)
			continue;
		if (dn_normalize(rule + pl, strlen(rule + pl), NULL, &k) == 0) {
			bool in = dn_key_in_subtree(tkey->data, tkey->len, k.data, k.len);
			int s = forms[i].scope;
			ok = s == 0   ? in && tkey->len == k.len
			     : s == 1 ? in && tkey->len > k.len &&
			                    dn_key_parent_len(tkey->data, tkey->len) == k.len
			     : s == 2 ? in && tkey->len > k.len
			              : in;
		}
		buf_free(&k);
		return ok;
	}
	if (strncasecmp(rule, "dn.regex:", 9) == 0) {
		regex_t re;
		char *subject = strndup((const char *)tndn->data, tndn->len);
		if (subject && regcomp(&re, rule + 9, REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0) {
			ok = regexec(&re, subject, 0, NULL, 0) == 0;
			regfree(&re);
		}
		free(subject);
	} else if (strncasecmp(rule, "u:", 2) == 0 &&
	           authz_user_dn(c, rule + 2, realm, mech, &n, &k) == 0) {
		ok = k.len == tkey->len && memcmp(k.data, tkey->data, k.len) == 0;
	}
	buf_free(&n);
	buf_free(&k);
	return ok;
}

/* The authzTo values of the entry at key, each NUL-terminated, into vals (the caller's,
 * one after another). 0, or -1 (no such entry, a read error). */
static int authz_to_values(struct conn *c, const struct buf *key, struct buf *vals)
{
	if (db_gen_txn_begin(c->w) != 0)
		return -1;
	entry_id id;
	struct entry_view e;
	const unsigned char *v, *p;
	size_t vlen, len;
	/* authzTo is operational: kept beside the record (storage/entry_opattrs.h) */
	struct db_worker *dw = db_worker(c->w);
	int rc = db_dn2id(&dw->gen->db, dw->txn, key->data, key->len, &id);
	if (rc == 0)
		rc = entry_opattrs_get(&dw->gen->db, dw->txn, id, &e);
	if (rc == DB_NOTFOUND)
		rc = 0; /* no such entry, or none kept: no rule */
	else if (rc == 0 && entry_find_attr(&e, "authzTo", 7, &v, &vlen))
		for (p = v; rc == 0 && entry_next_value(&p, v + vlen, &v, &len);)
			rc = buf_append(vals, v, len) < 0 || buf_append(vals, "", 1) < 0 ? -1 : 0;
	if (rc > 0)
		db_gen_txn_failed(c->w);
	db_gen_txn_end(c->w);
	return rc ? -1 : 0;
}

bool authz_proxy_allowed(struct conn *c, const struct buf *authc_key, const char *authzid,
                         const char *realm, const char *mech, struct buf *ndn, struct buf *key)
{
	if (c->w->srv->cfg.authz_policy != AUTHZ_POLICY_TO)
		return false;
	struct buf tndn = {0}, tkey = {0}, vals = {0};
	bool ok = false;
	if (identity_dn(c, authzid, realm, mech, &tndn, &tkey) == 0 &&
	    authz_to_values(c, authc_key, &vals) == 0)
		for (size_t at = 0; !ok && at < vals.len; at += strlen((char *)vals.data + at) + 1)
			ok =
			    rule_allows(c, (const char *)vals.data + at, &tndn, &tkey, realm, mech);
	if (ok &&
	    (buf_append(ndn, tndn.data, tndn.len) < 0 || buf_append(key, tkey.data, tkey.len) < 0))
		ok = false;
	buf_free(&tndn);
	buf_free(&tkey);
	buf_free(&vals);
	return ok;
}
