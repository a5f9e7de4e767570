/* The syncrepl consumer: see replica.h. */
#include "server/replica.h"

#include <errno.h>
#include <ldap.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/dn.h"
#include "protocol/sync.h"
#include "server/db_gen.h"
#include "server/log.h"
#include "storage/db_update.h"

/* Messages applied in one write transaction at most (when they keep arriving). */
#define BATCH_MAX 1000
/* How long the thread waits for a message before it looks at the stop flag. */
#define POLL_MS 200

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
	bool drop_cookie; /* e-syncRefreshRequired: the next search goes without one */
	MDB_txn *txn;     /* the open write transaction, or NULL */
	int batched;      /* messages in txn */
	bool uncovered;   /* txn holds changes no cookie in it covers yet */
	uint64_t pending_changes;
	uint64_t refresh_puts, refresh_deletes; /* in the refresh under way, for its log line */
	char pending_cookie[256];
	bool refreshing; /* the refresh stage (not yet refreshDone) */
	/* The search went without a cookie (initial content, or a reload after
	 * e-syncRefreshRequired): the replica's content is replaced, so at the refresh's end
	 * every entry not received goes, whichever phase the provider ended with. */
	bool full_refresh;
	unsigned char *present; /* UUIDs reported present in this present phase */
	size_t npresent, cap_present;
	char *attrs[64]; /* the attribute list asked for */
	char attrs_buf[1024];
};

static bool stopping(struct replica *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Sets the state. A failure is logged once, not at every retry: again only when its
 * reason changes, or after the consumer worked (persisting, or a refresh done) in between,
 * which is logged too.
 */
static void set_state(struct replica *r, const char *state, const char *error)
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

static int txn_open(struct replica *r)
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
	r->pending_changes = 0;
	r->pending_cookie[0] = '\0';
	return 0;
}

static void txn_abort(struct replica *r)
{
	if (r->txn)
		mdb_txn_abort(r->txn);
	r->txn = NULL;
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
static int txn_commit(struct replica *r)
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
	pthread_mutex_unlock(&r->lock);
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
	r->pending_changes++;
	r->refresh_deletes++;
	r->uncovered = true;
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

/* The entry's attributes as a PartialAttributeList's content (liblber's encoding). */
static int encode_attrs(LDAP *ld, LDAPMessage *m, struct berval *out, BerElement **berp)
{
	BerElement *in = NULL, *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return -1;
	int rc = 0;
	for (char *a = ldap_first_attribute(ld, m, &in); a && rc == 0;
	     a = ldap_next_attribute(ld, m, in)) {
		struct berval **vals = ldap_get_values_len(ld, m, a);
		if (ber_printf(ber, "{s[V]}", a, vals) < 0)
			rc = -1;
		ldap_value_free_len(vals);
		ldap_memfree(a);
	}
	ber_free(in, 0);
	if (rc == 0 && ber_flatten2(ber, out, 0) < 0)
		rc = -1;
	*berp = ber;
	return rc;
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

static int on_entry(struct replica *r, LDAPMessage *m, char *why, size_t cap)
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
		if (encode_attrs(r->ld, m, &attrs, &ber) == 0) {
			rc = db_update_put(r->db, r->txn, uuid, dn, strlen(dn),
			                   (const unsigned char *)attrs.bv_val, attrs.bv_len,
			                   DB_UPDATE_NO_SCHEMA, &e);
			if (rc == LDAP_ALREADY_EXISTS && free_dn(r, dn, why, cap) == 0)
				rc = db_update_put(r->db, r->txn, uuid, dn, strlen(dn),
				                   (const unsigned char *)attrs.bv_val,
				                   attrs.bv_len, DB_UPDATE_NO_SCHEMA, &e);
		}
		ber_free(ber, 1);
		if (rc) {
			snprintf(why, cap, "put %.200s: %.250s", dn,
			         rc == LDAP_NO_MEMORY ? "out of memory" : e.msg);
			goto out;
		}
		r->pending_changes++;
		r->refresh_puts++;
		r->uncovered = true;
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
	pthread_mutex_lock(&r->lock);
	r->st.refreshes++;
	pthread_mutex_unlock(&r->lock);
	log_info("syncrepl rid=%03d: refresh done (%s): %llu entries added or changed, "
	         "%llu deleted",
	         r->conf->rid, how, (unsigned long long)r->refresh_puts,
	         (unsigned long long)r->refresh_deletes);
}

static int on_info(struct replica *r, LDAPMessage *m, char *why, size_t cap)
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
			set_state(r, "persisting", NULL);
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
enum { SESSION_ERROR = -1, SESSION_DONE = 0, SESSION_STOPPED = 1, SESSION_RELOAD = 2 };

static int on_done(struct replica *r, LDAPMessage *m, char *why, size_t cap)
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
		txn_abort(r);
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

/* ---- a session: connect, bind, search, apply until it ends ------------------------- */

static int connect_provider(struct replica *r, char *why, size_t cap)
{
	const struct syncrepl_conf *s = r->conf;
	int v3 = LDAP_VERSION3, rc;
	struct timeval nt = {s->network_timeout, 0}, t = {s->network_timeout + 25, 0};
	if ((rc = ldap_initialize(&r->ld, s->provider)) != LDAP_SUCCESS) {
		snprintf(why, cap, "%s", ldap_err2string(rc));
		return -1;
	}
	ldap_set_option(r->ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	ldap_set_option(r->ld, LDAP_OPT_NETWORK_TIMEOUT, &nt);
	ldap_set_option(r->ld, LDAP_OPT_TIMEOUT, &t);
	ldap_set_option(r->ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	bool tls = strncasecmp(s->provider, "ldaps://", 8) == 0 || s->starttls;
	if (tls) {
		int req = s->tls_reqcert_never ? LDAP_OPT_X_TLS_NEVER : LDAP_OPT_X_TLS_DEMAND,
		    zero = 0;
		if ((s->tls_cacert[0] && ldap_set_option(r->ld, LDAP_OPT_X_TLS_CACERTFILE,
		                                         s->tls_cacert) != LDAP_SUCCESS) ||
		    ldap_set_option(r->ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &req) != LDAP_SUCCESS ||
		    ldap_set_option(r->ld, LDAP_OPT_X_TLS_NEWCTX, &zero) != LDAP_SUCCESS) {
			snprintf(why, cap, "TLS settings refused (tls_cacert %.300s)",
			         s->tls_cacert);
			return -1;
		}
	}
	if (s->starttls && (rc = ldap_start_tls_s(r->ld, NULL, NULL)) != LDAP_SUCCESS) {
		if (s->starttls == SYNCREPL_STARTTLS_CRITICAL) {
			snprintf(why, cap, "StartTLS: %s", ldap_err2string(rc));
			return -1;
		}
		log_info("syncrepl rid=%03d: StartTLS failed (%s); going on without TLS "
		         "(starttls=yes)",
		         s->rid, ldap_err2string(rc));
	}
	struct berval pw = {strlen(s->credentials), (char *)s->credentials};
	rc = ldap_sasl_bind_s(r->ld, s->binddn[0] ? s->binddn : NULL, LDAP_SASL_SIMPLE, &pw, NULL,
	                      NULL, NULL);
	if (rc != LDAP_SUCCESS) {
		char *diag = NULL;
		ldap_get_option(r->ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
		snprintf(why, cap, "bind as \"%.200s\": %s%s%.200s", s->binddn, ldap_err2string(rc),
		         diag && *diag ? ": " : "", diag ? diag : "");
		ldap_memfree(diag);
		return -1;
	}
	return 0;
}

static int start_search(struct replica *r, char *why, size_t cap)
{
	const struct syncrepl_conf *s = r->conf;
	char stored[4096] = "";
	struct berval cookie = {0, NULL};
	if (!r->drop_cookie) {
		MDB_txn *rt;
		const void *data;
		size_t len;
		if (mdb_txn_begin(r->db->env, NULL, MDB_RDONLY, &rt) == 0) {
			if (db_update_get_cookie(r->db, rt, &data, &len) == 0 &&
			    len < sizeof(stored)) {
				memcpy(stored, data, len);
				cookie = (struct berval){len, stored};
			} else if (db_update_get_cookie(r->db, rt, &data, &len) == 0) {
				log_error(
				    "syncrepl rid=%03d: the stored cookie takes %zu bytes, more "
				    "than %zu: not sent",
				    s->rid, len, sizeof(stored) - 1);
			}
			mdb_txn_abort(rt);
		}
	}
	r->full_refresh = !cookie.bv_val;
	char said[4200];
	if (cookie.bv_val)
		snprintf(said, sizeof(said), "syncrepl rid=%03d: resuming from cookie %s", s->rid,
		         stored);
	else
		snprintf(said, sizeof(said), "syncrepl rid=%03d: no cookie: full refresh from %s",
		         s->rid, s->provider);
	if (r->logged_error[0]) /* retrying after a failure already logged: not again */
		log_debug("%s", said);
	else
		log_info("%s", said);
	struct berval *value = NULL;
	LDAPControl *ctrl = NULL;
	enum sync_mode mode =
	    s->type == SYNCREPL_REFRESH_AND_PERSIST ? SYNC_REFRESH_AND_PERSIST : SYNC_REFRESH_ONLY;
	if (sync_request_encode(mode, &cookie, false, &value) < 0 ||
	    ldap_control_create(SYNC_REQUEST_OID, 1, value, 1, &ctrl) != LDAP_SUCCESS) {
		ber_bvfree(value);
		snprintf(why, cap, "out of memory");
		return -1;
	}
	static const int scopes[] = {LDAP_SCOPE_BASE, LDAP_SCOPE_ONELEVEL, LDAP_SCOPE_SUBTREE,
	                             LDAP_SCOPE_SUBORDINATE};
	LDAPControl *ctrls[] = {ctrl, NULL};
	int rc = ldap_search_ext(r->ld, s->searchbase, scopes[s->scope], s->filter, r->attrs, 0,
	                         ctrls, NULL, NULL, 0, &r->msgid);
	ldap_control_free(ctrl);
	ber_bvfree(value);
	if (rc != LDAP_SUCCESS) {
		snprintf(why, cap, "search: %s", ldap_err2string(rc));
		return -1;
	}
	r->drop_cookie = false;
	r->npresent = 0;
	r->refresh_puts = r->refresh_deletes = 0;
	r->refreshing = true;
	return 0;
}

/* Applies one message; returns a session outcome, or 3 (go on). */
static int apply(struct replica *r, LDAPMessage *m, int type, char *why, size_t cap)
{
	int rc = txn_open(r);
	if (rc) {
		snprintf(why, cap, "write transaction: %s", mdb_strerror(rc));
		return SESSION_ERROR;
	}
	r->batched++;
	switch (type) {
	case LDAP_RES_SEARCH_ENTRY:
		return on_entry(r, m, why, cap) < 0 ? SESSION_ERROR : 3;
	case LDAP_RES_INTERMEDIATE:
		return on_info(r, m, why, cap) < 0 ? SESSION_ERROR : 3;
	case LDAP_RES_SEARCH_RESULT:
		return on_done(r, m, why, cap);
	case LDAP_RES_SEARCH_REFERENCE:
		return 3;
	}
	snprintf(why, cap, "unexpected message type %d", type);
	return SESSION_ERROR;
}

static int session(struct replica *r, char *why, size_t cap)
{
	if (connect_provider(r, why, cap) < 0 || start_search(r, why, cap) < 0)
		return SESSION_ERROR;
	set_state(r, "refreshing", NULL);
	int status = 3;
	while (status == 3) {
		if (stopping(r)) {
			status = SESSION_STOPPED;
			break;
		}
		/* What has arrived is applied without waiting; when nothing more is there (or
		 * the batch is full) what a cookie covers commits. */
		LDAPMessage *m = NULL;
		struct timeval zero = {0, 0}, poll = {0, POLL_MS * 1000};
		int type = ldap_result(r->ld, r->msgid, LDAP_MSG_ONE, &zero, &m);
		if (type == 0 || (r->txn && r->batched >= BATCH_MAX)) {
			int rc = txn_commit(r);
			if (rc) {
				snprintf(why, cap, "commit: %s", mdb_strerror(rc));
				status = SESSION_ERROR;
				break;
			}
			if (type == 0)
				type = ldap_result(r->ld, r->msgid, LDAP_MSG_ONE, &poll, &m);
		}
		if (type == 0)
			continue;
		if (type < 0) {
			int err = 0;
			ldap_get_option(r->ld, LDAP_OPT_RESULT_CODE, &err);
			snprintf(why, cap, "connection lost: %s", ldap_err2string(err));
			status = SESSION_ERROR;
			break;
		}
		status = apply(r, m, type, why, cap);
		ldap_msgfree(m);
	}
	if (status == SESSION_DONE || status == SESSION_STOPPED) {
		int rc = txn_commit(r); /* what a cookie covers is kept */
		if (rc) {
			snprintf(why, cap, "commit: %s", mdb_strerror(rc));
			status = SESSION_ERROR;
		}
	}
	txn_abort(r); /* changes no cookie covers: the next session receives them again */
	if (status == SESSION_STOPPED)
		ldap_abandon_ext(r->ld, r->msgid, NULL, NULL);
	return status;
}

static void end_session(struct replica *r)
{
	if (r->ld)
		ldap_unbind_ext_s(r->ld, NULL, NULL);
	r->ld = NULL;
}

/* Sleeps up to seconds, waking early to stop. */
static void pause_for(struct replica *r, int seconds)
{
	for (int i = 0; i < seconds * (1000 / POLL_MS) && !stopping(r); i++) {
		struct timespec t = {0, POLL_MS * 1000000L};
		nanosleep(&t, NULL);
	}
}

static void *replica_main(void *arg)
{
	struct replica *r = arg;
	const struct syncrepl_conf *s = r->conf;
	int step = 0, left = s->retry_count[0];
	while (!stopping(r)) {
		char why[512] = "";
		int status = session(r, why, sizeof(why));
		end_session(r);
		if (status == SESSION_STOPPED || stopping(r))
			break;
		if (status == SESSION_RELOAD)
			continue;
		if (status == SESSION_DONE) {
			step = 0, left = s->retry_count[0];
			set_state(r, "idle", NULL);
			pause_for(r, s->interval);
			continue;
		}
		if (strcmp(r->st.state, "persisting") == 0)
			step = 0,
			left = s->retry_count[0]; /* it worked: the schedule starts over */
		if (left == 0 && step + 1 < s->nretry)
			left = s->retry_count[++step];
		if (left == 0) {
			set_state(r, "stopped", why);
			log_error("syncrepl rid=%03d: the retry schedule is used up; not retrying "
			          "(restart minidir to try again)",
			          s->rid);
			break;
		}
		if (left > 0)
			left--;
		set_state(r, "retrying", why);
		log_debug("syncrepl rid=%03d: retrying in %d s", s->rid, s->retry_interval[step]);
		pause_for(r, s->retry_interval[step]);
	}
	return NULL;
}

int replica_start(struct server *srv)
{
	struct replica *r = calloc(1, sizeof(*r));
	if (!r) {
		log_error("syncrepl: out of memory");
		return -1;
	}
	r->srv = srv;
	r->conf = &srv->cfg.syncrepl;
	r->db = &srv->gen->db;
	pthread_mutex_init(&r->lock, NULL);
	r->st.state = "refreshing";
	r->st.lag_ms = -1;
	snprintf(r->st.provider, sizeof(r->st.provider), "%s", r->conf->provider);
	snprintf(r->attrs_buf, sizeof(r->attrs_buf), "%s", r->conf->attrs);
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(r->attrs_buf, ", ", &save); t && n < 63;
	     t = strtok_r(NULL, ", ", &save))
		r->attrs[n++] = t;
	r->attrs[n] = NULL;
	srv->replica = r;
	int rc = pthread_create(&r->thread, NULL, replica_main, r);
	if (rc) {
		log_error("syncrepl: starting the consumer thread: %s", strerror(rc));
		srv->replica = NULL;
		pthread_mutex_destroy(&r->lock);
		free(r);
		return -1;
	}
	log_info(
	    "syncrepl rid=%03d: following %s (%s, base \"%s\")", r->conf->rid, r->conf->provider,
	    r->conf->type == SYNCREPL_REFRESH_AND_PERSIST ? "refreshAndPersist" : "refreshOnly",
	    r->conf->searchbase);
	return 0;
}

void replica_stop(struct server *srv)
{
	struct replica *r = srv->replica;
	if (!r)
		return;
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_join(r->thread, NULL);
	srv->replica = NULL;
	pthread_mutex_destroy(&r->lock);
	free(r->present);
	free(r);
}

bool replica_status(struct server *srv, struct replica_status *out)
{
	struct replica *r = srv->replica;
	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	*out = r->st;
	pthread_mutex_unlock(&r->lock);
	return true;
}
