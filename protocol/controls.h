/*
 * The request and response controls minidir implements: simple paged results
 * (RFC 2696), server-side sorting (RFC 2891), the virtual list view
 * (draft-ietf-ldapext-ldapv3-vlv-09) and the password policy response (binds), decoded by hand
 * (ber_in.h's rules: the value is exactly the control's syntax) and encoded with liblber. Decoded
 * strings point into the control's value (borrowed, not NUL-terminated) and live as long as it
 * does. Values come from clients: the decoders check every length and bound the key count, and
 * allocate nothing. Thread rules: no state; any thread. Each encoding call allocates and frees its
 * own BerElements.
 */
#ifndef MINIDIR_PROTOCOL_CONTROLS_H
#define MINIDIR_PROTOCOL_CONTROLS_H

#include <lber.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol/buf.h"

#define CONTROL_PAGED_RESULTS "1.2.840.113556.1.4.319"
#define CONTROL_SORT_REQUEST "1.2.840.113556.1.4.473"
#define CONTROL_SORT_RESPONSE "1.2.840.113556.1.4.474"
#define CONTROL_VLV_REQUEST "2.16.840.1.113730.3.4.9"
#define CONTROL_VLV_RESPONSE "2.16.840.1.113730.3.4.10"
#define CONTROL_MANAGE_DSA_IT "2.16.840.1.113730.3.4.2"
#define CONTROL_ASSERTION "1.3.6.1.1.12"
#define CONTROL_MATCHED_VALUES "1.2.826.0.1.3344810.2.3"
/* draft-behera-ldap-password-policy: the request (no value) and the response share it. */
#define CONTROL_PASSWORD_POLICY "1.3.6.1.4.1.42.2.27.8.5.1"

/* The response's error values (PasswordPolicyResponseValue's error ENUMERATED). */
enum ppolicy_error {
	PPOLICY_NO_ERROR = -1, /* no error element */
	PPOLICY_PASSWORD_EXPIRED = 0,
	PPOLICY_ACCOUNT_LOCKED = 1,
	PPOLICY_CHANGE_AFTER_RESET = 2,
};

/* Sort keys a request may give; more is refused. */
#define CONTROL_MAX_SORT_KEYS 4

struct sort_key {
	struct berval attr;
	struct berval rule; /* orderingRule, bv_val NULL when absent */
	bool reverse;
};

/* realSearchControlValue ::= SEQUENCE { size INTEGER, cookie OCTET STRING }.
 * Returns 0 (*size >= 0, *cookie into value); -1 if malformed or size negative. */
int control_paged_decode(const struct berval *value, int *size, struct berval *cookie);

/* SortKeyList ::= SEQUENCE OF SEQUENCE { attributeType, [0] orderingRule, [1] reverseOrder }.
 * Returns 0 (keys[0..*n) set) or -1 (malformed, none, or too many keys). */
int control_sort_decode(const struct berval *value, struct sort_key *keys, int *n);

/* VirtualListViewRequest ::= SEQUENCE { beforeCount INTEGER, afterCount INTEGER,
 *     target CHOICE { byOffset [0] SEQUENCE { offset INTEGER, contentCount INTEGER },
 *                     greaterThanOrEqual [1] AssertionValue },
 *     contextID OCTET STRING OPTIONAL } */
struct vlv_request {
	int32_t before, after;
	bool by_value;         /* greaterThanOrEqual: value; else byOffset: offset, count */
	int32_t offset, count; /* byOffset */
	struct berval value;   /* greaterThanOrEqual's assertion value */
	struct berval context; /* contextID, bv_val NULL when absent */
};

/* Returns 0 (*v set, its strings into value); -1 if malformed or a count is negative
 * (the draft's INTEGER (0..maxInt)). */
int control_vlv_decode(const struct berval *value, struct vlv_request *v);

/*
 * Appends one Control (SEQUENCE { controlType, controlValue }) to out, a list
 * that controls_wrap turns into a response's Controls: the paged results
 * response (size 0, cookie[0..len) copied, cookie may be NULL when len is 0),
 * the sort response with sortResult rc, or the VLV response
 * (VirtualListViewResponse: targetPosition, contentCount, virtualListViewResult;
 * minidir keeps no context, so it sends no contextID).
 * Returns 0; -1 when out of memory (out->len as it was).
 */
int control_paged_response(struct buf *out, const void *cookie, size_t len);
int control_sort_response(struct buf *out, int rc);
int control_vlv_response(struct buf *out, int32_t target, int32_t count, int rc);

/*
 * Appends the Password Policy response control (draft-behera 6.2), as slapd's ppolicy
 * encodes it: PasswordPolicyResponseValue ::= SEQUENCE { warning [0] CHOICE {
 * timeBeforeExpiration [0] INTEGER, graceAuthNsRemaining [1] INTEGER } OPTIONAL,
 * error [1] ENUMERATED OPTIONAL }. The warning is timeBeforeExpiration when expire >= 0,
 * else graceAuthNsRemaining when grace >= 0, else absent; error PPOLICY_NO_ERROR: absent.
 * Returns 0 or -1 (out of memory).
 */
int control_ppolicy_response(struct buf *out, int32_t expire, int32_t grace,
                             enum ppolicy_error error);

/* Appends a Control of oid whose controlValue is value (a Sync State or Sync Done control,
 * protocol/sync.h encodes it). Returns 0 or -1 (out of memory). */
int control_put_value(struct buf *out, const char *oid, const struct berval *value);

/* Appends [0] Controls holding the controls in list (as appended above) to out.
 * Returns 0 or -1 (out of memory). */
int controls_wrap(struct buf *out, const struct buf *list);

#endif
