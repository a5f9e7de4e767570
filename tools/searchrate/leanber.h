/*
 * leanber.h: the lean engine's LDAP messages (RFC 4511 over BER), without libldap's
 * per-message machinery. Requests are written straight into a connection's output buffer
 * (SearchRequest, simple BindRequest, UnbindRequest; definite minimal lengths); responses
 * are framed by their BER length and read in place (message ID, operation, a result's code
 * and diagnostic message). Nothing here allocates per message.
 *
 * Search filters come from libldap, which encodes a filter string as BER
 * (ldap_create_assertion_control_value), once per shape: the filter pattern's ranges with
 * a given number of characters each. A range's characters (digits, a minus sign) stand
 * verbatim in the BER, so another expansion of the same shape is the cached encoding with
 * its characters copied in. Where each range lies in the BER is learned when a shape is
 * first met, by encoding the expansion a second time with every range character changed
 * and comparing: each range must show as one run of its own characters, and nothing else
 * may differ. A shape where that does not hold (a range inside a \XX escape) is encoded by
 * libldap for every request: slower, the same bytes.
 */
#ifndef SEARCHRATE_LEANBER_H
#define SEARCHRATE_LEANBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ldap.h>

#include "tools/searchrate/pattern.h"

/* protocolOp tags (RFC 4511 4.2 ff.: [APPLICATION n], constructed unless primitive) */
#define LB_OP_BIND_REQUEST 0x60u
#define LB_OP_BIND_RESPONSE 0x61u
#define LB_OP_UNBIND_REQUEST 0x42u
#define LB_OP_SEARCH_REQUEST 0x63u
#define LB_OP_SEARCH_ENTRY 0x64u
#define LB_OP_SEARCH_DONE 0x65u
#define LB_OP_SEARCH_REFERENCE 0x73u
#define LB_OP_EXTENDED_RESPONSE 0x78u

/* The bytes every SearchRequest of a run shares: the fields between the base and the filter
 * (scope, derefAliases never, sizeLimit, timeLimit, typesOnly false), and the attribute list. */
struct lb_search {
	unsigned char mid[24];
	size_t midlen;
	unsigned char *attrs; /* owned: the AttributeSelection TLV */
	size_t attrslen;
};

/* Encodes the shared parts; attrs is NULL terminated (NULL: none, all user attributes).
 * false when memory runs out. */
bool lb_search_init(struct lb_search *s, int scope, int sizelimit, int timelimit,
                    char *const *attrs);
void lb_search_free(struct lb_search *s);

/* The most bytes lb_put_search writes for a base and filter of these lengths. */
size_t lb_search_max(const struct lb_search *s, size_t baselen, size_t filterlen);

/* Writes the LDAPMessage of a SearchRequest (msgid 1..INT_MAX) to out; returns its length. */
size_t lb_put_search(unsigned char *out, const struct lb_search *s, int msgid, const char *base,
                     size_t baselen, const unsigned char *filter, size_t filterlen);

/* The most bytes lb_put_bind writes, and the LDAPMessage of a simple BindRequest (version 3). */
size_t lb_bind_max(size_t dnlen, size_t pwlen);
size_t lb_put_bind(unsigned char *out, int msgid, const char *dn, size_t dnlen, const char *pw,
                   size_t pwlen);

/* The LDAPMessage of an UnbindRequest (at most LB_UNBIND_MAX bytes). */
#define LB_UNBIND_MAX 16
size_t lb_put_unbind(unsigned char *out, int msgid);

/* One framed response. rc, diag and diaglen are set for LDAPResults (BindResponse,
 * SearchResultDone, ExtendedResponse), else 0 and NULL; diag points into the frame. */
struct lb_msg {
	int msgid;
	unsigned op; /* LB_OP_* (any [APPLICATION] tag is framed) */
	int rc;
	const unsigned char *diag;
	size_t diaglen;
};

/*
 * Frames the first LDAPMessage of p[0..n): returns its length (> 0) and fills *m; 0 when
 * more bytes are needed (*need is then the whole message's length once its header is in,
 * else 0); -1 when the bytes are not an LDAPMessage (a tag other than SEQUENCE, an
 * indefinite or over-long length, a message ID that is not a non-negative INTEGER, a field
 * running past its parent, an LDAPResult without its ENUMERATED resultCode) or the message
 * is longer than max bytes.
 */
long lb_frame(const unsigned char *p, size_t n, size_t max, struct lb_msg *m, size_t *need);

#define LB_SHAPE_RANGES 8 /* a filter pattern with more ranges is encoded for each request */
#define LB_SHAPES 16      /* shapes kept; the oldest makes room */

struct lb_shape {
	size_t nr;                   /* 0: the slot is empty */
	size_t len[LB_SHAPE_RANGES]; /* each range's length: the shape */
	size_t at[LB_SHAPE_RANGES];  /* where it lies in ber */
	struct berval ber;           /* libldap's encoding (ber_memfree) */
	bool patch;                  /* false: encode every expansion of this shape */
};

struct lb_filter {
	LDAP *ld;      /* for ldap_create_assertion_control_value; never connected */
	char *scratch; /* a writable copy of the string to encode */
	size_t maxlen;
	struct lb_shape shape[LB_SHAPES];
	unsigned next;      /* the shape slot replaced next */
	struct berval slow; /* the last per-request encoding */
	uint64_t encodes;   /* libldap encodings so far (the tests look) */
};

/* Prepares f for expansions of at most maxlen bytes; false when libldap or memory fails. */
bool lb_filter_init(struct lb_filter *f, size_t maxlen);
void lb_filter_free(struct lb_filter *f);

/*
 * The BER of the filter str[0..len), an expansion whose nr ranges lie at spans (as
 * pattern_expand_spans gives them); *berlen is its length. It stays valid until the next call.
 * NULL, with libldap's result code in *rc, when libldap refuses the filter.
 */
const unsigned char *lb_filter_get(struct lb_filter *f, const char *str, size_t len,
                                   const struct pattern_span *spans, size_t nr, size_t *berlen,
                                   int *rc);

#endif
