#include "protocol/request.h"

#include "protocol/tlv.h"

#include <ldap.h>
#include <stdint.h>
#include <string.h>

static int get_string(BerElement *ber, struct berval *bv)
{
	return ber_get_stringbv(ber, bv, LBER_BV_NOTERM) == LBER_DEFAULT ? -1 : 0;
}

static int decode_bind(BerElement *ber, struct bind_request *b, const char **why)
{
	ber_len_t len;
	ber_int_t version;
	*why = "malformed BindRequest";
	if (ber_get_int(ber, &version) == LBER_DEFAULT || get_string(ber, &b->dn) < 0)
		return -1;
	b->version = version;
	ber_tag_t t = ber_peek_tag(ber, &len);
	if (t == LDAP_AUTH_SIMPLE) {
		b->simple = true;
		return get_string(ber, &b->cred);
	}
	if (t == LDAP_AUTH_SASL) {
		b->simple = false;
		if (ber_skip_tag(ber, &len) == LBER_DEFAULT || get_string(ber, &b->mech) < 0)
			return -1;
		return 0;
	}
	*why = "unknown BindRequest authentication choice";
	return -1;
}

static int decode_search(BerElement *ber, struct search_request *s, const char **why)
{
	ber_len_t len;
	ber_int_t scope, deref, sizelimit, timelimit, typesonly;
	char *last;
	*why = "malformed SearchRequest";
	if (get_string(ber, &s->base) < 0 || ber_get_enum(ber, &scope) == LBER_DEFAULT ||
	    ber_get_enum(ber, &deref) == LBER_DEFAULT ||
	    ber_get_int(ber, &sizelimit) == LBER_DEFAULT ||
	    ber_get_int(ber, &timelimit) == LBER_DEFAULT ||
	    ber_get_boolean(ber, &typesonly) == LBER_DEFAULT)
		return -1;
	if (scope < LDAP_SCOPE_BASE || scope > LDAP_SCOPE_SUBORDINATE) {
		*why = "unknown search scope";
		return -1;
	}
	if (deref < LDAP_DEREF_NEVER || deref > LDAP_DEREF_ALWAYS || sizelimit < 0 || timelimit < 0)
		return -1;
	s->scope = scope;
	s->deref = deref;
	s->sizelimit = sizelimit;
	s->timelimit = timelimit;
	s->typesonly = typesonly != 0;
	s->filter = filter_decode(ber);
	if (!s->filter) {
		*why = "malformed or too deeply nested search filter";
		return -1;
	}
	s->nattrs = 0;
	if (ber_peek_tag(ber, &len) != LBER_SEQUENCE) {
		*why = "malformed SearchRequest attribute list";
		return -1;
	}
	for (ber_tag_t t = ber_first_element(ber, &len, &last); t != LBER_DEFAULT;
	     t = ber_next_element(ber, &len, last)) {
		if (s->nattrs == REQUEST_MAX_ATTRS) {
			*why = "too many attributes requested";
			return -1;
		}
		if (get_string(ber, &s->attrs[s->nattrs++]) < 0)
			return -1;
	}
	return 0;
}

/* A primitive INTEGER's content bytes (AbandonRequest is [APPLICATION 16] INTEGER). */
static int decode_int(const struct berval *v, ber_int_t *out)
{
	if (v->bv_len < 1 || v->bv_len > 4)
		return -1;
	const unsigned char *p = (const unsigned char *)v->bv_val;
	uint32_t u = p[0] & 0x80 ? UINT32_MAX : 0;
	for (size_t i = 0; i < v->bv_len; i++)
		u = (u << 8) | p[i];
	*out = (ber_int_t)u;
	return 0;
}

/* Reads the Controls element; notes whether any is critical. */
static int decode_controls(BerElement *ber, struct ldap_request *req)
{
	ber_len_t len;
	char *last;
	if (ber_peek_tag(ber, &len) != LDAP_TAG_CONTROLS)
		return -1;
	for (ber_tag_t t = ber_first_element(ber, &len, &last); t != LBER_DEFAULT;
	     t = ber_next_element(ber, &len, last)) {
		if (req->ncontrols == REQUEST_MAX_CONTROLS)
			return -1;
		struct request_control *c = &req->controls[req->ncontrols++];
		ber_int_t critical = 0;
		if (ber_skip_tag(ber, &len) == LBER_DEFAULT || get_string(ber, &c->oid) < 0)
			return -1;
		ber_tag_t n = ber_peek_tag(ber, &len);
		if (n == LBER_BOOLEAN) {
			if (ber_get_boolean(ber, &critical) == LBER_DEFAULT)
				return -1;
			n = ber_peek_tag(ber, &len);
		}
		if (n == LBER_OCTETSTRING) {
			if (get_string(ber, &c->value) < 0)
				return -1;
			c->has_value = true;
		}
		c->critical = critical != 0;
		if (critical)
			req->critical_control = true;
	}
	return 0;
}

static int decode_compare(BerElement *ber, struct compare_request *c, const char **why)
{
	ber_len_t len;
	*why = "malformed CompareRequest";
	if (get_string(ber, &c->dn) < 0 || ber_skip_tag(ber, &len) != LBER_SEQUENCE ||
	    get_string(ber, &c->attr) < 0 || get_string(ber, &c->value) < 0)
		return -1;
	return 0;
}

static int decode_extended(BerElement *ber, struct extended_request *x, const char **why)
{
	ber_len_t len;
	*why = "malformed ExtendedRequest";
	if (ber_peek_tag(ber, &len) != LDAP_TAG_EXOP_REQ_OID || get_string(ber, &x->oid) < 0)
		return -1;
	if (ber_peek_tag(ber, &len) == LDAP_TAG_EXOP_REQ_VALUE) {
		if (get_string(ber, &x->value) < 0)
			return -1;
		x->has_value = true;
	}
	return 0;
}

const struct request_control *request_control(const struct ldap_request *req, const char *oid)
{
	size_t n = strlen(oid);
	for (int i = 0; i < req->ncontrols; i++)
		if (req->controls[i].oid.bv_len == n &&
		    memcmp(req->controls[i].oid.bv_val, oid, n) == 0)
			return &req->controls[i];
	return NULL;
}

int request_decode(BerElement *ber, const unsigned char *pdu, size_t len, struct ldap_request *req,
                   const char **why)
{
	memset(req, 0, sizeof(*req));
	req->msgid = -1;
	*why = "malformed LDAPMessage";
	struct berval bv = {len, (char *)pdu};
	ber_init2(ber, &bv, LBER_USE_DER);
	ber_len_t blen;
	ber_int_t msgid;
	if (ber_skip_tag(ber, &blen) != LBER_SEQUENCE || ber_peek_tag(ber, &blen) != LBER_INTEGER ||
	    ber_get_int(ber, &msgid) == LBER_DEFAULT || msgid < 0)
		return -1;
	req->msgid = msgid;
	req->op = ber_peek_tag(ber, &blen);
	struct berval op;
	if (req->op == LBER_DEFAULT || ber_peek_element(ber, &op) == LBER_DEFAULT)
		return -1;
	/* Whatever follows the operation must be one well-formed Controls element. */
	const unsigned char *rest = (const unsigned char *)op.bv_val + op.bv_len;
	size_t nrest = (size_t)(pdu + len - rest);
	if (nrest > 0) {
		struct berval cbv = {nrest, (char *)rest};
		unsigned char ctag;
		const unsigned char *p = rest, *cval;
		size_t clen;
		ber_init2(ber, &cbv, LBER_USE_DER);
		if (!tlv_read(&p, rest + nrest, &ctag, &cval, &clen) || p != rest + nrest ||
		    decode_controls(ber, req) < 0) {
			*why = "malformed controls";
			return -1;
		}
	}
	/* The operation's content (ber_peek_element gives it without tag and length). */
	ber_init2(ber, &op, LBER_USE_DER);
	switch (req->op) {
	case LDAP_REQ_BIND:
		return decode_bind(ber, &req->u.bind, why);
	case LDAP_REQ_SEARCH:
		return decode_search(ber, &req->u.search, why);
	case LDAP_REQ_COMPARE:
		return decode_compare(ber, &req->u.compare, why);
	case LDAP_REQ_EXTENDED:
		return decode_extended(ber, &req->u.extended, why);
	case LDAP_REQ_ABANDON:
		*why = "malformed AbandonRequest";
		return decode_int(&op, &req->u.abandon_msgid);
	default:
		return 0;
	}
}

void request_free(struct ldap_request *req)
{
	if (req->op == LDAP_REQ_SEARCH) {
		filter_free(req->u.search.filter);
		req->u.search.filter = NULL;
	}
}
