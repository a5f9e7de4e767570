/*
 * LDAP responses, encoded straight into an output buffer. Entries come from
 * storage already encoded as a SearchResultEntry protocolOp (see
 * storage/entry.h), so sending one is a header plus a copy, or a copy of the
 * selected attributes only.
 *
 * Every function appends to out (the caller's buffer, grown as needed) and
 * borrows its other arguments for the call. On -1 (out of memory) out->len is
 * as it was. Thread rules: no state of its own; with check_operational set,
 * selecting attributes reads the schema (schema.h).
 */
#ifndef MINIDIR_PROTOCOL_RESPONSE_H
#define MINIDIR_PROTOCOL_RESPONSE_H

#include <lber.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol/filter.h"
#include "protocol/buf.h"

/* OID of the Notice of Disconnection unsolicited notification (RFC 4511 4.4.1). */
#define RESPONSE_NOTICE_OF_DISCONNECTION "1.3.6.1.4.1.1466.20036"

/*
 * Appends an LDAPMessage whose protocolOp is an LDAPResult-shaped response
 * (BindResponse, SearchResultDone, ExtendedResponse, ...) with tag optag.
 * matched and message may be NULL (empty). oid, if not NULL, is added as the
 * ExtendedResponse responseName. Returns 0 or -1 (out of memory).
 */
int response_result(struct buf *out, int32_t msgid, unsigned char optag, int rc,
                    const char *matched, const char *message, const char *oid);

/* Optional parts of a result: a referral, ExtendedResponse name and value, response
 * controls. */
struct result_extra {
	const char *referral; /* one LDAP URL: the result's referral [3] (rc 10), or NULL */
	const char *oid;      /* responseName, or NULL */
	bool has_value;       /* responseValue present */
	bool sasl_creds;      /* the value is a BindResponse's serverSaslCreds [7] */
	const void *value;
	size_t vlen;
	const void *controls; /* a whole [0] Controls element, or NULL */
	size_t clen;
};

/* response_result with the optional parts in x. */
int response_result_ex(struct buf *out, int32_t msgid, unsigned char optag, int rc,
                       const char *matched, const char *message, const struct result_extra *x);

/* Which attributes of an entry a search returns (RFC 4511 4.5.1.8). */
struct attr_select {
	bool all_user;          /* no list, or "*" named */
	bool all_operational;   /* "+" named (RFC 3673) */
	bool check_operational; /* stored attributes may be operational (root DSE, subschema):
	                           such are sent only for "+" or by name */
	bool types_only;        /* attribute descriptions without values */
	int n;                  /* named attributes (not "*", "1.1"), compared case-insensitively */
	const struct berval *names;
	bool supertypes; /* a name has subtypes in the schema: they are selected too */
	bool ranged;     /* a name has a ";range=" option (server/ops/computed_attrs.c) */
	bool sync;       /* a Content Synchronization search (server/ops/search_sync.h): of the
	                    operational attributes, those the provider kept and the structural
	                    class, none computed here (a consumer computes its own, and slapd's
	                    refuses one its schema lacks, numSubordinates) */
	/* Attributes the client may read (attr_gate.h), or NULL for all: others are never
	 * returned, stored or computed (extra). */
	const struct attr_gate *gate;
	/* The Matched Values control (RFC 3876), or NULL: of each attribute only the values some
	 * item of this list (filter_decode_values) holds for are sent, and an attribute left
	 * without values is not sent at all (computed ones in extra too). */
	const struct filter *values;
};

/*
 * Fills sel from a search's requested list names[0..n). The names stay
 * owned by the caller and must outlive sel. A name selects its own type and
 * options and, with a schema loaded, every subtype of the type ("name" selects
 * cn, sn, ou..., RFC 4511 4.5.1.8).
 */
void attr_select_init(struct attr_select *sel, const struct berval *names, int n, bool types_only);

/* True if sel asks for the operational attribute name (by "+" or by name). */
bool attr_select_wants(const struct attr_select *sel, const char *name);

/* True if sel names name (or a supertype of it): a constructed attribute that "+" does
 * not bring (Active Directory's tokenGroups). */
bool attr_select_named(const struct attr_select *sel, const char *name);

/* Appends one attribute (SEQUENCE { type, SET OF value }) to out; with
 * types_only the value set is empty. Returns 0 or -1. */
int response_put_attr(struct buf *out, const char *type, const struct berval *vals, int nvals,
                      bool types_only);

/*
 * Appends a SearchResultEntry for msgid. stored[0..len) is the entry's
 * protocolOp as storage keeps it: [APPLICATION 4] { objectName, attributes }.
 * Returns 0 or -1 (out of memory, or a stored entry that does not parse).
 */
int response_entry(struct buf *out, int32_t msgid, const unsigned char *stored, size_t len,
                   const struct attr_select *sel);

/* response_entry with extra[0..extra_len): attributes (response_put_attr) added at the end. */
int response_entry_extra(struct buf *out, int32_t msgid, const unsigned char *stored, size_t len,
                         const struct attr_select *sel, const unsigned char *extra,
                         size_t extra_len);

/* A stored entry's protocolOp op[0..oplen) and the parts of it a response reads, as
 * storage's record view has them (storage/entry.h entry_view): the objectName's value
 * dn[0..dnlen) and the attribute list's content attrs[0..attrslen), both inside op. */
struct stored_entry {
	const unsigned char *op;
	size_t oplen;
	const unsigned char *dn;
	size_t dnlen;
	const unsigned char *attrs;
	size_t attrslen;
	uint32_t type_lens; /* its attribute types summed up (attr_gate.h); 0: not known */
};

/* response_entry_extra for an entry already parsed into st: its parts are not read again.
 * An entry of which sel (every user attribute, through its gate) leaves out nothing goes out
 * as stored: the message header, then op whole. Returns 0 or -1. */
int response_stored_entry(struct buf *out, int32_t msgid, const struct stored_entry *st,
                          const struct attr_select *sel, const unsigned char *extra,
                          size_t extra_len);

/* --- the pieces of a Content Synchronization answer (protocol/response_sync.c) ------- */

/*
 * Appends controls[0..clen) (a whole [0] Controls element, controls_wrap's) to the
 * LDAPMessage that starts at pending byte at (out->data + out->off + at: buf_pending(out)
 * before it was encoded, which compaction keeps true) and ends at out->len, its length
 * rewritten.
 * Returns 0, or -1 when out of memory or when no message starts there (out unchanged).
 */
int response_add_controls(struct buf *out, size_t at, const void *controls, size_t clen);
/* A SearchResultEntry of dn[0..dnlen) with no attributes (a Sync State delete or present).
 * Returns 0 or -1 (out of memory). */
int response_bare_entry(struct buf *out, int32_t msgid, const void *dn, size_t dnlen);
/* An IntermediateResponse with responseName oid and responseValue value[0..vlen).
 * Returns 0 or -1 (out of memory). */
int response_intermediate(struct buf *out, int32_t msgid, const char *oid, const void *value,
                          size_t vlen);

#endif
