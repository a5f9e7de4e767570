/* An Active Directory provider followed by DirSync: see dirsync.h. */
#include "server/replica/dirsync.h"
#include "server/replica/ad_dc.h"
#include "server/replica/ad_object.h"
#include "server/replica/ad_poll.h"

#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/sync.h"
#include "protocol/tlv.h"
#include "server/log.h"
#include "storage/db_update.h"

/*
 * One page: the search with the control and cookie, its objects applied, and the DC's
 * next cookie into cookie with whether it has more (*more). Returns 0, 1 when the DC
 * refused a cookie it was sent (an LDAP result, not a lost connection), 2 when the page is
 * to be asked again (OBJECT_SECURITY set since), or -1 with why set.
 */
static int page(struct replica *r, struct buf *cookie, bool *more, struct ad_scratch *s, char *why,
                size_t cap)
{
	const struct syncrepl_conf *c = r->conf;
	struct berval cb = {cookie->len, cookie->len ? (char *)cookie->data : ""};
	LDAPControl *ctrl = NULL;
	if (ldap_create_dirsync_control(r->ld, r->dirsync_flags, 0, &cb, &ctrl) != LDAP_SUCCESS) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	LDAPControl *ctrls[] = {ctrl, NULL};
	LDAPMessage *res = NULL;
	struct timeval t = {c->network_timeout + 25, 0};
	int rc = ldap_search_ext_s(r->ld, c->searchbase, LDAP_SCOPE_SUBTREE, c->filter,
	                           r->search_attrs, 0, ctrls, NULL, &t, LDAP_NO_LIMIT, &res);
	ldap_control_free(ctrl);
	int status = 0;
	if (rc != LDAP_SUCCESS) {
		char *diag = NULL;
		ldap_get_option(r->ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
		snprintf(why, cap, "DirSync search: %s (%d)%s%.200s", ldap_err2string(rc), rc,
		         diag && *diag ? ": " : "", diag ? diag : "");
		ldap_memfree(diag);
		ldap_msgfree(res);
		/* An account without the replication right: what it may read, by the flag. */
		if (rc == LDAP_INSUFFICIENT_ACCESS &&
		    !(r->dirsync_flags & LDAP_CONTROL_X_DIRSYNC_OBJECT_SECURITY)) {
			r->dirsync_flags |= LDAP_CONTROL_X_DIRSYNC_OBJECT_SECURITY;
			log_info(
			    "syncrepl rid=%03d: the DC refused DirSync to \"%s\" (%s): asking "
			    "again with OBJECT_SECURITY, for what the account may read (give it "
			    "\"Replicating Directory Changes\" for the whole domain)",
			    c->rid, c->binddn, why);
			return 2;
		}
		/* A cookie the DC no longer takes (Samba: unavailableCriticalExtension, "Unable
		 * to unmarshall cookie"; or what a DC says of a control value it refuses); the
		 * rest (a time or admin limit, a busy DC) is tried again from the same cookie. */
		bool refused = rc == LDAP_UNAVAILABLE_CRITICAL_EXTENSION ||
		               rc == LDAP_PROTOCOL_ERROR || rc == LDAP_UNWILLING_TO_PERFORM;
		return refused && cookie->len ? 1 : -1;
	}
	for (LDAPMessage *e = ldap_first_entry(r->ld, res); e && status == 0;
	     e = ldap_next_entry(r->ld, e)) {
		if ((status = replica_txn_open(r)) != 0) {
			snprintf(why, cap, "write transaction: %s", db_error_text(status));
			status = -1;
		} else if ((status = ad_object_apply(r, e, NULL, 0, false, s, why, cap)) == 0) {
			status = replica_txn_piece(r, why, cap);
		}
	}
	LDAPControl **rctrls = NULL;
	int err = 0;
	if (status == 0 &&
	    ldap_parse_result(r->ld, res, &err, NULL, NULL, NULL, &rctrls, 0) != LDAP_SUCCESS) {
		snprintf(why, cap, "the DirSync search's result does not parse");
		status = -1;
	}
	LDAPControl *dc = status == 0 ? ldap_control_find(DIRSYNC_OID, rctrls, NULL) : NULL;
	struct berval next = {0, NULL};
	int flag = 0;
	if (status == 0 &&
	    (!dc || ldap_parse_dirsync_control(r->ld, dc, &flag, &next) != LDAP_SUCCESS ||
	     !next.bv_val)) {
		snprintf(why, cap, "the DC's answer has no DirSync control with a cookie");
		status = -1;
	}
	if (status == 0) {
		cookie->off = cookie->len = 0;
		if (buf_append(cookie, next.bv_val, next.bv_len) < 0) {
			snprintf(why, cap, "out of memory");
			status = -1;
		}
		*more = flag != 0;
	}
	ber_memfree(next.bv_val);
	ldap_controls_free(rctrls);
	ldap_msgfree(res);
	return status;
}

int dirsync_session(struct replica *r, char *why, size_t cap)
{
	const struct syncrepl_conf *c = r->conf;
	struct buf cookie = {0};
	struct ad_scratch s = {0};
	replica_stored_cookie(r, &cookie);
	bool resumed = cookie.len > 0;
	if (resumed)
		log_debug("syncrepl rid=%03d: DirSync from the stored cookie (%zu bytes)", c->rid,
		          cookie.len);
	else if (r->logged_error[0])
		log_debug("syncrepl rid=%03d: no cookie: full DirSync refresh from %s", c->rid,
		          c->provider);
	else
		log_info("syncrepl rid=%03d: no cookie: full DirSync refresh from %s", c->rid,
		         c->provider);
	replica_poll_begin(r, !resumed, ad_dc_usn(r, NULL, 0));
	int status = SESSION_ERROR, rc;
	bool more = true, retried = false;
	for (long pages = 0; more; pages++) {
		if (replica_stopping(r)) {
			status = SESSION_STOPPED;
			goto out;
		}
		if (pages == DIRSYNC_MAX_PAGES) {
			snprintf(why, cap, "the DC still has more after %d pages",
			         DIRSYNC_MAX_PAGES);
			goto out;
		}
		rc = page(r, &cookie, &more, &s, why, cap);
		if (rc == 2 && !retried) {
			retried = true;
			pages--;
			continue;
		}
		if (rc == 1) {
			log_info("syncrepl rid=%03d: the DC refused the stored cookie (%s): full "
			         "refresh",
			         c->rid, why);
			r->drop_cookie = true;
			status = SESSION_RELOAD;
			goto out;
		}
		if (rc < 0)
			goto out;
	}
	struct berval cb = {cookie.len, (char *)cookie.data};
	if (replica_poll_end(r, &cb, why, cap) == 0)
		status = SESSION_DONE;
out:
	ad_scratch_free(&s);
	buf_free(&cookie);
	return status;
}
