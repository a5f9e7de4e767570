/*
 * Extended operations, one table (ops.h, struct op_extension): WhoAmI (RFC 4532), StartTLS
 * (RFC 4511 4.14), Password Modify (RFC 3062) on a replica with chain_passwd (op_chain.c);
 * any other is a protocolError. op_extended dispatches from the table and the root DSE's
 * supportedExtension is made from it (op_rootdse.c), so that neither can drift from the other.
 */
#include <ldap.h>
#include <stdio.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/response.h"
#include "server/ops/ops.h"
#include "server/net/conn.h"
#include "server/net/reply.h"

static bool is_oid(const struct berval *oid, const char *want)
{
	return oid->bv_len == strlen(want) && memcmp(oid->bv_val, want, oid->bv_len) == 0;
}

/*
 * StartTLS: success, and TLS begins once the answer is sent; operationsError
 * while TLS is on or other operations are outstanding, protocolError with a
 * requestValue (RFC 4511 4.14.1), unavailable when TLS is not configured.
 */
static void start_tls(struct conn *c, struct ldap_request *req)
{
	int rc = LDAP_SUCCESS;
	const char *msg = NULL;
	if (req->u.extended.has_value) {
		rc = LDAP_PROTOCOL_ERROR;
		msg = "StartTLS takes no requestValue";
	} else if (!c->w->srv->tls) {
		rc = LDAP_UNAVAILABLE;
		msg = "TLS is not configured on this server (tls_cert_file)";
	} else if (conn_tls_active(c)) {
		rc = LDAP_OPERATIONS_ERROR;
		msg = "TLS is already established";
	} else if (c->task || c->parked || conn_more_requests(c)) {
		rc = LDAP_OPERATIONS_ERROR;
		msg = "other operations are outstanding";
	}
	struct result_extra extra = {.oid = LDAP_EXOP_START_TLS};
	reply_begin(c);
	reply_result(c, req->msgid, LDAP_RES_EXTENDED, rc, NULL, msg, &extra);
	if (rc == LDAP_SUCCESS)
		conn_start_tls(c);
}

/* WhoAmI: the authzId, "" for anonymous, else "dn:" and the bound DN as the client gave it. */
static void who_am_i(struct conn *c, struct ldap_request *req)
{
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

/* StartTLS is answered without TLS too (unavailable), but listed only with it. */
static bool tls_configured(const struct server *srv)
{
	return srv->tls != NULL;
}

static bool chain_passwd(const struct server *srv)
{
	return srv->cfg.chain_passwd;
}

/* The rows in the root DSE's order. */
const struct op_extension op_extensions[] = {
    {LDAP_EXOP_WHO_AM_I, "WhoAmI", who_am_i, NULL, NULL},
    {LDAP_EXOP_START_TLS, "StartTLS", start_tls, NULL, tls_configured},
    {LDAP_EXOP_MODIFY_PASSWD, "Password Modify", op_chain_passwd, chain_passwd, NULL},
};
const size_t op_nextensions = sizeof(op_extensions) / sizeof(op_extensions[0]);
_Static_assert(sizeof(op_extensions) / sizeof(op_extensions[0]) <= OP_EXTENSIONS_MAX,
               "op_extensions has more rows than OP_EXTENSIONS_MAX");

bool op_extension_listed(const struct op_extension *x, const struct server *srv)
{
	return (!x->answered || x->answered(srv)) && (!x->listed || x->listed(srv));
}

void op_extended(struct conn *c, struct ldap_request *req)
{
	struct extended_request *x = &req->u.extended;
	const struct server *srv = c->w->srv;
	for (size_t i = 0; i < op_nextensions; i++) {
		const struct op_extension *e = &op_extensions[i];
		if (is_oid(&x->oid, e->oid) && (!e->answered || e->answered(srv))) {
			e->handler(c, req);
			return;
		}
	}
	char msg[160];
	snprintf(msg, sizeof(msg), "unsupported extended operation %.*s",
	         (int)(x->oid.bv_len > 100 ? 100 : x->oid.bv_len), x->oid.bv_val);
	reply_done(c, req->msgid, LDAP_RES_EXTENDED, LDAP_PROTOCOL_ERROR, NULL, msg);
}
