/* Compare (RFC 4511 4.10): does the entry hold this attribute value? */
#include <ldap.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/schema.h"
#include "server/access.h"
#include "server/ops.h"
#include "server/reply.h"

/* Looks for want among the values of attr in e: compareTrue, compareFalse or noSuchAttribute. */
static int compare_values(const struct entry_view *e, const char *attr, size_t alen,
                          enum match_rule rule, const struct buf *want, struct buf *scratch)
{
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (!entry_find_attr(e, attr, alen, &vals, &vlen))
		return LDAP_NO_SUCH_ATTRIBUTE;
	for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &len);) {
		scratch->off = scratch->len = 0;
		if (match_normalize(rule, (const char *)v, len, scratch) == 0 &&
		    match_compare(rule, scratch->data, scratch->len, want->data, want->len) == 0)
			return LDAP_COMPARE_TRUE;
	}
	return LDAP_COMPARE_FALSE;
}

void op_compare(struct conn *c, struct ldap_request *req)
{
	struct compare_request *r = &req->u.compare;
	struct worker *w = c->w;
	const struct db *db = &w->srv->db;
	struct buf key = {0}, want = {0}, matched = {0};
	int rc = LDAP_SUCCESS;
	const char *msg = NULL, *hidden;
	const struct schema_attr *at = schema_attr_find(r->attr.bv_val, r->attr.bv_len);
	const char *attr = at ? at->name : r->attr.bv_val;
	size_t alen = at ? strlen(at->name) : r->attr.bv_len;
	enum match_rule rule = at ? at->eq : match_rule_for(r->attr.bv_val, r->attr.bv_len);
	if (!access_may_read(c)) {
		rc = LDAP_INSUFFICIENT_ACCESS;
		msg = "anonymous access is disabled (allow_anonymous)";
	} else if (dn_normalize(r->dn.bv_val, r->dn.bv_len, NULL, &key) < 0) {
		rc = LDAP_INVALID_DN_SYNTAX;
		msg = "invalid DN";
	} else if (!at && schema_loaded()) {
		rc = LDAP_UNDEFINED_TYPE;
	} else if (rule == MATCH_NONE) {
		rc = LDAP_INAPPROPRIATE_MATCHING;
	} else if (match_normalize(rule, r->value.bv_val, r->value.bv_len, &want) < 0) {
		rc = LDAP_INVALID_SYNTAX;
	} else if (!dn_key_in_subtree(key.data, key.len, db->suffix_key.data, db->suffix_key.len)) {
		rc = LDAP_NO_SUCH_OBJECT;
	} else if (mdb_txn_renew(w->txn) != 0) {
		rc = LDAP_OTHER;
	} else {
		entry_id id;
		struct entry_view e;
		int dbrc = db_dn2id(db, w->txn, key.data, key.len, &id);
		if (dbrc == 0)
			dbrc = db_get_entry(db, w->txn, id, &e);
		if (dbrc == MDB_NOTFOUND) {
			rc = LDAP_NO_SUCH_OBJECT;
			op_matched_dn(w, &key, &matched);
		} else if (dbrc) {
			rc = LDAP_OTHER;
		} else if ((hidden = access_hidden_attr(c, &e)) &&
		           match_desc(hidden, strlen(hidden), attr, alen)) {
			rc = LDAP_INSUFFICIENT_ACCESS;
		} else {
			rc = compare_values(&e, attr, alen, rule, &want, &w->scratch);
		}
		mdb_txn_reset(w->txn);
	}
	reply_done(c, req->msgid, LDAP_RES_COMPARE, rc,
	           matched.len ? (const char *)matched.data : NULL, msg);
	buf_free(&key);
	buf_free(&want);
	buf_free(&matched);
}
