/*
 * The LDAP Content Synchronization operation (RFC 4533), a consumer's side: the
 * Sync Request control it sends with its search, and the Sync State control (on
 * entries), the Sync Done control (on SearchResultDone) and the Sync Info message
 * (an IntermediateResponse) a provider sends back. Encoded and decoded with liblber.
 * And a provider's (minidir answering its own consumers, server/ops/search_sync.h): the
 * request decoded, the cookie's parts read, the three answers encoded.
 *
 * Decoded cookies and UUIDs point into the value given (borrowed, not NUL-terminated)
 * and live as long as it does; a syncIdSet's UUID list is the caller's to free
 * (sync_info_free). Values come from the provider, a peer: every length is checked,
 * an entryUUID must be 16 bytes, and a malformed value is an error, never a crash.
 *
 * Thread rules: no state; any thread.
 */
#ifndef MINIDIR_PROTOCOL_SYNC_H
#define MINIDIR_PROTOCOL_SYNC_H

#include <lber.h>
#include <stdbool.h>
#include <stddef.h>

#define SYNC_REQUEST_OID "1.3.6.1.4.1.4203.1.9.1.1"
#define SYNC_STATE_OID "1.3.6.1.4.1.4203.1.9.1.2"
#define SYNC_DONE_OID "1.3.6.1.4.1.4203.1.9.1.3"
#define SYNC_INFO_OID "1.3.6.1.4.1.4203.1.9.1.4"
/* e-syncRefreshRequired: the consumer must start again without its cookie. */
#define SYNC_REFRESH_REQUIRED 4096

#define SYNC_UUID_LEN 16

enum sync_mode { SYNC_REFRESH_ONLY = 1, SYNC_REFRESH_AND_PERSIST = 3 };
enum sync_state { SYNC_PRESENT = 0, SYNC_ADD = 1, SYNC_MODIFY = 2, SYNC_DELETE = 3 };

/*
 * syncRequestValue ::= SEQUENCE { mode ENUMERATED, cookie syncCookie OPTIONAL,
 * reloadHint BOOLEAN DEFAULT FALSE } into *out (liblber's; free with ber_bvfree).
 * cookie may be NULL or empty (none). Returns 0, or -1 when out of memory.
 */
int sync_request_encode(enum sync_mode mode, const struct berval *cookie, bool reload_hint,
                        struct berval **out);

/* syncStateValue ::= SEQUENCE { state ENUMERATED, entryUUID syncUUID, cookie OPTIONAL }.
 * Returns 0 (cookie->bv_val NULL when absent), or -1 when malformed. */
int sync_state_decode(const struct berval *value, enum sync_state *state,
                      const unsigned char **uuid, struct berval *cookie);

/* syncDoneValue ::= SEQUENCE { cookie OPTIONAL, refreshDeletes BOOLEAN DEFAULT FALSE }.
 * Returns 0 or -1 (malformed). */
int sync_done_decode(const struct berval *value, struct berval *cookie, bool *refresh_deletes);

enum sync_info_kind {
	SYNC_INFO_NEW_COOKIE,      /* [0] newcookie */
	SYNC_INFO_REFRESH_DELETE,  /* [1] the refresh's delete phase ends (or goes on) */
	SYNC_INFO_REFRESH_PRESENT, /* [2] the present phase ends (or goes on) */
	SYNC_INFO_ID_SET,          /* [3] a set of entryUUIDs, present or deleted */
};

struct sync_info {
	enum sync_info_kind kind;
	struct berval cookie;        /* bv_val NULL when absent */
	bool refresh_done;           /* REFRESH_DELETE/_PRESENT: refreshDone (default TRUE) */
	bool refresh_deletes;        /* ID_SET: the UUIDs are deleted (else present) */
	const unsigned char **uuids; /* ID_SET: n pointers into the value, SYNC_UUID_LEN each */
	size_t n;
};

/*
 * syncInfoValue ::= CHOICE { newcookie [0], refreshDelete [1] SEQUENCE { cookie OPTIONAL,
 * refreshDone BOOLEAN DEFAULT TRUE }, refreshPresent [2] (the same), syncIdSet [3]
 * SEQUENCE { cookie OPTIONAL, refreshDeletes BOOLEAN DEFAULT FALSE, syncUUIDs SET OF
 * syncUUID } }. Returns 0 (info filled; sync_info_free it), or -1 when malformed or out of
 * memory (nothing to free).
 */
int sync_info_decode(const struct berval *value, struct sync_info *info);
void sync_info_free(struct sync_info *info);

/* --- a provider's side (protocol/sync_provide.c): what minidir answers a consumer with --- */

/*
 * A client's syncRequestValue (its mode, cookie and reloadHint), decoded strictly: the
 * value is the SEQUENCE whole, mode refreshOnly or refreshAndPersist. *cookie points into
 * value (bv_val NULL when absent). Returns 0, or -1 when malformed. Allocates nothing.
 */
int sync_request_decode(const struct berval *value, enum sync_mode *mode, struct berval *cookie,
                        bool *reload_hint);

/*
 * The parts of a cookie minidir reads (slapd's shape, "rid=NNN,sid=NNN,csn=CSN;CSN..."): its
 * rid (-1 when absent or not a number of 0..999) and its csn= value (the rest of the
 * cookie from "csn=", into cookie; bv_val NULL when absent). Never fails.
 */
void sync_cookie_parts(const struct berval *cookie, int *rid, struct berval *csns);

/*
 * Whether an entry whose entryCSN is csn[0..len) changed after the CSN set csns (a
 * cookie's csn= value, CSNs separated by ';'): true when its CSN is later than the set's
 * CSN of the same server ID (a CSN's third '#' field), or the set has none of that ID, or
 * csn is empty (an entry without a CSN is always sent).
 */
bool sync_csn_newer(const char *csn, size_t len, const struct berval *csns);

/* syncStateValue for an entry (cookie NULL: none). Returns 0 (*out liblber's: ber_bvfree)
 * or -1 when out of memory. */
int sync_state_encode(enum sync_state state, const unsigned char uuid[SYNC_UUID_LEN],
                      const struct berval *cookie, struct berval **out);
/* syncDoneValue. Returns 0 or -1 (out of memory). */
int sync_done_encode(const struct berval *cookie, bool refresh_deletes, struct berval **out);
/*
 * syncInfoValue of kind: NEW_COOKIE (cookie), REFRESH_DELETE or REFRESH_PRESENT (cookie
 * may be NULL, refresh_done), ID_SET (cookie may be NULL, refresh_deletes, n UUIDs at
 * uuids, SYNC_UUID_LEN bytes each). Returns 0 or -1 (out of memory).
 */
int sync_info_encode(enum sync_info_kind kind, const struct berval *cookie, bool flag,
                     const unsigned char *uuids, size_t n, struct berval **out);

#endif
