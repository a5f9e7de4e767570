/*
 * Searches of the entries the server builds rather than stores: the root DSE
 * (base "", scope base) and the subschema subentry cn=Subschema. One entry at
 * most, tested against the filter like any other.
 */
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"
#include "protocol/response.h"
#include "server/replica/replica.h"
#include "server/net/conn.h"
#include "server/net/reply.h"
#include "server/ops/search_checks.h"
#include "server/ops/search_names.h"

void search_builtin(struct conn *c, struct ldap_request *req, const struct buf *record)
{
	struct search_request *r = &req->u.search;
	struct entry_view e = {0};
	struct berval names[REQUEST_MAX_ATTRS];
	size_t cap = search_names_space(r);
	char *space = malloc(cap);
	if (!space) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_OTHER, NULL,
		           "out of memory");
		return;
	}
	search_names_canonical(r, names, space, cap);
	/* An entry of its own: the assertion is tested on it. A page of one entry is the whole
	 * answer, nothing here sorts (RFC 4511 4.1.11, as slapd); Matched Values filters its
	 * values as an entry's (cn=Subschema's attributeTypes by
	 * objectIdentifierFirstComponentMatch, as slapd does): op_controls.c's OP_APPLY_BUILTIN. */
	if (ops_refuse_critical(c, req, OP_APPLY_BUILTIN)) {
		free(space);
		return;
	}
	struct filter *values = NULL; /* in req->mem, as long as the request */
	if (search_matched_values(req, req->mem, &c->w->scratch, &values) < 0) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_PROTOCOL_ERROR, NULL,
		           "malformed matched values control");
		free(space);
		return;
	}
	bool parsed = entry_parse(record->data, record->len, &e) == 0;
	struct filter_ctx ctx = {.dn = e.dn, .dnlen = e.dnlen, .scratch = &c->w->scratch};
	int asserted = parsed ? search_assertion_on(req, &e, &ctx) : LDAP_OTHER;
	if (asserted != LDAP_SUCCESS) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, asserted, NULL,
		           asserted == LDAP_PROTOCOL_ERROR ? "malformed assertion control" : NULL);
		free(space);
		return;
	}
	reply_begin(c);
	if (r->scope != LDAP_SCOPE_ONELEVEL && r->scope != LDAP_SCOPE_SUBORDINATE &&
	    filter_eval(r->filter, e.attrs, e.attrslen, &c->w->scratch) == FILTER_TRUE) {
		struct attr_select sel;
		attr_select_init(&sel, names, r->nattrs, r->typesonly);
		sel.check_operational = true;
		sel.values = values;
		/* A replica's root DSE: the provider's contextCSN, as of the last commit. */
		struct replica_status st;
		struct buf extra = {0};
		if (record == &ops_shared(c->w->srv)->rootdse && replica_status(c->w->srv, &st) &&
		    st.context_csn[0] && attr_select_wants(&sel, "contextCSN")) {
			struct berval v = {strlen(st.context_csn), st.context_csn};
			response_put_attr(&extra, "contextCSN", &v, 1, r->typesonly);
		}
		reply_entry(c, req->msgid, &ENTRY_STORED(&e), &sel, extra.data, extra.len);
		buf_free(&extra);
	}
	/* The subschema subentry is a leaf: nothing lies below it. */
	int rc = record == &ops_shared(c->w->srv)->subschema &&
	                 (r->scope == LDAP_SCOPE_ONELEVEL || r->scope == LDAP_SCOPE_SUBORDINATE)
	             ? LDAP_NO_SUCH_OBJECT
	             : LDAP_SUCCESS;
	reply_result(c, req->msgid, LDAP_RES_SEARCH_RESULT, rc, NULL, NULL, NULL);
	free(space);
}

bool search_builtin_is_subschema(const struct buf *key)
{
	static const char skey[] = "cn=subschema"; /* its reversed key, NUL included */
	return key->len == sizeof(skey) && memcmp(key->data, skey, sizeof(skey)) == 0;
}
