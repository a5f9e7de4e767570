/* Compare (RFC 4511 4.10): does the entry hold this attribute value? With the assertion
 * control (RFC 4528), only if its filter holds on the entry. */
#include <ldap.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "server/ops/access.h"
#include "server/db/db.h"
#include "server/ops/ops.h"
#include "server/net/conn.h"
#include "server/net/reply.h"
#include "server/ops/search_checks.h"

/*
 * Whether entry id (viewed as e) holds the request's value: compareTrue, compareFalse, or
 * noSuchAttribute when it holds neither the type nor a subtype. Evaluated as the filters
 * present (attr=*) and eq (attr=value), so that subclasses, subtypes and computed
 * attributes (memberOf) count as they do in a search; subtypes the client may not compare
 * do not. Inside w's read transaction.
 */
static int compare_entry(struct conn *c, entry_id id, const struct entry_view *e,
                         const struct access_entry *ae, const struct filter *present,
                         const struct filter *eq)
{
	struct worker *w = c->w;
	struct filter_ctx ctx = {.dn = e->dn,
	                         .dnlen = e->dnlen,
	                         .gate = access_compare_gate(ae),
	                         .scratch = &w->scratch};
	ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
	if (computed_attrs_in_filter(eq) &&
	    computed_attrs_all(&ops_worker(w)->extra, &db_worker(w)->gen->db, db_worker(w)->txn, id,
	                       e, ae->op) < 0)
		return LDAP_OTHER;
	ctx.extra = ops_worker(w)->extra.data;
	ctx.extra_len = ops_worker(w)->extra.len;
	if (filter_eval_ctx(present, e->attrs, e->attrslen, &ctx) != FILTER_TRUE)
		return LDAP_NO_SUCH_ATTRIBUTE;
	return filter_eval_ctx(eq, e->attrs, e->attrslen, &ctx) == FILTER_TRUE ? LDAP_COMPARE_TRUE
	                                                                       : LDAP_COMPARE_FALSE;
}

void op_compare(struct conn *c, struct ldap_request *req)
{
	struct compare_request *r = &req->u.compare;
	struct worker *w = c->w;
	const struct db *db = &db_worker(w)->gen->db;
	struct buf key = {0}, matched = {0};
	int rc = LDAP_SUCCESS;
	const char *msg = NULL;
	const struct schema_attr *at = schema_attr_find(r->attr.bv_val, r->attr.bv_len);
	const char *attr = at ? at->name : r->attr.bv_val;
	size_t alen = at ? strlen(at->name) : r->attr.bv_len;
	/* The value is normalized once, here: eq's rule and validity answer the checks below. */
	struct filter *present = filter_make(FILTER_PRESENT, &r->attr, NULL, req->mem, &w->scratch);
	struct filter *eq = filter_make(FILTER_EQ, &r->attr, &r->value, req->mem, &w->scratch);
	if (!access_may_read(c)) {
		rc = LDAP_INSUFFICIENT_ACCESS;
		msg = "anonymous access is disabled (allow_anonymous)";
	} else if (dn_normalize(r->dn.bv_val, r->dn.bv_len, NULL, &key) < 0) {
		rc = LDAP_INVALID_DN_SYNTAX;
		msg = "invalid DN";
	} else if (!at && schema_loaded()) {
		rc = LDAP_UNDEFINED_TYPE;
	} else if (!present || !eq) {
		rc = LDAP_OTHER;
	} else if (eq->rule == MATCH_NONE) {
		rc = LDAP_INAPPROPRIATE_MATCHING;
	} else if (eq->invalid) {
		/* a value the rule cannot take ("uidNumber:x") */
		rc = LDAP_INVALID_SYNTAX;
	} else if (!dn_key_in_subtree(key.data, key.len, db->suffix_key.data, db->suffix_key.len)) {
		rc = LDAP_NO_SUCH_OBJECT;
	} else if (db_gen_txn_begin(w) != 0) {
		rc = LDAP_OTHER;
	} else {
		entry_id id;
		struct entry_view e;
		struct access_op aop;
		access_op_init(&aop, c);
		int dbrc = db_dn2id(db, db_worker(w)->txn, key.data, key.len, &id);
		if (dbrc == 0)
			dbrc = db_get_entry(db, db_worker(w)->txn, id, &e);
		if (dbrc == DB_NOTFOUND) {
			rc = LDAP_NO_SUCH_OBJECT;
		} else if (dbrc) {
			rc = LDAP_OTHER;
			db_gen_txn_failed(w);
		} else {
			struct access_entry ae;
			access_entry_init(&ae, &aop, id, &e);
			/* The assertion control (RFC 4528) first, as slapd: compare only if it
			 * holds. */
			int asserted = search_assertion(req, &aop, w, id);
			if (asserted != LDAP_SUCCESS)
				rc = asserted;
			else if (access_attr_level(&ae, attr, alen) >= ACCESS_COMPARE)
				rc = compare_entry(c, id, &e, &ae, present, eq);
			else
				rc = LDAP_INSUFFICIENT_ACCESS;
			if (rc == LDAP_PROTOCOL_ERROR)
				msg = "malformed assertion control";
			/* An error about an entry the client may not know of: it does not exist. */
			else if (rc != LDAP_COMPARE_TRUE && rc != LDAP_COMPARE_FALSE &&
			         ae.entry < ACCESS_DISCLOSE)
				rc = LDAP_NO_SUCH_OBJECT;
		}
		/* A missing entry, or one the client may not know of: the same answer. */
		if (rc == LDAP_NO_SUCH_OBJECT)
			op_matched_dn(w, &aop, &key, &matched);
		access_op_free(&aop);
		db_gen_txn_end(w);
	}
	reply_done(c, req->msgid, LDAP_RES_COMPARE, rc,
	           matched.len ? (const char *)matched.data : NULL, msg);
	buf_free(&key);
	buf_free(&matched);
}
