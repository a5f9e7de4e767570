/* How the syncrepl consumer applies what its provider sends: see replica_apply.h. */
#include "server/replica_apply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/dn.h"
#include "protocol/sync.h"
#include "server/log.h"
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

int replica_txn_open(struct replica *r)
{
	if (r->txn)
		return 0;
	int rc = mdb_txn_begin(r->db->env, NULL, 0, &r->txn);
	if (rc) {
		r->txn = NULL;
		return rc;
	}
	r->batched = 0;
	r->uncovered = false;
	__atomic_store_n(&r->pending_changes, 0, __ATOMIC_RELAXED);
	r->pending_cookie[0] = '\0';
	return 0;
}

void replica_txn_abort(struct replica *r)
{
	if (r->txn)
		mdb_txn_abort(r->txn);
	r->txn = NULL;
	r->refreshed = false;
	__atomic_store_n(&r->pending_changes, 0, __ATOMIC_RELAXED);
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

/* Commits when every change in the transaction is covered by a cookie in it. */
int replica_txn_commit(struct replica *r)
{
	if (!r->txn || r->uncovered)
		return 0;
	int rc = mdb_txn_commit(r->txn);
	r->txn = NULL;
	if (rc)
		return rc;
	pthread_mutex_lock(&r->lock);
	if (r->pending_changes) {
		r->st.changes += r->pending_changes;
		r->st.last_change = time(NULL);
	}
	if (r->pending_cookie[0]) {
		snprintf(r->st.cookie, sizeof(r->st.cookie), "%s", r->pending_cookie);
		cookie_csn(r->st.cookie, r->st.context_csn, sizeof(r->st.context_csn));
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		int64_t at = csn_ms(r->st.context_csn);
		if (r->pending_changes && at >= 0)
			r->st.lag_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - at;
	}
	__atomic_store_n(&r->pending_changes, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	if (r->refreshed && !r->announced) {
		r->announced = true;
		if (r->on_first_refresh)
			r->on_first_refresh(r->srv);
	}
	r->refreshed = false;
	return 0;
}

static int set_cookie(struct replica *r, const struct berval *cookie)
{
	if (!cookie->bv_val)
		return 0;
	int rc = db_update_set_cookie(r->db, r->txn, cookie->bv_val, cookie->bv_len);
	if (rc == 0) {
		r->uncovered = false;
		snprintf(r->pending_cookie, sizeof(r->pending_cookie), "%.*s", (int)cookie->bv_len,
		         cookie->bv_val);
	}
	return rc;
}

/* ---- changes -------------------------------------------------------------------- */

static void note_present(struct replica *r, const unsigned char *uuid)
{
	if (!r->refreshing)
		return; /* persisting: no present phase to end */
	if (r->npresent == r->cap_present) {
		size_t cap = r->cap_present ? 2 * r->cap_present : 1024;
		unsigned char *p = realloc(r->present, cap * SYNC_UUID_LEN);
		if (!p)
			return; /* the entry is then deleted at the phase's end, and comes back
			           with the next refresh: never a phantom */
		r->present = p;
		r->cap_present = cap;
	}
	memcpy(r->present + r->npresent++ * SYNC_UUID_LEN, uuid, SYNC_UUID_LEN);
}

static int uuid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, SYNC_UUID_LEN);
}

/* Deletes the entry uuid and what is below it; one already gone is no error. */
static int delete_uuid(struct replica *r, const unsigned char *uuid, char *why, size_t cap)
{
	struct db_update_error e;
	int rc = db_update_delete(r->db, r->txn, uuid, DB_UPDATE_SUBTREE, &e);
	if (rc == LDAP_NO_SUCH_OBJECT)
		return 0;
	if (rc) {
		snprintf(why, cap, "delete: %.400s", e.msg);
		return -1;
	}
	replica_count_change(r);
	r->refresh_deletes++;
	return 0;
}

/* The end of a present phase: every local entry not reported present goes. */
static int end_present_phase(struct replica *r, char *why, size_t cap)
{
	qsort(r->present, r->npresent, SYNC_UUID_LEN, uuid_cmp);
	MDB_cursor *cur;
	int rc = mdb_cursor_open(r->txn, r->db->uuid2id, &cur);
	if (rc) {
		snprintf(why, cap, "present phase: %s", mdb_strerror(rc));
		return -1;
	}
	unsigned char *gone = NULL;
	size_t ngone = 0, capgone = 0;
	MDB_val k, v;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != SYNC_UUID_LEN ||
		    bsearch(k.mv_data, r->present, r->npresent, SYNC_UUID_LEN, uuid_cmp))
			continue;
		if (ngone == capgone) {
			capgone = capgone ? 2 * capgone : 64;
			unsigned char *p = realloc(gone, capgone * SYNC_UUID_LEN);
			if (!p) {
				rc = ENOMEM;
				break;
			}
			gone = p;
		}
		memcpy(gone + ngone++ * SYNC_UUID_LEN, k.mv_data, SYNC_UUID_LEN);
	}
	mdb_cursor_close(cur);
	int status = 0;
	if (rc != MDB_NOTFOUND) {
		snprintf(why, cap, "present phase: %s", mdb_strerror(rc));
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
static int entry_attrs(LDAP *ld, LDAPMessage *m, struct berval *out, BerElement **berp)
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
	int rc =
	    dn_normalize(dn, strlen(dn), NULL, &key) < 0 ? -1
	    : db_dn2id(r->db, r->txn, key.data, key.len, &id) || db_get_entry(r->db, r->txn, id, &e)
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
		status = delete_uuid(r, uuid, why, cap);
	} else {
		note_present(r, uuid);
		struct berval attrs;
		BerElement *ber = NULL;
		struct db_update_error e;
		int rc = LDAP_NO_MEMORY;
		if (entry_attrs(r->ld, m, &attrs, &ber) == 0) {
			rc = db_update_put(r->db, r->txn, uuid, dn, strlen(dn),
			                   (const unsigned char *)attrs.bv_val, attrs.bv_len,
			                   DB_UPDATE_NO_SCHEMA, &e);
			if (rc == LDAP_ALREADY_EXISTS && free_dn(r, dn, why, cap) == 0)
				rc = db_update_put(r->db, r->txn, uuid, dn, strlen(dn),
				                   (const unsigned char *)attrs.bv_val,
				                   attrs.bv_len, DB_UPDATE_NO_SCHEMA, &e);
		}
		ber_free(ber, 0); /* the reader; the bytes are the message's */
		if (rc) {
			snprintf(why, cap, "put %.200s: %.250s", dn,
			         rc == LDAP_NO_MEMORY ? "out of memory" : e.msg);
			goto out;
		}
		replica_count_change(r);
		r->refresh_puts++;
		status = 0;
	}
	if (status == 0 && set_cookie(r, &cookie) != 0) {
		snprintf(why, cap, "storing the cookie failed");
		status = -1;
	}
out:
	ldap_controls_free(ctrls);
	ldap_memfree(dn);
	return status;
}

/* The refresh stage ends (its last phase: present or delete): counted and logged. */
static void refresh_done(struct replica *r, bool present)
{
	const char *how = r->full_refresh ? "full refresh"
	                  : present       ? "present phase"
	                                  : "delete phase";
	r->refreshed = true;
	pthread_mutex_lock(&r->lock);
	r->st.refreshes++;
	pthread_mutex_unlock(&r->lock);
	log_info("syncrepl rid=%03d: refresh done (%s): %llu entries added or changed, "
	         "%llu deleted",
	         r->conf->rid, how, (unsigned long long)r->refresh_puts,
	         (unsigned long long)r->refresh_deletes);
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
		/* A present phase ends here; a full refresh's present set runs to its end. */
		if (r->full_refresh ? info.refresh_done : info.kind == SYNC_INFO_REFRESH_PRESENT)
			status = end_present_phase(r, why, cap);
		else if (!r->full_refresh)
			r->npresent = 0;
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
	if (status == 0 && set_cookie(r, &info.cookie) != 0) {
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
		} else if ((!deletes || r->full_refresh) && end_present_phase(r, why, cap) < 0) {
			status = SESSION_ERROR;
		} else if (set_cookie(r, &cookie) != 0) {
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
