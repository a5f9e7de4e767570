/*
 * LDAP requests (RFC 4511 section 4), decoded from one framed PDU with
 * liblber. Strings in a decoded request point into the PDU bytes (they are
 * not NUL-terminated) and live as long as those bytes; the filter tree is
 * owned by the request. Free with request_free().
 *
 * Made for client bytes: every length is checked against the PDU, counts are
 * bounded (REQUEST_MAX_ATTRS, REQUEST_MAX_CONTROLS, FILTER_MAX_DEPTH), and
 * a malformed request is an error, never a crash.
 * Thread rules: no global state; a BerElement and a request belong to one
 * thread at a time. The filter decoder reads the schema (schema.h).
 */
#ifndef MINIDIR_PROTOCOL_REQUEST_H
#define MINIDIR_PROTOCOL_REQUEST_H

#include <lber.h>
#include <stdbool.h>

#include "protocol/filter.h"

/* Most attributes a search may name; more is a protocol error. */
#define REQUEST_MAX_ATTRS 256

struct bind_request {
	int version;
	struct berval dn;
	bool simple;        /* false: SASL (cred unused) */
	struct berval cred; /* simple password */
	struct berval mech; /* SASL mechanism */
};

struct search_request {
	struct berval base;
	int scope; /* LDAP_SCOPE_BASE, _ONELEVEL, _SUBTREE, _SUBORDINATE (children) */
	int deref;
	int sizelimit;
	int timelimit;
	bool typesonly;
	struct filter *filter;
	struct berval attrs[REQUEST_MAX_ATTRS];
	int nattrs;
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

struct ldap_request {
	ber_int_t msgid;
	ber_tag_t op;          /* LDAP_REQ_BIND, LDAP_REQ_SEARCH, ... */
	bool critical_control; /* some control is marked critical */
	struct request_control controls[REQUEST_MAX_CONTROLS];
	int ncontrols;
	union {
		struct bind_request bind;
		struct search_request search;
		struct compare_request compare;
		struct extended_request extended;
		ber_int_t abandon_msgid;
	} u;
};

/* The first control whose OID is oid (NUL-terminated, compared exactly) in req, or NULL.
 * The result points into req. */
const struct request_control *request_control(const struct ldap_request *req, const char *oid);

/*
 * Decodes the LDAPMessage pdu[0..len) (borrowed: req points into it) using
 * ber, a BerElement the caller allocated once (ber_alloc_t) and reuses; req is
 * overwritten. Call request_free(req) afterwards, on success and on failure.
 * Returns 0 on success. Returns -1
 * if the message is malformed; *why then says how (for the protocolError
 * notice) and req->msgid holds the message ID when it could be read, else -1.
 * Operations minidir does not decode (add, modify, ...) succeed with only
 * msgid and op set.
 *
 * pdu[len] must be readable (its value does not matter): liblber's
 * ber_skip_element, which ber_get_stringbv and others use, loads the tag byte
 * after the element it skips, one past the end when the PDU's last element is
 * read. The connection keeps a spare byte after its input for this.
 */
int request_decode(BerElement *ber, const unsigned char *pdu, size_t len, struct ldap_request *req,
                   const char **why);

/* Frees what req owns (a search's filter) and sets it NULL; safe after a failed decode
 * and twice. The PDU bytes are the caller's and are not touched. */
void request_free(struct ldap_request *req);

#endif
