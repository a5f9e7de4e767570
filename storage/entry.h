/*
 * Entry records, as id2entry stores them:
 *
 *   u32 parent ID (native order; 0 for the suffix entry)
 *   16 bytes entryUUID (RFC 4530; all zero for entries built on the fly)
 *   u16 length of the reversed DN key, then the key (see protocol/dn.h)
 *   the entry as a SearchResultEntry protocolOp:
 *     [APPLICATION 4] { objectName LDAPDN, attributes PartialAttributeList }
 *
 * Keeping the entry pre-encoded means a search sends it with a header and a
 * memcpy, and filters walk the same bytes without decoding into structures.
 */
#ifndef MINIDIR_STORAGE_ENTRY_H
#define MINIDIR_STORAGE_ENTRY_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "protocol/response.h"

typedef uint32_t entry_id;

/* Bytes of a record before its DN key: parent ID, entryUUID, key length. */
#define ENTRY_HEADER_BYTES 22

/*
 * The largest entry record (as entry_encode writes it) minidir-import
 * accepts: 16 MiB. The server relies on it: whatever import stored, it can
 * send (response buffers and limits are sized with it in mind).
 */
#define ENTRY_MAX_BYTES (16 * 1024 * 1024)

/* A view into one record's bytes; valid as long as those bytes are. */
struct entry_view {
	entry_id parent;
	const unsigned char *uuid; /* 16 bytes */
	const unsigned char *key;  /* reversed normalized DN */
	size_t keylen;
	const unsigned char *op; /* the SearchResultEntry protocolOp, whole TLV */
	size_t oplen;
	const unsigned char *dn; /* objectName as imported */
	size_t dnlen;
	const unsigned char *attrs; /* content of the PartialAttributeList */
	size_t attrslen;
	/* Its attribute types summed up for an attribute gate (protocol/attr_gate.h): 0, not
	 * known, from entry_parse; db_get_entry sets it where it remembers the record. */
	uint32_t type_lens;
};

/* The parts of view e a response reads (protocol/response.h), as a value: for
 * reply_entry(..., &ENTRY_STORED(e), ...), so that the record is not parsed twice. */
#define ENTRY_STORED(e)                                                                            \
	((struct stored_entry){(e)->op, (e)->oplen, (e)->dn, (e)->dnlen, (e)->attrs,               \
	                       (e)->attrslen, (e)->type_lens})

/*
 * Finds attribute name[0..len) (compared case-insensitively) in e. Returns true
 * and sets vals/vlen to the content of its SET OF values, or false when the
 * entry does not hold it. Walk the values with entry_next_value.
 */
bool entry_find_attr(const struct entry_view *e, const char *name, size_t len,
                     const unsigned char **vals, size_t *vlen);

/* The next value at *p (before end): true with v/vlen set and *p advanced. */
bool entry_next_value(const unsigned char **p, const unsigned char *end, const unsigned char **v,
                      size_t *vlen);

/* Whether e's objectClass holds name[0..len) (compared case-insensitively). */
bool entry_has_class(const struct entry_view *e, const char *name, size_t len);

/* Parses a record (type_lens 0: not summed up). Returns 0, or -1 if the bytes are not a
 * valid record. */
int entry_parse(const void *data, size_t len, struct entry_view *e);

/* The summary of e's attribute types (protocol/attr_gate.h's attr_types_add over each);
 * 0 when its attribute list does not parse. */
uint32_t entry_type_lens(const struct entry_view *e);

/*
 * Appends a record for the entry named dn with attributes mods (an LDAPMod
 * array with LDAP_MOD_BVALUES values, as ldap_parse_ldif_record returns).
 * Returns 0, or -1 when out of memory or the key is longer than 65535 bytes.
 */
int entry_encode(struct buf *out, entry_id parent, const unsigned char *key, size_t keylen,
                 const struct berval *dn, LDAPMod **mods);

/* Like entry_encode, with the entry's UUID; mods named entryUUID are left out. */
int entry_encode_uuid(struct buf *out, entry_id parent, const unsigned char uuid[16],
                      const unsigned char *key, size_t keylen, const struct berval *dn,
                      LDAPMod **mods);

/* Formats a UUID as RFC 4122 text (36 characters and a NUL). */
void entry_uuid_format(const unsigned char uuid[16], char out[37]);
/* Parses RFC 4122 text; returns 0 or -1. */
int entry_uuid_parse(const char *s, size_t len, unsigned char uuid[16]);

#endif
