/*
 * LDAP requests (RFC 4511 section 4), decoded from one framed PDU by hand
 * (ber_in.h), without liblber: the hot path costs no allocation. Strings in a
 * decoded request point into the PDU bytes (they are not NUL-terminated) and
 * live as long as those bytes; a search's filter tree lives in the arena the
 * caller passed (req->mem), until the caller resets or frees it.
 *
 * Made for client bytes: every length is checked against the PDU, counts are
 * bounded (REQUEST_MAX_ATTRS, REQUEST_MAX_CONTROLS, FILTER_MAX_DEPTH), and
 * a malformed request is an error, never a crash. The encoding rules are
 * ber_in.h's: stricter than liblber (tags, INTEGER and BOOLEAN sizes, nothing
 * after the last field of an element).
 * Thread rules: no global state; a request belongs to one thread at a time.
 * The filter decoder reads the schema (schema.h).
 */
#ifndef MINIDIR_PROTOCOL_REQUEST_H
#define MINIDIR_PROTOCOL_REQUEST_H

#include <lber.h>
#include <stdbool.h>

#include "protocol/arena.h"
#include "protocol/buf.h"

#include "protocol/filter.h"

/* Most attributes a search may name; more is a protocol error. */
#define REQUEST_MAX_ATTRS 256

struct bind_request {
	int version;
	struct berval dn;
	bool simple;        /* false: SASL */
	struct berval cred; /* the simple password, or the SASL credentials */
	bool has_cred;      /* SASL: credentials present (an empty value is not none) */
	struct berval mech; /* SASL mechanism */
};

struct search_request {
	struct berval base;
	int scope; /* LDAP_SCOPE_BASE, _ONELEVEL, _SUBTREE, _SUBORDINATE (children) */
	int deref;
	int sizelimit;
	int timelimit;
	bool typesonly;
	struct filter *filter; /* in the request's arena (mem) */
	struct berval attrs[REQUEST_MAX_ATTRS];
	int nattrs;
	struct berval raw_tail; /* the filter and the attribute list, as sent */
};

/* Most controls one request may carry; more is a protocol error. */
#define REQUEST_MAX_CONTROLS 8

struct request_control {
	struct berval oid;
	bool critical;
	bool has_value;
	struct berval value;
};

struct compare_request {
	struct berval dn;
	struct berval attr;
	struct berval value;
};

struct extended_request {
	struct berval oid;
	bool has_value;
	struct berval value;
};

/* ModifyRequest: the object and the content of its changes SEQUENCE, undecoded (a
 * read-only server only forwards some: server/ops/op_chain.c). valid false: the request's
 * outer form did not decode (it is refused as any write, not as a protocolError). */
struct modify_request {
	bool valid;
	struct berval dn;
	struct berval changes;
};

struct ldap_request {
	ber_int_t msgid;
	ber_tag_t op;          /* LDAP_REQ_BIND, LDAP_REQ_SEARCH, ... */
	struct arena *mem;     /* where the filter lives: request_decode's mem (the caller's) */
	bool critical_control; /* some control is marked critical */
	struct request_control controls[REQUEST_MAX_CONTROLS];
	int ncontrols;
	union {
		struct bind_request bind;
		struct search_request search;
		struct compare_request compare;
		struct extended_request extended;
		struct modify_request modify;
		ber_int_t abandon_msgid;
	} u;
};

/* request_control's search of req's controls. */
const struct request_control *request_control_find(const struct ldap_request *req, const char *oid);

/* The first control whose OID is oid (NUL-terminated, compared exactly) in req, or NULL.
 * The result points into req. Inline: a request without controls (most: a lookup asks for
 * three) is answered without a call. */
static inline const struct request_control *request_control(const struct ldap_request *req,
                                                            const char *oid)
{
	return req->ncontrols ? request_control_find(req, oid) : NULL;
}

/* The first control of req marked critical whose OID is none of applied[0..n) (each
 * NUL-terminated), or NULL: what an operation that applies only those must refuse with
 * unavailableCriticalExtension (RFC 4511 4.1.11). The result points into req. */
const struct request_control *request_unapplied_critical(const struct ldap_request *req,
                                                         const char *const *applied, size_t n);

/*
 * Decodes the LDAPMessage pdu[0..len) (borrowed: req points into it); req is
 * overwritten (only the fields of its operation are set). A search's filter
 * goes into mem, its values normalized in scratch first (a reusable work
 * buffer of the caller's, contents overwritten); nothing else is allocated.
 * Returns 0 on success. Returns -1 if the message is malformed; *why then
 * says how (for the protocolError notice) and req->msgid holds the message ID
 * when it could be read, else -1; what went into mem stays there until the
 * caller resets it. Operations minidir does not decode (add, delete, ...)
 * succeed with only msgid and op set; a modify with its object and changes when they
 * can be read (struct modify_request).
 */
int request_decode(const unsigned char *pdu, size_t len, struct ldap_request *req,
                   struct arena *mem, struct buf *scratch, const char **why);

#endif
