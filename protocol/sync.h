/*
 * The LDAP Content Synchronization operation (RFC 4533), a consumer's side: the
 * Sync Request control it sends with its search, and the Sync State control (on
 * entries), the Sync Done control (on SearchResultDone) and the Sync Info message
 * (an IntermediateResponse) a provider sends back. Encoded and decoded with liblber.
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

#endif
