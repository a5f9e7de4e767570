/*
 * Critical controls an operation does not apply (RFC 4511 4.1.11): answered
 * unavailableCriticalExtension (12) before the operation runs (ops.h, ops_refuse_critical).
 * Which controls an operation applies is op_controls.c's table. Called by the dispatch
 * (ops.c) and by the searches that apply fewer controls than a search of the database
 * (search_builtin.c, op_search.c's cn=monitor).
 */
#include <ldap.h>
#include <stdio.h>

#include "protocol/request.h"
#include "protocol/response.h"
#include "server/net/reply.h"
#include "server/ops/ops.h"

/* The response tag of a request that has one. */
unsigned char ops_response_tag(ber_tag_t op)
{
	switch (op) {
	case LDAP_REQ_BIND:
		return LDAP_RES_BIND;
	case LDAP_REQ_SEARCH:
		return LDAP_RES_SEARCH_RESULT;
	case LDAP_REQ_MODIFY:
		return LDAP_RES_MODIFY;
	case LDAP_REQ_ADD:
		return LDAP_RES_ADD;
	case LDAP_REQ_DELETE:
		return LDAP_RES_DELETE;
	case LDAP_REQ_MODRDN:
		return LDAP_RES_MODRDN;
	case LDAP_REQ_COMPARE:
		return LDAP_RES_COMPARE;
	case LDAP_REQ_EXTENDED:
		return LDAP_RES_EXTENDED;
	}
	return 0;
}

bool ops_refuse_critical(struct conn *c, const struct ldap_request *req, unsigned apply)
{
	if (!req->critical_control)
		return false;
	const char *applied[OP_CONTROLS_MAX];
	size_t n = op_controls_applied(apply, applied);
	unsigned char tag = ops_response_tag(req->op);
	const struct request_control *ctl = request_unapplied_critical(req, applied, n);
	if (!ctl || !tag) /* Unbind and Abandon have no result to refuse with (4.1.11) */
		return false;
	char msg[160];
	snprintf(msg, sizeof(msg), "critical control %.*s is not supported with this operation",
	         (int)(ctl->oid.bv_len > 100 ? 100 : ctl->oid.bv_len), ctl->oid.bv_val);
	reply_done(c, req->msgid, tag, LDAP_UNAVAILABLE_CRITICAL_EXTENSION, NULL, msg);
	return true;
}
