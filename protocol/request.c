/* LDAPMessage decoding by hand, element by element (ber_in.h); see request.h. */
#include "protocol/request.h"

#include "protocol/ber_in.h"

#include <ldap.h>
#include <string.h>

/* BindRequest ::= [APPLICATION 0] SEQUENCE { version, name, authentication }. */
static int decode_bind(struct ber_in *in, struct bind_request *b, const char **why)
{
	int32_t version;
	*why = "malformed BindRequest";
	memset(b, 0, sizeof(*b));
	if (ber_in_int(in, LBER_INTEGER, &version) < 0 ||
	    ber_in_string(in, LBER_OCTETSTRING, &b->dn) < 0)
		return -1;
	b->version = version;
	int t = ber_in_peek(in);
	if (t == LDAP_AUTH_SIMPLE) {
		b->simple = true;
		return ber_in_string(in, LDAP_AUTH_SIMPLE, &b->cred) == 0 && ber_in_end(in) ? 0
		                                                                            : -1;
	}
	if (t == LDAP_AUTH_SASL) {
		/* SaslCredentials ::= SEQUENCE { mechanism, credentials OPTIONAL } */
		struct ber_in sasl;
		if (ber_in_take(in, LDAP_AUTH_SASL, &sasl) < 0 || !ber_in_end(in) ||
		    ber_in_string(&sasl, LBER_OCTETSTRING, &b->mech) < 0)
			return -1;
		b->has_cred = !ber_in_end(&sasl);
		if ((b->has_cred && ber_in_string(&sasl, LBER_OCTETSTRING, &b->cred) < 0) ||
		    !ber_in_end(&sasl))
			return -1;
		return 0;
	}
	*why = "unknown BindRequest authentication choice";
	return -1;
}

/* SearchRequest ::= [APPLICATION 3] SEQUENCE { baseObject, scope, derefAliases, sizeLimit,
 * timeLimit, typesOnly, filter, attributes }. */
static int decode_search(struct ber_in *in, struct search_request *s, struct arena *mem,
                         struct buf *scratch, const char **why)
{
	int32_t scope, deref, sizelimit, timelimit;
	*why = "malformed SearchRequest";
	s->filter = NULL;
	s->nattrs = 0;
	if (ber_in_string(in, LBER_OCTETSTRING, &s->base) < 0 ||
	    ber_in_int(in, LBER_ENUMERATED, &scope) < 0 ||
	    ber_in_int(in, LBER_ENUMERATED, &deref) < 0 ||
	    ber_in_int(in, LBER_INTEGER, &sizelimit) < 0 ||
	    ber_in_int(in, LBER_INTEGER, &timelimit) < 0 ||
	    ber_in_bool(in, LBER_BOOLEAN, &s->typesonly) < 0)
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
	s->raw_tail = (struct berval){(ber_len_t)(in->end - in->p), (char *)in->p};
	s->filter = filter_decode(in, mem, scratch);
	if (!s->filter) {
		*why = "malformed or too deeply nested search filter";
		return -1;
	}
	struct ber_in attrs;
	if (ber_in_take(in, LBER_SEQUENCE, &attrs) < 0 || !ber_in_end(in)) {
		*why = "malformed SearchRequest attribute list";
		return -1;
	}
	while (!ber_in_end(&attrs)) {
		if (s->nattrs == REQUEST_MAX_ATTRS) {
			*why = "too many attributes requested";
			return -1;
		}
		if (ber_in_string(&attrs, LBER_OCTETSTRING, &s->attrs[s->nattrs++]) < 0)
			return -1;
	}
	return 0;
}

/* Controls ::= SEQUENCE OF Control, each SEQUENCE { controlType, criticality BOOLEAN DEFAULT
 * FALSE, controlValue OCTET STRING OPTIONAL }; notes whether any is critical. */
static int decode_controls(struct ber_in *in, struct ldap_request *req)
{
	while (!ber_in_end(in)) {
		struct ber_in ctl;
		if (req->ncontrols == REQUEST_MAX_CONTROLS ||
		    ber_in_take(in, LBER_SEQUENCE, &ctl) < 0)
			return -1;
		struct request_control *c = &req->controls[req->ncontrols++];
		c->critical = c->has_value = false;
		if (ber_in_string(&ctl, LBER_OCTETSTRING, &c->oid) < 0 ||
		    (ber_in_peek(&ctl) == LBER_BOOLEAN &&
		     ber_in_bool(&ctl, LBER_BOOLEAN, &c->critical) < 0))
			return -1;
		if (!ber_in_end(&ctl)) {
			if (ber_in_string(&ctl, LBER_OCTETSTRING, &c->value) < 0 ||
			    !ber_in_end(&ctl))
				return -1;
			c->has_value = true;
		}
		if (c->critical)
			req->critical_control = true;
	}
	return 0;
}

/* CompareRequest ::= [APPLICATION 14] SEQUENCE { entry, ava SEQUENCE { desc, value } }. */
static int decode_compare(struct ber_in *in, struct compare_request *c, const char **why)
{
	struct ber_in ava;
	*why = "malformed CompareRequest";
	if (ber_in_string(in, LBER_OCTETSTRING, &c->dn) < 0 ||
	    ber_in_take(in, LBER_SEQUENCE, &ava) < 0 || !ber_in_end(in) ||
	    ber_in_string(&ava, LBER_OCTETSTRING, &c->attr) < 0 ||
	    ber_in_string(&ava, LBER_OCTETSTRING, &c->value) < 0 || !ber_in_end(&ava))
		return -1;
	return 0;
}

/* ExtendedRequest ::= [APPLICATION 23] SEQUENCE { requestName [0], requestValue [1] OPTIONAL }. */
static int decode_extended(struct ber_in *in, struct extended_request *x, const char **why)
{
	*why = "malformed ExtendedRequest";
	x->has_value = false;
	if (ber_in_string(in, LDAP_TAG_EXOP_REQ_OID, &x->oid) < 0)
		return -1;
	if (!ber_in_end(in)) {
		if (ber_in_string(in, LDAP_TAG_EXOP_REQ_VALUE, &x->value) < 0)
			return -1;
		x->has_value = true;
	}
	return ber_in_end(in) ? 0 : -1;
}

/* ModifyRequest ::= [APPLICATION 6] SEQUENCE { object LDAPDN, changes SEQUENCE OF ... }. */
static void decode_modify(struct ber_in *in, struct modify_request *m)
{
	struct ber_in changes;
	m->valid = ber_in_string(in, LBER_OCTETSTRING, &m->dn) == 0 &&
	           ber_in_take(in, LBER_SEQUENCE, &changes) == 0 && ber_in_end(in);
	if (m->valid)
		m->changes =
		    (struct berval){(ber_len_t)(changes.end - changes.p), (char *)changes.p};
}

const struct request_control *request_control_find(const struct ldap_request *req, const char *oid)
{
	size_t n = strlen(oid);
	for (int i = 0; i < req->ncontrols; i++)
		if (req->controls[i].oid.bv_len == n &&
		    memcmp(req->controls[i].oid.bv_val, oid, n) == 0)
			return &req->controls[i];
	return NULL;
}

const struct request_control *request_unapplied_critical(const struct ldap_request *req,
                                                         const char *const *applied, size_t n)
{
	if (!req->critical_control)
		return NULL;
	for (int i = 0; i < req->ncontrols; i++) {
		const struct request_control *ctl = &req->controls[i];
		bool known = false;
		for (size_t j = 0; j < n && !known; j++)
			known = ctl->oid.bv_len == strlen(applied[j]) &&
			        memcmp(ctl->oid.bv_val, applied[j], ctl->oid.bv_len) == 0;
		if (ctl->critical && !known)
			return ctl;
	}
	return NULL;
}

/* The operation's content (the element op, its tag req->op). */
static int decode_op(struct ber_in *op, struct ldap_request *req, struct buf *scratch,
                     const char **why)
{
	switch (req->op) {
	case LDAP_REQ_BIND:
		return decode_bind(op, &req->u.bind, why);
	case LDAP_REQ_SEARCH:
		return decode_search(op, &req->u.search, req->mem, scratch, why);
	case LDAP_REQ_COMPARE:
		return decode_compare(op, &req->u.compare, why);
	case LDAP_REQ_EXTENDED:
		return decode_extended(op, &req->u.extended, why);
	case LDAP_REQ_MODIFY:
		decode_modify(op, &req->u.modify);
		return 0;
	case LDAP_REQ_ABANDON: /* [APPLICATION 16] MessageID, a primitive INTEGER */
		*why = "malformed AbandonRequest";
		return ber_in_int_value(op->p, (size_t)(op->end - op->p), &req->u.abandon_msgid) ==
		                   0 &&
		               req->u.abandon_msgid >= 0
		           ? 0
		           : -1;
	case LDAP_REQ_UNBIND: /* [APPLICATION 2] NULL */
		*why = "malformed UnbindRequest";
		return ber_in_end(op) ? 0 : -1;
	default:
		return 0;
	}
}

int request_decode(const unsigned char *pdu, size_t len, struct ldap_request *req,
                   struct arena *mem, struct buf *scratch, const char **why)
{
	/* Not the whole struct: its attribute and control arrays are set as far as they are used.
	 */
	req->msgid = -1;
	req->op = 0;
	req->mem = mem;
	req->critical_control = false;
	req->ncontrols = 0;
	*why = "malformed LDAPMessage";
	/* LDAPMessage ::= SEQUENCE { messageID, protocolOp, controls [0] OPTIONAL }, the whole PDU.
	 */
	struct ber_in whole = ber_in_make(pdu, len), msg, op;
	int32_t msgid;
	if (ber_in_take(&whole, LBER_SEQUENCE, &msg) < 0 || !ber_in_end(&whole) ||
	    ber_in_int(&msg, LBER_INTEGER, &msgid) < 0 || msgid < 0)
		return -1;
	req->msgid = msgid;
	int tag = ber_in_peek(&msg);
	if (tag < 0 || ber_in_take(&msg, (unsigned char)tag, &op) < 0)
		return -1;
	req->op = (ber_tag_t)tag;
	if (!ber_in_end(&msg)) {
		struct ber_in controls;
		if (ber_in_take(&msg, LDAP_TAG_CONTROLS, &controls) < 0 || !ber_in_end(&msg) ||
		    decode_controls(&controls, req) < 0) {
			*why = "malformed controls";
			return -1;
		}
	}
	return decode_op(&op, req, scratch, why);
}
