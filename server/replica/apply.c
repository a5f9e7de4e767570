/*
 * How the syncrepl consumer applies what its provider sends (see apply.h): each entry's
 * Sync State (add, modify, delete, present), the Sync Info messages that end a refresh
 * phase, and the result that ends a session, written into the open write transaction
 * (txn.c); entries skipped as too large, and those held for their parent (held.h).
 */
#include "server/replica/apply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/sync.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/server.h"
#include "server/replica/ds389.h"
#include "storage/db_update.h"

/* ---- changes -------------------------------------------------------------------- */

/* uuid into the present set; -1 when out of memory. */
static int add_present(struct replica *r, const unsigned char *uuid)
{
	if (r->npresent == r->cap_present) {
		size_t cap = r->cap_present ? 2 * r->cap_present : 1024;
		unsigned char *p = realloc(r->present, cap * SYNC_UUID_LEN);
		if (!p)
			return -1;
		r->present = p;
		r->cap_present = cap;
	}
	memcpy(r->present + r->npresent++ * SYNC_UUID_LEN, uuid, SYNC_UUID_LEN);
	return 0;
}

static void note_present(struct replica *r, const unsigned char *uuid)
{
	if (!r->refreshing)
		return; /* persisting: no present phase to end */
	/* Out of memory, the entry is deleted at the phase's end, and comes back with the
	 * next refresh: never a phantom. */
	(void)add_present(r, uuid);
}

static int uuid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, SYNC_UUID_LEN);
}

/* Deletes the entry uuid and what is below it; one already gone is no error. */
static int delete_uuid(struct replica *r, const unsigned char *uuid, char *why, size_t cap)
{
	struct db_update_error e;
	if (replica_feed_note(r, uuid, true, why, cap) < 0)
		return -1;
	int rc = db_update_delete(r->db, r->txn, uuid, DB_UPDATE_SUBTREE, &e);
	if (rc == LDAP_NO_SUCH_OBJECT)
		return 0;
	if (rc) {
		snprintf(why, cap, "delete: %.400s", e.msg);
		if (rc == LDAP_OTHER && e.mdb)
			r->storage_error = db_write_error(r->db, e.mdb);
		return -1;
	}
	replica_count_change(r);
	r->refresh_deletes++;
	return 0;
}

/* The entries a present phase found not reported present: their UUIDs, SYNC_UUID_LEN
 * bytes each. */
struct gone_list {
	const struct replica *r;
	unsigned char *uuids;
	size_t n, cap;
};

/* db_foreach_uuid's fn: notes uuid when the provider did not report it present; stops
 * (out of memory) when it cannot. */
static int note_gone(const unsigned char uuid[16], void *arg)
{
	struct gone_list *g = arg;
	if (bsearch(uuid, g->r->present, g->r->npresent, SYNC_UUID_LEN, uuid_cmp))
		return 0;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		unsigned char *p = realloc(g->uuids, cap * SYNC_UUID_LEN);
		if (!p)
			return 1;
		g->uuids = p;
		g->cap = cap;
	}
	memcpy(g->uuids + g->n++ * SYNC_UUID_LEN, uuid, SYNC_UUID_LEN);
	return 0;
}

/* The end of a present phase: every local entry not reported present goes. */
static int end_present_phase(struct replica *r, char *why, size_t cap)
{
	qsort(r->present, r->npresent, SYNC_UUID_LEN, uuid_cmp);
	struct gone_list g = {.r = r};
	int rc = db_foreach_uuid(r->db, db_write_reads(r->txn), note_gone, &g);
	unsigned char *gone = g.uuids;
	size_t ngone = g.n;
	if (rc == DB_STOPPED)
		rc = ENOMEM;
	int status = 0;
	if (rc != 0) {
		snprintf(why, cap, "present phase: %s", db_error_text(rc));
		status = -1;
	}
	for (size_t i = 0; i < ngone && status == 0; i++)
		status = delete_uuid(r, gone + i * SYNC_UUID_LEN, why, cap);
	if (status == 0 && ngone)
		log_info("syncrepl rid=%03d: %zu entries not on the provider any more: deleted",
		         r->conf->rid, ngone);
	free(gone);
	r->npresent = 0;
	return status;
}

/*
 * The entry's attributes as the content of its PartialAttributeList, in place in the
 * message (valid while m is): the attribute SEQUENCEs that follow the DN, up to the
 * controls ([0]) or the end. One pass over bytes libldap has already read, where asking for
 * each attribute's values (ldap_get_values_len) scanned the entry again from its start
 * each time. *berp is the reader to free (ber_free(*berp, 0)). Returns 0 or -1.
 */
int replica_entry_attrs(LDAP *ld, LDAPMessage *m, struct berval *out, BerElement **berp)
{
	struct berval dn, el;
	*out = (struct berval){0, NULL};
	if (ldap_get_dn_ber(ld, m, berp, &dn) != LDAP_SUCCESS)
		return -1;
	const char *start = NULL, *end = NULL;
	ber_len_t len;
	while (ber_peek_tag(*berp, &len) == LBER_SEQUENCE &&
	       ber_skip_raw(*berp, &el) != LBER_DEFAULT) {
		if (!start)
			start = el.bv_val;
		end = el.bv_val + el.bv_len;
	}
	if (start)
		*out = (struct berval){(ber_len_t)(end - start), (char *)start};
	return 0;
}

/* An entry that holds dn under another UUID goes first (deleted on the provider, and the
 * DN taken again since: the refresh reports the new one before the present phase ends). */
static int free_dn(struct replica *r, const char *dn, char *why, size_t cap)
{
	struct buf key = {0};
	entry_id id;
	struct entry_view e;
	int rc = dn_normalize(dn, strlen(dn), NULL, &key) < 0 ? -1
	         : db_dn2id(r->db, db_write_reads(r->txn), key.data, key.len, &id) ||
	                 db_get_entry(r->db, db_write_reads(r->txn), id, &e)
	             ? -1
	             : 0;
	buf_free(&key);
	if (rc < 0) {
		snprintf(why, cap, "put %s: another entry holds the DN", dn);
		return -1;
	}
	unsigned char uuid[SYNC_UUID_LEN];
	memcpy(uuid, e.uuid, SYNC_UUID_LEN);
	return delete_uuid(r, uuid, why, cap);
}

/*
 * An entry the replica goes on without: its stored copy (if any) is deleted with what is
 * below it, so that nothing stale is served; counted and logged with its DN and why.
 * Returns 0, or -1 (an LMDB error) with why set.
 */
static int skip_entry(struct replica *r, const unsigned char *uuid, const char *dn,
                      const char *reason, char *why, size_t cap)
{
	size_t before = 0, after = 0;
	db_entry_count(r->db, db_write_reads(r->txn), &before);
	if (delete_uuid(r, uuid, why, cap) < 0)
		return -1;
	db_entry_count(r->db, db_write_reads(r->txn), &after);
	r->pending_skipped++;
	snprintf(r->pending_skipped_dn, sizeof(r->pending_skipped_dn), "%s", dn);
	snprintf(r->pending_skipped_why, sizeof(r->pending_skipped_why), "%s", reason);
	char gone[96] = "";
	if (before > after)
		snprintf(gone, sizeof(gone),
		         "; its stored copy deleted (%zu entries with those below it)",
		         before - after);
	log_error("syncrepl rid=%03d: entry \"%s\" not stored, skipped: %s%s", r->conf->rid, dn,
	          reason, gone);
	return before > after ? (long)(before - after) : 0;
}

/* r->oversized into the open transaction. 0, or -1 with why set. */
static int save_oversized(struct replica *r, char *why, size_t cap)
{
	int rc = db_update_set_skipped(r->db, r->txn, r->oversized,
	                               r->noversized * sizeof(*r->oversized));
	if (rc)
		snprintf(why, cap, "storing the skipped entries: %s", db_error_text(rc));
	return rc ? -1 : 0;
}

/* The entry's place in r->oversized, or NULL. */
static struct oversized *find_oversized(struct replica *r, const unsigned char *uuid)
{
	for (size_t i = 0; i < r->noversized; i++)
		if (memcmp(r->oversized[i].uuid, uuid, SYNC_UUID_LEN) == 0)
			return &r->oversized[i];
	return NULL;
}

/* An entry skipped as too large; left_out: entries below it went too. Returns 0, or -1
 * with why set. */
static int note_oversized(struct replica *r, const unsigned char *uuid, bool left_out, char *why,
                          size_t cap)
{
	struct oversized *o = find_oversized(r, uuid);
	if (!o && r->noversized == r->cap_oversized) {
		size_t n = r->cap_oversized ? 2 * r->cap_oversized : 8;
		struct oversized *v = realloc(r->oversized, n * sizeof(*v));
		if (!v) {
			snprintf(why, cap, "out of memory noting a skipped entry");
			return -1;
		}
		r->oversized = v;
		r->cap_oversized = n;
	}
	if (!o) {
		o = &r->oversized[r->noversized++];
		*o = (struct oversized){.left_out = 0};
		memcpy(o->uuid, uuid, SYNC_UUID_LEN);
	}
	o->left_out |= left_out;
	return save_oversized(r, why, cap);
}

/* An entry is stored: if it was skipped as too large before, it is no more (and if
 * entries below it were left out, a full refresh follows the commit). 0 or -1. */
static int stored_oversized(struct replica *r, const unsigned char *uuid, char *why, size_t cap)
{
	struct oversized *o = find_oversized(r, uuid);
	if (!o)
		return 0;
	if (o->left_out) {
		r->reload_after_commit = true;
		log_info("syncrepl rid=%03d: an entry skipped as too large is stored now; entries "
		         "below it were left out: a full refresh follows",
		         r->conf->rid);
	}
	*o = r->oversized[--r->noversized];
	return save_oversized(r, why, cap);
}

/* What store_entry did. */
enum { STORE_FAILED = -1, STORED, STORE_HELD, STORE_NO_PARENT, STORE_SKIPPED };

/*
 * Stores the entry (uuid, dn, the PartialAttributeList's content): one that holds dn
 * under another UUID goes first (free_dn). An entry whose parent is not there yet is
 * held when hold is true (a refresh, whose order is the provider's entry IDs), else
 * STORE_NO_PARENT is returned (nothing written). STORE_FAILED sets why.
 */
static int store_entry(struct replica *r, const unsigned char *uuid, const char *dn,
                       const unsigned char *attrs, size_t len, bool hold, char *why, size_t cap)
{
	struct db_update_error e;
	size_t dnlen = strlen(dn);
	int rc = db_update_put(r->db, r->txn, uuid, dn, dnlen, attrs, len, DB_UPDATE_NO_SCHEMA, &e);
	if (rc == LDAP_ALREADY_EXISTS) {
		if (free_dn(r, dn, why, cap) < 0)
			return STORE_FAILED;
		rc = db_update_put(r->db, r->txn, uuid, dn, dnlen, attrs, len, DB_UPDATE_NO_SCHEMA,
		                   &e);
	}
	if (rc == LDAP_ADMINLIMIT_EXCEEDED) { /* over ENTRY_MAX_BYTES: the stream goes on */
		long gone = skip_entry(r, uuid, dn, e.msg, why, cap);
		if (gone < 0)
			return STORE_FAILED;
		return note_oversized(r, uuid, gone > 1, why, cap) < 0 ? STORE_FAILED
		                                                       : STORE_SKIPPED;
	}
	if (rc == LDAP_NO_SUCH_OBJECT && !hold)
		return STORE_NO_PARENT;
	if (rc == LDAP_NO_SUCH_OBJECT) {
		if (held_add(&r->held, uuid, dn, attrs, len) < 0) {
			snprintf(why, cap, "put %.200s: out of memory", dn);
			return STORE_FAILED;
		}
		r->refresh_held++;
		return STORE_HELD;
	}
	if (rc) {
		snprintf(why, cap, "put %.200s: %.250s", dn, e.msg);
		if (rc == LDAP_OTHER && e.mdb)
			r->storage_error = db_write_error(r->db, e.mdb);
		return STORE_FAILED;
	}
	replica_count_change(r);
	r->pending_bytes += len;
	r->refresh_puts++;
	if (replica_feed_note(r, uuid, false, why, cap) < 0)
		return STORE_FAILED;
	if (r->noversized && stored_oversized(r, uuid, why, cap) < 0)
		return STORE_FAILED;
	return STORED;
}

/*
 * An entry whose parent is not there (and will not come) is skipped. Its parent may be an
 * entry skipped as too large: each of those then takes a full refresh when it comes
 * back, to bring this one with it. 0, or -1 with why set.
 */
static int skip_orphan(struct replica *r, const unsigned char *uuid, const char *dn,
                       const char *reason, char *why, size_t cap)
{
	if (r->noversized) {
		for (size_t i = 0; i < r->noversized; i++)
			r->oversized[i].left_out = 1;
		if (save_oversized(r, why, cap) < 0)
			return -1;
	}
	return skip_entry(r, uuid, dn, reason, why, cap) < 0 ? -1 : 0;
}

/* held_sweep's callers' state: the replica, and where a failure's reason goes. */
struct sweep {
	struct replica *r;
	char *why;
	size_t cap;
};

/* An entry held for its parent, stored if the parent is there now: 1 taken, 0 not yet. */
static int store_held(void *arg, struct held_entry *h)
{
	struct sweep *w = arg;
	int got = store_entry(w->r, h->uuid, h->dn, h->attrs, h->attrslen, false, w->why, w->cap);
	return got == STORE_FAILED ? -1 : got == STORE_NO_PARENT ? 0 : 1;
}

/* An entry whose parent never came: skipped (logged). */
static int skip_held(void *arg, struct held_entry *h)
{
	struct sweep *w = arg;
	return skip_orphan(w->r, h->uuid, h->dn,
	                   "its parent entry did not come in the refresh (not replicated?)", w->why,
	                   w->cap) < 0
	           ? -1
	           : 1;
}

/*
 * At the end of a refresh phase: stores the held entries whose parent has come, in rounds
 * until none more can be (a parent may be held itself). When last (the refresh ends),
 * those whose parent never came are skipped. Returns 0, or -1 with why set.
 */
static int apply_held(struct replica *r, bool last, char *why, size_t cap)
{
	struct sweep w = {r, why, cap};
	/* Each pass stores the entries whose parent is there now: as many passes as the
	 * held entries are levels deep, each one pass over them (held_sweep). */
	for (long got = 1; got > 0 && r->held.n;)
		if ((got = held_sweep(&r->held, store_held, &w)) < 0)
			return -1;
	if (last && r->held.n && held_sweep(&r->held, skip_held, &w) < 0)
		return -1;
	return 0;
}

/* Notes uuid as stored by a 389-ds refresh from a cookie, to be asked again (ds389.h). 0,
 * or -1 when out of memory (why set). */
static int note_refetch(struct replica *r, const unsigned char *uuid, char *why, size_t cap)
{
	if (r->nrefetch == r->cap_refetch) {
		size_t n = r->cap_refetch ? 2 * r->cap_refetch : 256;
		unsigned char *p = realloc(r->refetch, n * SYNC_UUID_LEN);
		if (!p) {
			snprintf(why, cap, "out of memory noting an entry to ask again");
			return -1;
		}
		r->refetch = p;
		r->cap_refetch = n;
	}
	memcpy(r->refetch + r->nrefetch++ * SYNC_UUID_LEN, uuid, SYNC_UUID_LEN);
	return 0;
}

/* ds389_refetch's store: the entry as it is now, operational attributes and all. An entry
 * moved meanwhile under a parent not here yet (STORE_NO_PARENT) keeps the refresh's copy:
 * the change that moved it comes next. */
static int store_refetched(void *arg, LDAPMessage *e, const unsigned char *uuid, const char *dn,
                           char *why, size_t cap)
{
	struct replica *r = arg;
	struct berval attrs;
	BerElement *ber = NULL;
	int got = STORE_FAILED;
	if (replica_entry_attrs(r->ld, e, &attrs, &ber) == 0)
		got = store_entry(r, uuid, dn, (const unsigned char *)attrs.bv_val, attrs.bv_len,
		                  false, why, cap);
	else
		snprintf(why, cap, "asking again for %.200s: out of memory", dn);
	ber_free(ber, 0);
	return got == STORE_FAILED ? -1 : 0;
}

/* The entries note_refetch noted, asked again and stored; counted as the refresh's
 * changes once, not twice. 0, or -1 with why set. */
static int refetch(struct replica *r, char *why, size_t cap)
{
	uint64_t puts = r->refresh_puts, pending = r->pending_changes;
	int status = ds389_refetch(r->ld, r->conf, r->search_attrs, r->refetch, r->nrefetch,
	                           store_refetched, r, why, cap);
	r->nrefetch = 0;
	r->refresh_puts = puts;
	__atomic_store_n(&r->pending_changes, pending, __ATOMIC_RELAXED);
	return status;
}

int replica_on_entry(struct replica *r, LDAPMessage *m, char *why, size_t cap)
{
	LDAPControl **ctrls = NULL;
	char *dn = ldap_get_dn(r->ld, m);
	int status = -1;
	enum sync_state state;
	const unsigned char *uuid;
	struct berval cookie = {0, NULL};
	LDAPControl *c = ldap_get_entry_controls(r->ld, m, &ctrls) == LDAP_SUCCESS
	                     ? ldap_control_find(SYNC_STATE_OID, ctrls, NULL)
	                     : NULL;
	if (!dn || !c || sync_state_decode(&c->ldctl_value, &state, &uuid, &cookie) < 0) {
		snprintf(why, cap, "entry %s: %s", dn ? dn : "?", "no valid Sync State control");
		goto out;
	}
	if (state == SYNC_PRESENT) {
		note_present(r, uuid);
		status = 0;
	} else if (state == SYNC_DELETE) {
		status = replica_delete(r, uuid, why, cap);
	} else {
		note_present(r, uuid);
		struct berval attrs;
		BerElement *ber = NULL;
		int got = STORE_FAILED;
		if (replica_entry_attrs(r->ld, m, &attrs, &ber) == 0)
			got = store_entry(r, uuid, dn, (const unsigned char *)attrs.bv_val,
			                  attrs.bv_len, r->refreshing, why, cap);
		else
			snprintf(why, cap, "put %.200s: out of memory", dn);
		/* Persisting, changes come in the provider's order: a parent missing now
		 * is not replicated (or was skipped), and will not come. */
		if (got == STORE_NO_PARENT)
			got = skip_orphan(r, uuid, dn,
			                  "its parent entry does not exist (not replicated?)", why,
			                  cap) < 0
			          ? STORE_FAILED
			          : STORE_SKIPPED;
		status = got == STORE_FAILED ? -1 : 0;
		/* 389-ds's refresh from a cookie leaves out operational attributes: asked
		 * again at its end (ds389.h). */
		if (status == 0 && (got == STORED || got == STORE_HELD) && r->is389 &&
		    r->refreshing && !r->full_refresh)
			status = note_refetch(r, uuid, why, cap);
		ber_free(ber, 0); /* the reader; the bytes are the message's */
		if (status < 0)
			goto out;
	}
	if (status == 0 && replica_set_cookie(r, &cookie) != 0) {
		snprintf(why, cap, "storing the cookie failed");
		status = -1;
	}
out:
	ldap_controls_free(ctrls);
	ldap_memfree(dn);
	return status;
}

/* The refresh stage ends (its last phase: present or delete): counted and logged once
 * its transaction has committed (replica_txn_commit), not before: a commit that fails
 * (a full disk) is no refresh done. */
static void refresh_done(struct replica *r, bool present)
{
	const char *how = r->full_refresh                       ? "full refresh"
	                  : syncrepl_is_ad(r->conf) || r->is389 ? "changes since the cookie"
	                  : present                             ? "present phase"
	                                                        : "delete phase";
	r->refreshed = true;
	/* A DirSync poll every few seconds that brought nothing: not a line each. */
	r->refresh_quiet =
	    syncrepl_is_ad(r->conf) && !r->full_refresh && !r->refresh_puts && !r->refresh_deletes;
	if (r->full_refresh) /* every entry compared: the next reconciliation is due later */
		r->reconciled_ms = (int64_t)(clock_ns() / 1000000);
	char held[96] = "";
	if (r->refresh_held)
		snprintf(held, sizeof(held),
		         " (%llu of them came before their parent and waited for it)",
		         (unsigned long long)r->refresh_held);
	char pieces[64] = "";
	if (r->pieces)
		snprintf(pieces, sizeof(pieces), "; committed in %llu pieces",
		         (unsigned long long)r->pieces + 1);
	snprintf(r->refresh_line, sizeof(r->refresh_line),
	         "refresh done (%s): %llu entries added or changed%s, %llu deleted%s", how,
	         (unsigned long long)r->refresh_puts, held, (unsigned long long)r->refresh_deletes,
	         pieces);
}

/*
 * Whether a refresh phase that ends with refreshDeletes as deletes says deletes the entries
 * it did not report present. One without a cookie replaces the replica's content: always. From
 * a cookie, when refreshDeletes is FALSE (a present phase, RFC 4533 3.3.1), but for a
 * 389-ds provider: its refresh from a cookie ends so with no present phase, and the
 * entries it did not send are unchanged (ds389.h).
 */
static bool present_deletes(const struct replica *r, bool deletes)
{
	return r->full_refresh || (!deletes && !r->is389);
}

int replica_on_info(struct replica *r, LDAPMessage *m, char *why, size_t cap)
{
	char *oid = NULL;
	struct berval *data = NULL;
	struct sync_info info;
	int rc = ldap_parse_intermediate(r->ld, m, &oid, &data, NULL, 0);
	if (rc != LDAP_SUCCESS || !oid || strcmp(oid, SYNC_INFO_OID) != 0 || !data ||
	    sync_info_decode(data, &info) < 0) {
		snprintf(why, cap, "intermediate response %s: not a valid Sync Info",
		         oid ? oid : "");
		ldap_memfree(oid);
		ber_bvfree(data);
		return -1;
	}
	int status = 0;
	switch (info.kind) {
	case SYNC_INFO_NEW_COOKIE:
		break;
	case SYNC_INFO_REFRESH_PRESENT:
	case SYNC_INFO_REFRESH_DELETE:
		/* Held entries first (their UUIDs are in the present set); a present phase
		 * ends here; a full refresh's present set runs to its end. */
		status = apply_held(r, info.refresh_done, why, cap);
		if (status < 0)
			;
		else if (r->full_refresh
		             ? info.refresh_done
		             : present_deletes(r, info.kind == SYNC_INFO_REFRESH_DELETE))
			status = end_present_phase(r, why, cap);
		else if (!r->full_refresh)
			r->npresent = 0;
		if (status == 0 && info.refresh_done && r->nrefetch)
			status = refetch(r, why, cap);
		if (info.refresh_done && status == 0) {
			r->refreshing = false;
			refresh_done(r, info.kind == SYNC_INFO_REFRESH_PRESENT);
			replica_set_state(r, "persisting", NULL);
		}
		break;
	case SYNC_INFO_ID_SET:
		for (size_t i = 0; i < info.n && status == 0; i++)
			if (info.refresh_deletes)
				status = delete_uuid(r, info.uuids[i], why, cap);
			else
				note_present(r, info.uuids[i]);
		break;
	}
	if (status == 0 && replica_set_cookie(r, &info.cookie) != 0) {
		snprintf(why, cap, "storing the cookie failed");
		status = -1;
	}
	sync_info_free(&info);
	ldap_memfree(oid);
	ber_bvfree(data);
	return status;
}

/* Session outcomes. */

int replica_on_done(struct replica *r, LDAPMessage *m, char *why, size_t cap)
{
	int err = 0;
	char *text = NULL;
	LDAPControl **ctrls = NULL;
	if (ldap_parse_result(r->ld, m, &err, NULL, &text, NULL, &ctrls, 0) != LDAP_SUCCESS) {
		snprintf(why, cap, "the search result does not parse");
		return SESSION_ERROR;
	}
	int status = SESSION_DONE;
	if (err == SYNC_REFRESH_REQUIRED) {
		log_info("syncrepl rid=%03d: the provider asks for a full refresh "
		         "(e-syncRefreshRequired): cookie dropped",
		         r->conf->rid);
		r->drop_cookie = true;
		replica_txn_abort(r);
		status = SESSION_RELOAD;
	} else if (err != LDAP_SUCCESS) {
		snprintf(why, cap, "search ended: %s (%d)%s%s", ldap_err2string(err), err,
		         text && *text ? ": " : "", text ? text : "");
		status = SESSION_ERROR;
	} else {
		LDAPControl *c = ldap_control_find(SYNC_DONE_OID, ctrls, NULL);
		struct berval cookie = {0, NULL};
		bool deletes = false;
		if (c && sync_done_decode(&c->ldctl_value, &cookie, &deletes) < 0) {
			snprintf(why, cap, "Sync Done control does not parse");
			status = SESSION_ERROR;
		} else if (apply_held(r, true, why, cap) < 0) {
			status = SESSION_ERROR;
		} else if (present_deletes(r, deletes) && end_present_phase(r, why, cap) < 0) {
			status = SESSION_ERROR;
		} else if (r->nrefetch && refetch(r, why, cap) < 0) {
			status = SESSION_ERROR;
		} else if (replica_set_cookie(r, &cookie) != 0) {
			snprintf(why, cap, "storing the cookie failed");
			status = SESSION_ERROR;
		} else if (r->conf->type == SYNCREPL_REFRESH_AND_PERSIST) {
			snprintf(why, cap, "the provider ended the persistent search");
			status = SESSION_ERROR;
		}
		if (status == SESSION_DONE)
			refresh_done(r, !deletes);
	}
	ldap_memfree(text);
	ldap_controls_free(ctrls);
	return status;
}

/* ds389_list_ids's fn: an entry the provider has. */
static int note_listed(void *arg, const unsigned char *uuid, char *why, size_t cap)
{
	if (add_present(arg, uuid) == 0)
		return 0;
	snprintf(why, cap, "out of memory listing the provider's entries");
	return -1;
}

int replica_reconcile(struct replica *r, char *why, size_t cap)
{
	r->npresent = 0;
	if (ds389_list_ids(r->ld, r->conf, note_listed, r, why, cap) < 0) {
		log_error("syncrepl rid=%03d: comparing the replica's entries with the provider's: "
		          "%s; nothing deleted",
		          r->conf->rid, why);
		r->npresent = 0;
		return 0;
	}
	int rc = replica_txn_open(r);
	uint64_t deletes = r->refresh_deletes;
	int status = rc ? -1 : end_present_phase(r, why, cap);
	r->refresh_deletes = deletes;
	r->uncovered = false; /* the provider's state now: no cookie is awaited */
	if (status == 0 && (rc = replica_txn_commit(r)) != 0)
		status = -1;
	if (rc) {
		r->storage_error = db_write_error(r->db, rc);
		snprintf(why, cap, "comparing with the provider's entries: %s",
		         db_error_text(r->storage_error));
	}
	if (status < 0)
		replica_txn_abort(r);
	return status;
}

/* ---- for another way of following (dirsync.c) ------------------------------------ */

int replica_put(struct replica *r, const unsigned char *uuid, const char *dn,
                const unsigned char *attrs, size_t len, char *why, size_t cap)
{
	note_present(r, uuid);
	return store_entry(r, uuid, dn, attrs, len, true, why, cap) == STORE_FAILED ? -1 : 0;
}

int replica_delete(struct replica *r, const unsigned char *uuid, char *why, size_t cap)
{
	for (size_t i = 0; i < r->held.n; i++) /* held in this refresh, now deleted */
		if (memcmp(r->held.v[i].uuid, uuid, SYNC_UUID_LEN) == 0) {
			struct held_entry h;
			held_take(&r->held, i, &h);
			held_entry_free(&h);
			break;
		}
	return delete_uuid(r, uuid, why, cap);
}

int replica_refresh_end(struct replica *r, char *why, size_t cap)
{
	if (apply_held(r, true, why, cap) < 0 ||
	    (r->full_refresh && end_present_phase(r, why, cap) < 0))
		return -1;
	refresh_done(r, true);
	return 0;
}
