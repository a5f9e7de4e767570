/* The operation table: request tag -> handler, and the small operations. */
#include "server/ops/ops.h"
#include "server/net/conn.h"
#include "server/net/reply.h"

#include <ldap.h>
#include <stdio.h>
#include <string.h>

#include "server/access_log.h"
#include "server/log.h"

static void op_unbind(struct conn *c, struct ldap_request *req)
{
	(void)req;
	conn_close_after(c, "client unbound");
}

/* Abandon: no response; the running or parked operation with that ID ends. */
static void op_abandon(struct conn *c, struct ldap_request *req)
{
	conn_task_cancel(c, req->u.abandon_msgid);
}

/* Add, modify, delete, modDN: minidir is read-only; a replica with updateref refers
 * them to its provider (as slapd's updateref). With chain_passwd, a modify of the bound
 * user's own userPassword is forwarded instead (op_chain.c). */
static void op_read_only(struct conn *c, struct ldap_request *req)
{
	if (req->op == LDAP_REQ_MODIFY && c->w->srv->cfg.chain_passwd && op_chain_modify(c, req))
		return;
	unsigned char tag = req->op == LDAP_REQ_ADD      ? LDAP_RES_ADD
	                    : req->op == LDAP_REQ_DELETE ? LDAP_RES_DELETE
	                    : req->op == LDAP_REQ_MODRDN ? LDAP_RES_MODRDN
	                                                 : LDAP_RES_MODIFY;
	const char *ref = c->w->srv->cfg.updateref;
	if (ref[0]) {
		struct result_extra x = {.referral = ref};
		reply_begin(c);
		reply_result(c, req->msgid, tag, LDAP_REFERRAL, NULL,
		             "minidir is a read-only replica: write to the provider", &x);
		return;
	}
	reply_done(c, req->msgid, tag, LDAP_UNWILLING_TO_PERFORM, NULL,
	           "minidir is a read-only server");
}

struct op_entry {
	ber_tag_t tag;
	enum stat_op stat;
	void (*handler)(struct conn *c, struct ldap_request *req);
};

static const struct op_entry op_table[] = {
    {LDAP_REQ_BIND, STAT_OP_BIND, op_bind},
    {LDAP_REQ_SEARCH, STAT_OP_SEARCH, op_search},
    {LDAP_REQ_UNBIND, STAT_OP_UNBIND, op_unbind},
    {LDAP_REQ_ABANDON, STAT_OP_ABANDON, op_abandon},
    {LDAP_REQ_ADD, STAT_OP_ADD, op_read_only},
    {LDAP_REQ_MODIFY, STAT_OP_MODIFY, op_read_only},
    {LDAP_REQ_DELETE, STAT_OP_DELETE, op_read_only},
    {LDAP_REQ_MODRDN, STAT_OP_MODRDN, op_read_only},
    {LDAP_REQ_COMPARE, STAT_OP_COMPARE, op_compare},
    {LDAP_REQ_EXTENDED, STAT_OP_EXTENDED, op_extended},
};

/*
 * require_tls: without TLS (ldapi:// is local, exempt), binds (but an anonymous one, which proves
 * and reveals nothing: ldapsearch -x sends it before it reads the root DSE), compares and searches
 * other than of the root DSE are answered confidentialityRequired (13); StartTLS
 * stays reachable.
 */
static bool refused_without_tls(struct conn *c, struct ldap_request *req)
{
	if (c->tls || c->local || !server_require_tls(c->w->srv))
		return false;
	bool rootdse = req->op == LDAP_REQ_SEARCH && req->u.search.base.bv_len == 0 &&
	               req->u.search.scope == LDAP_SCOPE_BASE;
	const struct bind_request *b = &req->u.bind;
	bool anonymous =
	    req->op == LDAP_REQ_BIND && b->simple && b->dn.bv_len == 0 && b->cred.bv_len == 0;
	if ((req->op != LDAP_REQ_BIND && req->op != LDAP_REQ_SEARCH &&
	     req->op != LDAP_REQ_COMPARE) ||
	    rootdse || anonymous)
		return false;
	reply_done(c, req->msgid, ops_response_tag(req->op), LDAP_CONFIDENTIALITY_REQUIRED, NULL,
	           "TLS is required (require_tls): use ldaps:// or StartTLS");
	return true;
}

/*
 * A session bound with a password that must be changed first: what the provider's policy
 * lets through goes on (binds, unbind, abandon, a modify, and extended operations: under
 * slapd's ppolicy every one, its restriction being on the backend's operations; under
 * 389-ds only the password's change and StartTLS); anything else gets c->must_change
 * (insufficientAccessRights as slapd answers, unwillingToPerform as 389-ds does).
 */
static bool refused_until_changed(struct conn *c, struct ldap_request *req)
{
	if (!c->must_change)
		return false;
	const struct berval *oid = &req->u.extended.oid;
	switch (req->op) {
	case LDAP_REQ_BIND:
	case LDAP_REQ_UNBIND:
	case LDAP_REQ_ABANDON:
	case LDAP_REQ_MODIFY:
		return false;
	case LDAP_REQ_EXTENDED:
		if (c->must_change == LDAP_INSUFFICIENT_ACCESS ||
		    (oid->bv_len == strlen(LDAP_EXOP_MODIFY_PASSWD) &&
		     memcmp(oid->bv_val, LDAP_EXOP_MODIFY_PASSWD, oid->bv_len) == 0) ||
		    (oid->bv_len == strlen(LDAP_EXOP_START_TLS) &&
		     memcmp(oid->bv_val, LDAP_EXOP_START_TLS, oid->bv_len) == 0))
			return false;
		break;
	}
	reply_done(c, req->msgid, ops_response_tag(req->op), c->must_change, NULL,
	           "the password must be changed first: operations are restricted to bind, "
	           "unbind, abandon, StartTLS and modify password");
	return true;
}

void ops_dispatch(struct conn *c, struct ldap_request *req)
{
	if (access_log_on(c->w->srv))
		op_trace(c, req);
	/* The controls the operation applies: op_controls.c's table. */
	if (ops_refuse_critical(c, req, op_apply_of(req->op)))
		return;
	if (refused_without_tls(c, req) || refused_until_changed(c, req))
		return;
	for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++) {
		if (op_table[i].tag != req->op)
			continue;
		enum stat_op stat = op_table[i].stat;
		STAT_ADD(c->w->stats.ops[stat], 1);
		log_debug("conn fd=%d op=0x%lx msgid=%d", c->fd, (unsigned long)req->op,
		          (int)req->msgid);
		/* Counted as completed when its final response is queued (conn_output_queued). */
		conn_op_begin(c, stat);
		op_table[i].handler(c, req);
		if (stat == STAT_OP_UNBIND || stat == STAT_OP_ABANDON) {
			STAT_ADD(c->w->stats.ops_done[stat], 1); /* no response: done now */
			conn_op_done(c);
		}
		return;
	}
	log_info("conn fd=%d from %s: unknown operation tag 0x%lx; disconnecting", c->fd, c->peer,
	         (unsigned long)req->op);
	conn_close_after(c, NULL);
}
