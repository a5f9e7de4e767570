/*
 * The syncrepl consumer's state and how it applies what the provider sends
 * (server/replica/replica.c runs the sessions; see replica.h): the write transaction and
 * the cookie (txn.c), the present set of a refresh and one handler per kind of message
 * (apply.c). Private to the room (replica.c, txn.c, apply.c).
 *
 * Thread rules: the consumer's thread only, but for st (under lock).
 */
#ifndef MINIDIR_SERVER_REPLICA_APPLY_H
#define MINIDIR_SERVER_REPLICA_APPLY_H

#include <ldap.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "conf/syncrepl.h"
#include "server/replica/held.h"
#include "server/replica/status.h"
#include "storage/db.h"
#include "storage/provider_pwpolicy.h"

/* How a session ended (replica_on_done's results too). */
enum { SESSION_ERROR = -1, SESSION_DONE = 0, SESSION_STOPPED = 1, SESSION_RELOAD = 2 };

struct replica {
	struct server *srv;
	const struct syncrepl_conf *conf;
	struct db *db;
	pthread_t thread;
	int stop; /* atomic */
	pthread_mutex_t lock;
	struct replica_status st; /* under lock */
	char logged_error[256];   /* the failure logged last, until the consumer works again */
	/* Session state (the thread's own). */
	LDAP *ld;
	int msgid;
	bool drop_cookie;         /* e-syncRefreshRequired: the next search goes without one */
	struct db_write *txn;     /* the open write transaction, or NULL */
	int batched;              /* messages in txn */
	bool uncovered;           /* txn holds changes no cookie in it covers yet */
	uint64_t pending_changes; /* changes in txn; readers load it atomically */
	uint64_t pending_bytes;   /* bytes of the entries put in txn */
	uint64_t pieces;          /* of the refresh under way, committed before its end */
	uint64_t refresh_puts, refresh_deletes; /* in the refresh under way, for its log line */
	uint64_t refresh_held;                  /* of its puts, those held for their parent */
	/* Entries of the refresh under way that came before their parent (held.h):
	 * stored once it has come, at the end of a phase; while any is held the
	 * transaction does not commit. */
	struct held_set held;
	/* Entries skipped as too large (ENTRY_MAX_BYTES), until they come back smaller:
	 * left_out when entries below one were deleted or skipped with it, so that its
	 * return takes a full refresh (they are not sent again otherwise). Kept in the
	 * database (db_update_set_skipped) in the transaction that changes it, and read
	 * back from the last commit at start-up and when a transaction is aborted. */
	struct oversized {
		unsigned char uuid[SYNC_UUID_LEN];
		unsigned char left_out; /* 0 or 1 (stored as it is: 17 bytes each) */
	} * oversized;
	size_t noversized, cap_oversized;
	bool reload_after_commit; /* such an entry came back: reload in full once committed */
	/* Entries skipped in txn (not stored: the status counts them once it commits). */
	uint64_t pending_skipped;
	char pending_skipped_dn[512], pending_skipped_why[256];
	char pending_cookie[256];
	bool refreshing;        /* the refresh stage (not yet refreshDone) */
	char refresh_line[256]; /* what the refresh done in txn brought, logged at its commit */
	/* The session failed writing the database (an LMDB or system error: a full disk,
	 * DB_MAP_FULL): its retries back off (replica.c). 0 when not. */
	int storage_error;
	/* Called once after the first refresh has committed (replica.h); refreshed: the
	 * open transaction ends a refresh stage; announced: it was called. */
	void (*on_first_refresh)(struct server *srv);
	bool refreshed, announced;
	bool refresh_quiet; /* the refresh changed nothing: its line is a debug one */
	/* The search went without a cookie (initial content, or a reload after
	 * e-syncRefreshRequired): the replica's content is replaced, so at the refresh's end
	 * every entry not received goes, whichever phase the provider ended with. */
	bool full_refresh;
	unsigned char *present; /* UUIDs reported present in this present phase */
	size_t npresent, cap_present;
	/* The probe (replica.c): its message ID while its answer is awaited (0: none), when
	 * the last was asked (clock_ns()/1000000), and how often (ms; 0: never). */
	int probe_msgid;
	int64_t probe_last_ms;
	int probe_every_ms;
	char *attrs[64]; /* the attribute list configured */
	char attrs_buf[1024];
	bool attrs_default; /* it is "*,+" (the default): ds389_attrs() asks in its place */
	/* The provider's kind, found at each session's start (ds389.h); the list the
	 * session's search asks for (attrs or ds389_attrs()). */
	bool is389, kind_known; /* kind_known: it was found once (logged when it changes) */
	char **search_attrs;
	/* A 389-ds refresh from a cookie: the UUIDs it stored, asked again before it
	 * commits (apply.c, ds389_refetch). */
	unsigned char *refetch;
	size_t nrefetch, cap_refetch;
	/* A 389-ds provider's last change number, as its root DSE said it last (-1:
	 * unknown): the lag in changes is it minus the committed cookie's (txn.c). */
	long long provider_last;
	/* A DirSync provider (dirsync.h): its highestCommittedUSN when the poll under way
	 * began, and when the last committed one did (-1: unknown); the lag in changes is
	 * provider_last minus the latter. dirsync_flags: the control's flags (OBJECT_SECURITY
	 * once the DC refused the account the replication right). */
	long long poll_usn, committed_usn;
	int dirsync_flags;
	/* A uSNChanged provider (usn.h): whether this account's view of CN=Deleted Objects
	 * was checked, whether it sees no tombstones, and whether the DC's invocationId could
	 * not be read (each of the last two logged once). */
	bool deleted_checked, deleted_unseen, invocation_unread;
	/* When the replica's entries were last compared with the provider's (a full refresh
	 * or replica_reconcile; clock_ns()/1000000). */
	int64_t reconciled_ms;
	/* A 389-ds provider's global password policy as this process last recorded it in the
	 * file (known false: not yet), and whether its being unreadable was logged
	 * (ds389_policy.c). */
	struct provider_pwpolicy ds_policy;
	bool ds_policy_unread_logged;
};

/* --- txn.c: the write transaction, the cookie, the status it publishes ---------------- */

/* The status as the database file has it before any session: the stored cookie (so
 * cn=replication and the root DSE's contextCSN report it from the start), and the
 * entries skipped as too large. */
void replica_status_load(struct replica *r);

/* Counts one change (a put or a delete) in the open write transaction. */
void replica_count_change(struct replica *r);

/* True once replica_stop asked the thread to end. */
bool replica_stopping(struct replica *r);

/*
 * Sets the state ("refreshing", "persisting", ...) and, when error is not NULL, the
 * last error. A failure is logged once, not at every retry: again only when its reason
 * changes, or after the consumer worked in between, which is logged too.
 */
void replica_set_state(struct replica *r, const char *state, const char *error);

/* The write transaction that collects changes until a cookie covers them: opened when
 * none is (0 or an LMDB error), aborted (changes no cookie covers are dropped), or
 * committed with what its cookie covers (0 or an LMDB error; the status follows). */
int replica_txn_open(struct replica *r);
void replica_txn_abort(struct replica *r);
int replica_txn_commit(struct replica *r);

/* In a refresh, once the open transaction holds 20,000 changes or 32 MiB of entries: a
 * commit of it as it is, under the cookie stored last (see txn.c for when not). 0 (also
 * when nothing is due), or -1 with why set (r->storage_error: the write failed). Readers
 * see a large refresh arrive in pieces; the cookie moves only with its last. */
int replica_txn_piece(struct replica *r, char *why, size_t cap);

/*
 * sync_provider's feed (server/change_feed.h; nothing without it): the entry uuid is stored
 * or, deleted, about to be deleted in the open transaction, with its DN as it stands (none
 * when it is not here: consumers find entries by UUID). Entries deleted below it have their
 * own deletes (a provider deletes leaves first; a present phase names each). 0, or -1 when
 * out of memory (why set).
 */
int replica_feed_note(struct replica *r, const unsigned char *uuid, bool deleted, char *why,
                      size_t cap);

/* Stores cookie (none when its bv_val is NULL: 0) in the open transaction, which then
 * holds no change it does not cover; it reaches the status at the commit. 0 or an LMDB
 * error. */
int replica_set_cookie(struct replica *r, const struct berval *cookie);

/* The cookie the last commit stored into out (reset first; empty: none, r->drop_cookie
 * set, or out of memory: each a full refresh). */
struct buf;
void replica_stored_cookie(struct replica *r, struct buf *out);

/* The provider's last change number (a 389-ds root DSE's lastchangenumber) is last: the
 * status's lag in changes follows. */
void replica_note_provider_last(struct replica *r, long long last);

/* True (once) when what was committed last needs a full refresh to follow: an entry
 * skipped as too large came back, and entries below it were left out meanwhile. */
bool replica_reload_due(struct replica *r);

/* --- apply.c: the provider's messages ---------------------------------------------- */

/*
 * The handlers of a SearchResultEntry (its Sync State: add, modify, delete, present), an
 * IntermediateResponse (Sync Info) and the SearchResultDone, inside the open write
 * transaction. The first two return 0, or -1 with the reason in why; replica_on_done
 * returns a SESSION_* outcome.
 */
int replica_on_entry(struct replica *r, LDAPMessage *m, char *why, size_t cap);
int replica_on_info(struct replica *r, LDAPMessage *m, char *why, size_t cap);
int replica_on_done(struct replica *r, LDAPMessage *m, char *why, size_t cap);

/*
 * For a way of following that is not RFC 4533's (dirsync.c), in the open transaction
 * of a refresh (r->refreshing; r->full_refresh when it started from no cookie):
 * replica_put stores an entry (uuid, dn, the content of its PartialAttributeList),
 * holding it when its parent has not come yet, skipping it (logged, counted) when too
 * large; replica_delete deletes one (and what is below it; one not held is no error);
 * replica_refresh_end ends the refresh: the held entries stored or skipped, and after a
 * full refresh every entry not put deleted. Each returns 0, or -1 with why set.
 */
/* m's attributes as the content of its PartialAttributeList, in place in the message
 * (valid while m is); *berp is the reader to free (ber_free(*berp, 0)). 0 or -1. */
int replica_entry_attrs(LDAP *ld, LDAPMessage *m, struct berval *out, BerElement **berp);

int replica_put(struct replica *r, const unsigned char *uuid, const char *dn,
                const unsigned char *attrs, size_t len, char *why, size_t cap);
int replica_delete(struct replica *r, const unsigned char *uuid, char *why, size_t cap);
int replica_refresh_end(struct replica *r, char *why, size_t cap);

/*
 * Compares the replica's entries with those the provider selects now (a 389-ds provider:
 * ds389_list_ids) and deletes those it no longer has: an entry modified out of the
 * filter, or whose change left the changelog, while the replica was away. In a write
 * transaction of its own, committed (none may be open). 0, or -1 with why set (a
 * partial list deletes nothing).
 */
int replica_reconcile(struct replica *r, char *why, size_t cap);

/* --- ds389_policy.c ------------------------------------------------------------------ */

/*
 * Reads a 389-ds provider's global password policy (its cn=config) on r->ld and, when it
 * differs from what this process recorded, records it in the file (storage/
 * provider_pwpolicy.h: in the open transaction, else one of its own) and logs it. A
 * policy the bind account may not read is logged once and leaves the file's as it was.
 * 0, or -1 with why set (the file could not be written).
 */
int replica_ds389_policy(struct replica *r, char *why, size_t cap);

/*
 * memberof_nested = auto on a file with no entries yet, its provider 389-ds: makes the file
 * hold nested memberOf (storage/memberof_nested.h), as 389-ds's memberOf plugin computes
 * it, logged. 0, or -1 with why set (the file could not be written).
 */
int replica_ds389_nesting(struct replica *r, char *why, size_t cap);

#endif
