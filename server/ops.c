/* The operation table: request tag -> handler, and the small operations. */
#include "server/ops.h"

#include <ldap.h>

#include "server/log.h"

static void op_unbind(struct conn *c, struct ldap_request *req)
{
	(void)req;
	c->closing = true;
}

static void op_abandon(struct conn *c, struct ldap_request *req)
{
	/* Requests are answered in order, so only a search still running can be abandoned;
	 * one can't be running while this request is read, hence nothing to do but count. */
	(void)c;
	(void)req;
}

/* Add, modify, delete, modDN: minidir is read-only. */
static void op_read_only(struct conn *c, struct ldap_request *req)
{
	unsigned char tag = req->op == LDAP_REQ_ADD      ? LDAP_RES_ADD
	                    : req->op == LDAP_REQ_DELETE ? LDAP_RES_DELETE
	                    : req->op == LDAP_REQ_MODRDN ? LDAP_RES_MODRDN
	                                                 : LDAP_RES_MODIFY;
	conn_send_result(c, req->msgid, tag, LDAP_UNWILLING_TO_PERFORM, NULL,
	                 "minidir is a read-only server");
}

static void op_compare(struct conn *c, struct ldap_request *req)
{
	conn_send_result(c, req->msgid, LDAP_RES_COMPARE, LDAP_UNWILLING_TO_PERFORM, NULL,
	                 "compare is not supported yet");
}

static void op_extended(struct conn *c, struct ldap_request *req)
{
	conn_send_result(c, req->msgid, LDAP_RES_EXTENDED, LDAP_PROTOCOL_ERROR, NULL,
	                 "unsupported extended operation");
}

struct op_entry {
	ber_tag_t tag;
	enum stat_op stat;
	void (*handler)(struct conn *c, struct ldap_request *req);
};

static const struct op_entry op_table[] = {
    {LDAP_REQ_BIND, STAT_OP_BIND, op_bind},         {LDAP_REQ_SEARCH, STAT_OP_SEARCH, op_search},
    {LDAP_REQ_UNBIND, STAT_OP_UNBIND, op_unbind},   {LDAP_REQ_ABANDON, STAT_OP_ABANDON, op_abandon},
    {LDAP_REQ_ADD, STAT_OP_OTHER, op_read_only},    {LDAP_REQ_MODIFY, STAT_OP_OTHER, op_read_only},
    {LDAP_REQ_DELETE, STAT_OP_OTHER, op_read_only}, {LDAP_REQ_MODRDN, STAT_OP_OTHER, op_read_only},
    {LDAP_REQ_COMPARE, STAT_OP_OTHER, op_compare},  {LDAP_REQ_EXTENDED, STAT_OP_OTHER, op_extended},
};

void ops_dispatch(struct conn *c, struct ldap_request *req)
{
	for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++) {
		if (op_table[i].tag != req->op)
			continue;
		STAT_ADD(c->w->stats.ops[op_table[i].stat], 1);
		log_debug("conn fd=%d op=0x%lx msgid=%d", c->fd, (unsigned long)req->op,
		          (int)req->msgid);
		op_table[i].handler(c, req);
		return;
	}
	log_info("conn fd=%d from %s: unknown operation tag 0x%lx; disconnecting", c->fd, c->peer,
	         (unsigned long)req->op);
	c->closing = true;
}
