/* Extended operations: WhoAmI (RFC 4532); any other is a protocolError. */
#include <ldap.h>
#include <stdio.h>
#include <string.h>

#include "protocol/response.h"
#include "server/ops.h"
#include "server/reply.h"

void op_extended(struct conn *c, struct ldap_request *req)
{
	struct extended_request *x = &req->u.extended;
	if (x->oid.bv_len != strlen(OP_EXTENSION_WHOAMI) ||
	    memcmp(x->oid.bv_val, OP_EXTENSION_WHOAMI, x->oid.bv_len)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "unsupported extended operation %.*s",
		         (int)(x->oid.bv_len > 100 ? 100 : x->oid.bv_len), x->oid.bv_val);
		reply_done(c, req->msgid, LDAP_RES_EXTENDED, LDAP_PROTOCOL_ERROR, NULL, msg);
		return;
	}
	/* authzId: "" for anonymous, else "dn:" and the bound DN as the client gave it. */
	struct buf id = {0};
	if (c->auth == AUTH_ROOT || c->auth == AUTH_USER) {
		buf_append(&id, "dn:", 3);
		buf_append(&id, c->bound_dn.data, c->bound_dn.len);
	}
	struct result_extra extra = {.has_value = true, .value = id.data, .vlen = id.len};
	reply_begin(c);
	reply_result(c, req->msgid, LDAP_RES_EXTENDED, LDAP_SUCCESS, NULL, NULL, &extra);
	buf_free(&id);
}
