/*
 * The syncrepl consumer's write transaction and what its commit publishes (see apply.h):
 * opening, aborting and committing it, the cookie it stores, and the status (cookie,
 * contextCSN, lag, counts, skipped entries) read back from the last commit. apply.c
 * writes the changes into the transaction; replica.c runs the sessions around both.
 */
#include "server/replica/apply.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/buf.h"
#include "server/change_feed.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/server.h"
#include "server/replica/ds389.h"
#include "storage/db_update.h"

void replica_count_change(struct replica *r)
{
	__atomic_store_n(&r->pending_changes, r->pending_changes + 1, __ATOMIC_RELAXED);
	r->uncovered = true;
}

bool replica_stopping(struct replica *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Sets the state. A failure is logged once, not at every retry: again only when its
 * reason changes, or after the consumer worked (persisting, or a refresh done) in between,
 * which is logged too.
 */
void replica_set_state(struct replica *r, const char *state, const char *error)
{
	pthread_mutex_lock(&r->lock);
	bool changed = strcmp(r->st.state, state) != 0;
	r->st.state = state;
	if (changed)
		r->st.state_since_ms = (int64_t)(clock_ns() / 1000000);
	if (error)
		snprintf(r->st.last_error, sizeof(r->st.last_error), "%s", error);
	pthread_mutex_unlock(&r->lock);
	if (error) {
		if (strcmp(error, r->logged_error) != 0)
			log_error("syncrepl rid=%03d %s: %s", r->conf->rid, r->conf->provider,
			          error);
		snprintf(r->logged_error, sizeof(r->logged_error), "%s", error);
		return;
	}
	bool working = strcmp(state, "persisting") == 0 || strcmp(state, "idle") == 0;
	if (working && r->logged_error[0])
		log_info("syncrepl rid=%03d: %s again (after: %s)", r->conf->rid, state,
		         r->logged_error);
	else if (changed && strcmp(state, "persisting") == 0)
		log_info("syncrepl rid=%03d: %s", r->conf->rid, state);
	else if (changed)
		log_debug("syncrepl rid=%03d: %s", r->conf->rid, state);
	if (working)
		r->logged_error[0] = '\0';
}

/* ---- the write transaction ------------------------------------------------------ */

static void load_committed(struct replica *r, bool status);

int replica_txn_open(struct replica *r)
{
	if (r->txn)
		return 0;
	int rc = db_write_begin(r->db, &r->txn);
	if (rc) {
		r->txn = NULL;
		return rc;
	}
	r->batched = 0;
	r->pending_bytes = 0;
	r->uncovered = false;
	__atomic_store_n(&r->pending_changes, 0, __ATOMIC_RELAXED);
	r->pending_cookie[0] = '\0';
	r->pending_skipped = 0;
	return 0;
}

void replica_txn_abort(struct replica *r)
{
	if (r->txn)
		db_write_abort(r->txn);
	r->txn = NULL;
	r->refreshed = false;
	__atomic_store_n(&r->pending_changes, 0, __ATOMIC_RELAXED);
	r->pending_skipped = 0;
	r->reload_after_commit = false;
	held_clear(&r->held); /* the next session receives them again */
	if (r->srv->feed)
		change_feed_discard(r->srv->feed);
	load_committed(r, false);
}

bool replica_reload_due(struct replica *r)
{
	/* (not between the pieces of a refresh: once it has ended) */
	if (r->txn || r->refreshing || !r->reload_after_commit)
		return false;
	r->reload_after_commit = false;
	return true;
}

/*
 * A cookie as the status shows it (cap bytes with the NUL): an RFC 4533 provider's as it
 * is (text); one with bytes that are not printable (a DirSync cookie, server/replica/
 * dirsync.h) as "base64:" and its base64, cut to fit.
 */
static void cookie_text(const unsigned char *data, size_t len, char *out, size_t cap)
{
	bool text = true;
	for (size_t i = 0; i < len && text; i++)
		text = data[i] >= 0x20 && data[i] < 0x7f;
	if (text) {
		snprintf(out, cap, "%.*s", (int)len, (const char *)data);
		return;
	}
	size_t head = strlen("base64:"), fits = (cap - head - 1) / 4 * 3;
	memcpy(out, "base64:", head);
	EVP_EncodeBlock((unsigned char *)out + head, data, (int)(len < fits ? len : fits));
}

/* The csn= part of a cookie (rid=001,csn=...;...) into out. */
static void cookie_csn(const char *cookie, char *out, size_t cap)
{
	const char *p = strstr(cookie, "csn=");
	out[0] = '\0';
	if (!p)
		return;
	p += 4;
	size_t n = strcspn(p, ",;");
	snprintf(out, cap, "%.*s", (int)n, p);
}

/* A CSN's time (YYYYmmddHHMMSS.ffffffZ#...) in milliseconds since the epoch, or -1. */
static int64_t csn_ms(const char *csn)
{
	struct tm tm = {0};
	unsigned usec = 0;
	if (sscanf(csn, "%4d%2d%2d%2d%2d%2d.%6uZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &usec) != 7)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + usec / 1000;
}

/* r->oversized as txn has it (none when the stored value does not parse). */
static void load_oversized(struct replica *r, struct db_read *txn)
{
	const void *data;
	size_t len;
	r->noversized = 0;
	if (db_update_get_skipped(r->db, txn, &data, &len) != 0 || len % sizeof(*r->oversized) != 0)
		return;
	size_t n = len / sizeof(*r->oversized);
	if (n > r->cap_oversized) {
		struct oversized *v = realloc(r->oversized, len);
		if (!v) {
			log_error("syncrepl rid=%03d: out of memory reading the skipped entries",
			          r->conf->rid);
			return;
		}
		r->oversized = v;
		r->cap_oversized = n;
	}
	memcpy(r->oversized, data, len);
	r->noversized = n;
}

/* What the last commit holds: the cookie into the status when status, and the entries
 * skipped as too large. */
static void load_committed(struct replica *r, bool status)
{
	struct db_read *rt;
	const void *data;
	size_t len;
	if (db_read_begin(r->db, &rt) != 0)
		return;
	if (status && db_update_get_cookie(r->db, rt, &data, &len) == 0) {
		pthread_mutex_lock(&r->lock);
		cookie_text(data, len, r->st.cookie, sizeof(r->st.cookie));
		cookie_csn(r->st.cookie, r->st.context_csn, sizeof(r->st.context_csn));
		pthread_mutex_unlock(&r->lock);
	}
	load_oversized(r, rt);
	db_read_end(rt);
}

void replica_status_load(struct replica *r)
{
	load_committed(r, true);
}

/* The lag in changes: the provider's last change number minus the committed cookie's
 * (a 389-ds provider's), or a DirSync provider's highestCommittedUSN minus the one it had
 * when the last committed poll began; -1 when either is unknown. Under r->lock. */
static void lag_changes_locked(struct replica *r)
{
	long long n = syncrepl_is_ad(r->conf) ? r->committed_usn
	                                      : ds389_cookie(r->st.cookie, strlen(r->st.cookie)),
	          last = r->provider_last;
	r->st.lag_changes = last < 0 || n < 0 ? -1 : last > n ? last - n : 0;
}

void replica_note_provider_last(struct replica *r, long long last)
{
	pthread_mutex_lock(&r->lock);
	r->provider_last = last;
	lag_changes_locked(r);
	pthread_mutex_unlock(&r->lock);
}

/* Commits the open transaction and publishes what it holds (the status, the log line of
 * a refresh it ends). 0 or an LMDB error (the transaction is gone either way). */
static int commit_open(struct replica *r)
{
	size_t entries = 0;
	bool counted = db_entry_count(r->db, db_write_reads(r->txn), &entries) == 0;
	int rc = db_write_commit(r->txn);
	r->txn = NULL;
	if (rc)
		return rc;
	/* The count cn=monitor and /metrics read (db.h: atomic once a replica changes it). */
	if (counted)
		__atomic_store_n(&r->db->entries, entries, __ATOMIC_RELAXED);
	pthread_mutex_lock(&r->lock);
	if (r->pending_changes) {
		r->st.changes += r->pending_changes;
		r->st.last_change = time(NULL);
	}
	if (r->pending_cookie[0]) {
		snprintf(r->st.cookie, sizeof(r->st.cookie), "%s", r->pending_cookie);
		if (syncrepl_is_ad(r->conf))
			r->committed_usn = r->poll_usn;
		cookie_csn(r->st.cookie, r->st.context_csn, sizeof(r->st.context_csn));
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		int64_t at = csn_ms(r->st.context_csn);
		if (r->pending_changes && at >= 0)
			r->st.lag_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - at;
		lag_changes_locked(r);
	}
	if (r->pending_skipped) {
		r->st.skipped += r->pending_skipped;
		snprintf(r->st.last_skipped, sizeof(r->st.last_skipped), "%s",
		         r->pending_skipped_dn);
		snprintf(r->st.last_skipped_why, sizeof(r->st.last_skipped_why), "%s",
		         r->pending_skipped_why);
		r->pending_skipped = 0;
	}
	if (r->refreshed)
		r->st.refreshes++;
	__atomic_store_n(&r->pending_changes, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	/* st.cookie is this thread's to write: read here without the lock. Out of memory,
	 * the feed moves its readers behind (they refresh again). */
	if (r->srv->feed)
		(void)change_feed_publish(r->srv->feed, r->st.cookie, strlen(r->st.cookie));
	if (r->refreshed && r->refresh_quiet)
		log_debug("syncrepl rid=%03d: %s", r->conf->rid, r->refresh_line);
	else if (r->refreshed)
		log_info("syncrepl rid=%03d: %s", r->conf->rid, r->refresh_line);
	if (r->refreshed && !r->announced) {
		r->announced = true;
		if (r->on_first_refresh)
			r->on_first_refresh(r->srv);
	}
	r->refreshed = false;
	return 0;
}

/* Commits when every change in the transaction is covered by a cookie in it (and no
 * entry waits for its parent). */
int replica_txn_commit(struct replica *r)
{
	if (!r->txn || r->uncovered || r->held.n)
		return 0;
	return commit_open(r);
}

/*
 * A piece of a refresh: LMDB caps what one transaction may change (its dirty pages: a
 * refresh of about 500,000 entries of 1 KB from nothing failed with MDB_TXN_FULL at
 * the 502,392nd), and until the commit each changed page is a copy in memory. Pieces are
 * committed under the cookie stored last, which the provider sends them all again from:
 * every change applies again as the same state (a put replaces the entry, a delete of an
 * entry not there is none). Not for a 389-ds refresh from a cookie, whose entries are
 * asked again before it commits (apply.c's refetch), nor an Active Directory poll from a
 * cookie, which merges changed attributes into the stored entries (dirsync_merge.h).
 */
#define PIECE_CHANGES 20000
#define PIECE_BYTES ((uint64_t)32 << 20)

int replica_txn_piece(struct replica *r, char *why, size_t cap)
{
	if (!r->txn || !r->refreshing)
		return 0;
	if ((r->is389 || syncrepl_is_ad(r->conf)) && !r->full_refresh)
		return 0;
	if (r->pending_changes < PIECE_CHANGES && r->pending_bytes < PIECE_BYTES)
		return 0;
	r->pieces++;
	int rc = commit_open(r);
	if (rc) {
		r->storage_error = db_write_error(r->db, rc);
		snprintf(why, cap, "commit: %s", db_error_text(r->storage_error));
		return -1;
	}
	return 0;
}

int replica_feed_note(struct replica *r, const unsigned char *uuid, bool deleted, char *why,
                      size_t cap)
{
	struct change_feed *feed = r->srv->feed;
	if (!feed)
		return 0;
	struct db_read *rt = db_write_reads(r->txn);
	entry_id id;
	struct entry_view e;
	bool named = deleted && db_uuid2id(r->db, rt, uuid, &id) == 0 &&
	             db_get_entry(r->db, rt, id, &e) == 0;
	if (change_feed_note(feed, uuid, deleted, named ? (const char *)e.dn : NULL,
	                     named ? e.dnlen : 0) == 0)
		return 0;
	snprintf(why, cap, "sync_provider's change feed: out of memory");
	return -1;
}

void replica_stored_cookie(struct replica *r, struct buf *out)
{
	struct db_read *rt;
	const void *data;
	size_t len;
	out->off = out->len = 0;
	if (r->drop_cookie || db_read_begin(r->db, &rt) != 0)
		return;
	if (db_update_get_cookie(r->db, rt, &data, &len) == 0)
		(void)buf_append(out, data, len);
	db_read_end(rt);
}

int replica_set_cookie(struct replica *r, const struct berval *cookie)
{
	if (!cookie->bv_val)
		return 0;
	int rc = db_update_set_cookie(r->db, r->txn, cookie->bv_val, cookie->bv_len);
	if (rc == 0) {
		r->uncovered = false;
		cookie_text((const unsigned char *)cookie->bv_val, cookie->bv_len,
		            r->pending_cookie, sizeof(r->pending_cookie));
	}
	return rc;
}
