/* The syncrepl consumer: see replica.h. */
#include "server/replica/replica.h"

#include <errno.h>
#include <ldap.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/dn.h"
#include "protocol/sync.h"
#include "server/change_feed.h"
#include "server/clock.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/server.h"
#include "server/replica/apply.h"
#include "server/replica/dirsync.h"
#include "server/replica/ds389.h"
#include "server/replica/usn.h"
#include "storage/db_update.h"

/* A session that failed writing the database (a full disk) is retried after the retry
 * schedule's interval doubled for each such failure in a row, up to this (seconds): each
 * retry may redo a whole refresh, and a disk stays full for a while. */
#define STORAGE_BACKOFF_MAX 600
/* Messages applied in one write transaction at most (when they keep arriving). */
#define BATCH_MAX 1000
/* How long the thread waits for a message before it looks at the stop flag. */
#define POLL_MS 200

/* ---- a session: connect, bind, search, apply until it ends ------------------------- */

int replica_ldap_open(const struct syncrepl_conf *s, int timeout_s, LDAP **ldp, char *why,
                      size_t cap)
{
	int v3 = LDAP_VERSION3, rc;
	struct timeval nt = {s->network_timeout, 0}, t = {timeout_s, 0};
	*ldp = NULL;
	if ((rc = ldap_initialize(ldp, s->provider)) != LDAP_SUCCESS) {
		snprintf(why, cap, "%s", ldap_err2string(rc));
		return -1;
	}
	LDAP *ld = *ldp;
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &nt);
	ldap_set_option(ld, LDAP_OPT_TIMEOUT, &t);
	ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	bool tls = strncasecmp(s->provider, "ldaps://", 8) == 0 || s->starttls;
	if (tls) {
		int req = s->tls_reqcert_never ? LDAP_OPT_X_TLS_NEVER : LDAP_OPT_X_TLS_DEMAND,
		    zero = 0;
		if ((s->tls_cacert[0] && ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTFILE,
		                                         s->tls_cacert) != LDAP_SUCCESS) ||
		    ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &req) != LDAP_SUCCESS ||
		    ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &zero) != LDAP_SUCCESS) {
			snprintf(why, cap, "TLS settings refused (tls_cacert %.300s)",
			         s->tls_cacert);
			return -1;
		}
	}
	if (s->starttls && (rc = ldap_start_tls_s(ld, NULL, NULL)) != LDAP_SUCCESS) {
		if (s->starttls == SYNCREPL_STARTTLS_CRITICAL) {
			snprintf(why, cap, "StartTLS: %s", ldap_err2string(rc));
			return -1;
		}
		log_info("syncrepl rid=%03d: StartTLS failed (%s); going on without TLS "
		         "(starttls=yes)",
		         s->rid, ldap_err2string(rc));
	}
	return 0;
}

static int connect_provider(struct replica *r, char *why, size_t cap)
{
	const struct syncrepl_conf *s = r->conf;
	int rc;
	if (replica_ldap_open(s, s->network_timeout + 25, &r->ld, why, cap) < 0)
		return -1;
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

/*
 * The provider's kind (ds389.h), asked at each session's start (an address may be moved
 * to another server): what its refresh from a cookie means and what is asked of it; and
 * for 389-ds, its changelog's bounds. cookie: the stored one (len 0: none). Logged when it
 * is 389-ds and was not before. Returns true when the cookie must not be sent: 389-ds's
 * changelog has been trimmed past it (changes after it are lost: a full refresh, as
 * slapd's changelog consumer reloads).
 */
static bool find_provider_kind(struct replica *r, const char *cookie, size_t len)
{
	const struct syncrepl_conf *s = r->conf;
	struct ds389_root root;
	ds389_read_root(r->ld, s->network_timeout + 25, &root);
	bool was389 = r->is389;
	long long at = ds389_cookie(cookie, len);
	r->is389 = root.answered ? root.is389 : at >= 0;
	if (r->is389 && (!r->kind_known || !was389))
		log_info("syncrepl rid=%03d: the provider is 389 Directory Server%s%s%s: its "
		         "refresh from a cookie deletes only what it names, and the entries it "
		         "sends are asked again for their operational attributes",
		         s->rid, root.version[0] ? " (" : "", root.version,
		         root.version[0] ? ")" : "");
	r->kind_known = true;
	r->search_attrs = r->is389 && r->attrs_default ? ds389_attrs() : r->attrs;
	r->nrefetch = 0;
	if (r->is389)
		replica_note_provider_last(r, root.last_change);
	if (r->is389 && at >= 0 && root.first_change > at + 1) {
		log_info("syncrepl rid=%03d: the provider's changelog starts at change %lld, after "
		         "the cookie's %lld: changes in between are gone from it; full refresh",
		         s->rid, root.first_change, at);
		return true;
	}
	return false;
}

static int start_search(struct replica *r, char *why, size_t cap)
{
	const struct syncrepl_conf *s = r->conf;
	char stored[4096] = "";
	struct berval cookie = {0, NULL};
	if (!r->drop_cookie) {
		struct db_read *read_txn;
		const void *data;
		size_t len;
		if (db_read_begin(r->db, &read_txn) == 0) {
			if (db_update_get_cookie(r->db, read_txn, &data, &len) == 0 &&
			    len < sizeof(stored)) {
				memcpy(stored, data, len);
				cookie = (struct berval){len, stored};
			} else if (db_update_get_cookie(r->db, read_txn, &data, &len) == 0) {
				log_error(
				    "syncrepl rid=%03d: the stored cookie takes %zu bytes, more "
				    "than %zu: not sent",
				    s->rid, len, sizeof(stored) - 1);
			}
			db_read_end(read_txn);
		}
	}
	if (find_provider_kind(r, cookie.bv_val ? stored : "", cookie.bv_val ? cookie.bv_len : 0))
		cookie = (struct berval){0, NULL};
	if (r->is389 &&
	    (replica_ds389_policy(r, why, cap) < 0 || replica_ds389_nesting(r, why, cap) < 0))
		return -1;
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
	/* ManageDSAit (RFC 3296), as slapd's own consumer sends it: the provider's entries
	 * as stored, not what its overlays compute at read (dynlist's member values, which
	 * dynamic_groups computes here, storage/dyngroup_update.h) nor referrals. */
	LDAPControl manage = {.ldctl_oid = LDAP_CONTROL_MANAGEDSAIT, .ldctl_iscritical = 0};
	LDAPControl *ctrls[] = {ctrl, &manage, NULL};
	int rc = ldap_search_ext(r->ld, s->searchbase, syncrepl_ldap_scope(s), s->filter,
	                         r->search_attrs, 0, ctrls, NULL, NULL, 0, &r->msgid);
	ldap_control_free(ctrl);
	ber_bvfree(value);
	if (rc != LDAP_SUCCESS) {
		snprintf(why, cap, "search: %s", ldap_err2string(rc));
		return -1;
	}
	r->drop_cookie = false;
	r->npresent = 0;
	r->refresh_puts = r->refresh_deletes = r->refresh_held = 0;
	r->pieces = 0;
	held_clear(&r->held);
	r->refreshing = true;
	return 0;
}

/* A failure to write the database (the open or commit of a transaction) into why, as
 * what it is: LMDB reports a full disk as EIO, and db_write_error finds the errno. */
static void write_failed(struct replica *r, int rc, const char *what, char *why, size_t cap)
{
	rc = db_write_error(r->db, rc);
	r->storage_error = rc;
	snprintf(why, cap, "%s: %s", what, db_error_text(rc));
}

/* Applies one message; returns a session outcome, or 3 (go on). */
static int apply(struct replica *r, LDAPMessage *m, int type, char *why, size_t cap)
{
	int rc = replica_txn_open(r);
	if (rc) {
		write_failed(r, rc, "write transaction", why, cap);
		return SESSION_ERROR;
	}
	r->batched++;
	switch (type) {
	case LDAP_RES_SEARCH_ENTRY:
		return replica_on_entry(r, m, why, cap) < 0 ? SESSION_ERROR : 3;
	case LDAP_RES_INTERMEDIATE:
		return replica_on_info(r, m, why, cap) < 0 ? SESSION_ERROR : 3;
	case LDAP_RES_SEARCH_RESULT:
		return replica_on_done(r, m, why, cap);
	case LDAP_RES_SEARCH_REFERENCE:
		return 3;
	}
	snprintf(why, cap, "unexpected message type %d", type);
	return SESSION_ERROR;
}

/*
 * The probe: refreshAndPersist has no heartbeat, so a persisting session that hears
 * nothing cannot tell a quiet provider from one whose messages no longer arrive (a
 * stalled network path, a relay that hangs). With the HTTP endpoint on, every
 * probe_every_ms the consumer asks, on the same session, a base search of its
 * searchbase for no attributes (RFC 4511's "1.1"; of a 389-ds provider, its root DSE's
 * change numbers, for the lag in changes), and the status says since when an
 * answer is awaited (probe_sent_ms): any answer, even an error, proves the session
 * alive, and comes behind what the provider sent before it. /readyz reads it
 * (server/monitor/metrics.c). One question at a time, so a provider that does not answer
 * is asked nothing more.
 */
static void probe_step(struct replica *r)
{
	if (!r->probe_every_ms || strcmp(r->st.state, "persisting") != 0)
		return;
	int64_t now = (int64_t)(clock_ns() / 1000000);
	if (r->probe_msgid) {
		LDAPMessage *m = NULL;
		struct timeval zero = {0, 0};
		if (ldap_result(r->ld, r->probe_msgid, LDAP_MSG_ALL, &zero, &m) <= 0)
			return; /* still waiting; a lost connection ends the session anyway */
		if (r->is389) {
			struct ds389_root root;
			ds389_root_parse(r->ld, m, &root);
			if (root.answered)
				replica_note_provider_last(r, root.last_change);
		}
		ldap_msgfree(m);
		r->probe_msgid = 0;
		pthread_mutex_lock(&r->lock);
		r->st.probe_sent_ms = 0;
		r->st.probes++;
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if (now - r->probe_last_ms < r->probe_every_ms)
		return;
	/* Of a 389-ds provider, its root DSE's change numbers: the lag in changes too. */
	static char *const no_attrs[] = {LDAP_NO_ATTRS, NULL};
	int id = 0;
	if (ldap_search_ext(r->ld, r->is389 ? "" : r->conf->searchbase, LDAP_SCOPE_BASE,
	                    "(objectClass=*)", r->is389 ? ds389_root_attrs() : (char **)no_attrs, 0,
	                    NULL, NULL, NULL, 1, &id) != LDAP_SUCCESS)
		return; /* the session's own read reports a broken connection */
	r->probe_msgid = id;
	r->probe_last_ms = now;
	pthread_mutex_lock(&r->lock);
	r->st.probe_sent_ms = now;
	pthread_mutex_unlock(&r->lock);
}

/* A new session has no probe awaiting an answer. */
static void probe_reset(struct replica *r)
{
	r->probe_msgid = 0;
	r->probe_last_ms = (int64_t)(clock_ns() / 1000000);
	pthread_mutex_lock(&r->lock);
	r->st.probe_sent_ms = 0;
	pthread_mutex_unlock(&r->lock);
}

/*
 * A 389-ds provider's entries compared with the replica's once reconcile_interval has
 * passed (replica_reconcile): between refreshOnly refreshes, or persisting when nothing
 * is waiting, with no transaction open. 0, or -1 (the database could not be written) with
 * why set.
 */
static int reconcile_step(struct replica *r, char *why, size_t cap)
{
	int64_t every = r->srv->cfg.reconcile_interval, now = (int64_t)(clock_ns() / 1000000);
	if (!r->is389 || every <= 0 || r->txn || now - r->reconciled_ms < every * 1000)
		return 0;
	r->reconciled_ms = now;
	/* The password policy too: 389-ds's cn=config is in no changelog. */
	if (replica_ds389_policy(r, why, cap) < 0)
		return -1;
	return replica_reconcile(r, why, cap);
}

/* A session of type=dirSync or usnChanged: one poll (dirsync.h, usn.h), committed. */
static int ad_poll(struct replica *r, char *why, size_t cap)
{
	/* The default "*,+": every attribute the DC has for the object (no list). */
	r->search_attrs = r->attrs_default ? NULL : r->attrs;
	int status = r->conf->type == SYNCREPL_DIRSYNC ? dirsync_session(r, why, cap)
	                                               : usn_session(r, why, cap);
	if (status == SESSION_DONE) {
		int rc = replica_txn_commit(r);
		if (rc) {
			write_failed(r, rc, "commit", why, cap);
			status = SESSION_ERROR;
		}
	}
	replica_txn_abort(r); /* what no commit took: the next poll asks for it again */
	return status;
}

static int session(struct replica *r, char *why, size_t cap)
{
	r->storage_error = 0;
	if (connect_provider(r, why, cap) < 0)
		return SESSION_ERROR;
	if (syncrepl_is_ad(r->conf))
		return ad_poll(r, why, cap);
	if (start_search(r, why, cap) < 0)
		return SESSION_ERROR;
	replica_set_state(r, "refreshing", NULL);
	probe_reset(r);
	int status = 3;
	while (status == 3) {
		if (replica_stopping(r)) {
			status = SESSION_STOPPED;
			break;
		}
		probe_step(r);
		/* What has arrived is applied without waiting; when nothing more is there (or
		 * the batch is full) what a cookie covers commits. */
		LDAPMessage *m = NULL;
		struct timeval zero = {0, 0}, poll = {0, POLL_MS * 1000};
		int type = ldap_result(r->ld, r->msgid, LDAP_MSG_ONE, &zero, &m);
		if (type == 0 || (r->txn && r->batched >= BATCH_MAX)) {
			int rc = replica_txn_commit(r);
			if (rc) {
				write_failed(r, rc, "commit", why, cap);
				status = SESSION_ERROR;
				break;
			}
			if (replica_reload_due(r)) {
				ldap_msgfree(m); /* (NULL when none came) */
				r->drop_cookie = true;
				status = SESSION_RELOAD;
				break;
			}
			if (type == 0 && reconcile_step(r, why, cap) < 0) {
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
		if (status == 3 && replica_txn_piece(r, why, cap) < 0)
			status = SESSION_ERROR;
	}
	if (status == SESSION_DONE || status == SESSION_STOPPED) {
		int rc = replica_txn_commit(r); /* what a cookie covers is kept */
		if (rc) {
			write_failed(r, rc, "commit", why, cap);
			status = SESSION_ERROR;
		} else if (status == SESSION_DONE && reconcile_step(r, why, cap) < 0) {
			status = SESSION_ERROR;
		}
	}
	replica_txn_abort(r); /* changes no cookie covers: the next session receives them again */
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
	for (int i = 0; i < seconds * (1000 / POLL_MS) && !replica_stopping(r); i++) {
		struct timespec t = {0, POLL_MS * 1000000L};
		nanosleep(&t, NULL);
	}
}

static void *replica_main(void *arg)
{
	struct replica *r = arg;
	const struct syncrepl_conf *s = r->conf;
	int step = 0, left = s->retry_count[0];
	int storage_failures = 0; /* sessions in a row that failed writing the database */
	while (!replica_stopping(r)) {
		char why[512] = "";
		int status = session(r, why, sizeof(why));
		end_session(r);
		if (status == SESSION_STOPPED || replica_stopping(r))
			break;
		if (status == SESSION_RELOAD)
			continue;
		if (status != SESSION_ERROR || !r->storage_error)
			storage_failures = 0;
		if (status == SESSION_DONE) {
			step = 0, left = s->retry_count[0];
			replica_set_state(r, "idle", NULL);
			pause_for(r, s->interval);
			continue;
		}
		if (strcmp(r->st.state, "persisting") == 0)
			step = 0,
			left = s->retry_count[0]; /* it worked: the schedule starts over */
		if (left == 0 && step + 1 < s->nretry)
			left = s->retry_count[++step];
		if (left == 0) {
			replica_set_state(r, "stopped", why);
			log_error("syncrepl rid=%03d: the retry schedule is used up; not retrying "
			          "(restart minidir to try again)",
			          s->rid);
			break;
		}
		if (left > 0)
			left--;
		replica_set_state(r, "retrying", why);
		int wait = s->retry_interval[step];
		if (r->storage_error) {
			wait = wait < 1 ? 1 : wait;
			for (int i = 0; i < storage_failures && wait < STORAGE_BACKOFF_MAX; i++)
				wait *= 2;
			wait = wait > STORAGE_BACKOFF_MAX ? STORAGE_BACKOFF_MAX : wait;
			storage_failures++;
			log_info("syncrepl rid=%03d: the database could not be written (%s); "
			         "retrying in %d s (doubled after each such failure, up to %d s)",
			         s->rid, db_error_text(r->storage_error), wait,
			         STORAGE_BACKOFF_MAX);
		} else {
			log_debug("syncrepl rid=%03d: retrying in %d s", s->rid, wait);
		}
		pause_for(r, wait);
	}
	return NULL;
}

int replica_start(struct server *srv, void (*on_first_refresh)(struct server *srv))
{
	struct replica *r = calloc(1, sizeof(*r));
	if (!r) {
		log_error("syncrepl: out of memory");
		return -1;
	}
	r->srv = srv;
	r->on_first_refresh = on_first_refresh;
	r->conf = &srv->cfg.syncrepl;
	r->db = &srv->gen->db;
	pthread_mutex_init(&r->lock, NULL);
	r->st.state = "refreshing";
	r->st.lag_ms = -1;
	r->st.lag_changes = -1;
	r->provider_last = -1;
	r->poll_usn = r->committed_usn = -1;
	r->reconciled_ms = (int64_t)(clock_ns() / 1000000);
	r->st.state_since_ms = (int64_t)(clock_ns() / 1000000);
	/* Asked four times within the lag /readyz allows, from a tenth of a second to 10 s
	 * apart (replica.c's probe); only when something reads the answer. */
	if (srv->cfg.metrics_listen.set) {
		int every = srv->cfg.ready_max_lag_ms / 4;
		r->probe_every_ms = every < 100 ? 100 : every > 10000 ? 10000 : every;
	}
	snprintf(r->st.provider, sizeof(r->st.provider), "%s", r->conf->provider);
	replica_status_load(r);
	if (srv->feed && change_feed_publish(srv->feed, r->st.cookie, strlen(r->st.cookie)) < 0) {
		log_error("syncrepl: out of memory");
		pthread_mutex_destroy(&r->lock);
		free(r);
		return -1;
	}
	r->attrs_default = strcmp(r->conf->attrs, "*,+") == 0;
	snprintf(r->attrs_buf, sizeof(r->attrs_buf), "%s", r->conf->attrs);
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(r->attrs_buf, ", ", &save); t && n < 63;
	     t = strtok_r(NULL, ", ", &save))
		r->attrs[n++] = t;
	r->attrs[n] = NULL;
	int rc = pthread_create(&r->thread, NULL, replica_main, r);
	if (rc) {
		log_error("syncrepl: starting the consumer thread: %s", strerror(rc));
		pthread_mutex_destroy(&r->lock);
		free(r);
		return -1;
	}
	/* The workers already run and read it (cn=replication, cn=monitor): published whole,
	 * and only once its thread runs, so a failed start never frees what a worker may
	 * have loaded. The thread has r; it does not read srv->replica. */
	__atomic_store_n(&srv->replica, r, __ATOMIC_RELEASE);
	log_info("syncrepl rid=%03d: following %s (%s, base \"%s\")", r->conf->rid,
	         r->conf->provider,
	         r->conf->type == SYNCREPL_REFRESH_AND_PERSIST ? "refreshAndPersist"
	         : r->conf->type == SYNCREPL_DIRSYNC           ? "dirSync"
	         : r->conf->type == SYNCREPL_USN_CHANGED       ? "usnChanged"
	                                                       : "refreshOnly",
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
}

void replica_free(struct server *srv)
{
	struct replica *r = srv->replica;
	if (!r)
		return;
	srv->replica = NULL;
	pthread_mutex_destroy(&r->lock);
	free(r->present);
	held_clear(&r->held);
	free(r->oversized);
	free(r->refetch);
	free(r);
}

bool replica_status(struct server *srv, struct replica_status *out)
{
	struct replica *r = __atomic_load_n(&srv->replica, __ATOMIC_ACQUIRE);
	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	*out = r->st;
	pthread_mutex_unlock(&r->lock);
	out->lag_entries = __atomic_load_n(&r->pending_changes, __ATOMIC_RELAXED);
	return true;
}
