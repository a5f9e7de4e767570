/* An Active Directory provider followed by DirSync: see dirsync.h. */
#include "server/replica/dirsync.h"
#include "server/replica/dirsync_merge.h"
#include "server/replica/ds389.h"

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

/* ---- the DC's messages --------------------------------------------------------------- */

/* A poll's buffers, reused entry after entry (g*: a group's, rewritten). */
struct scratch {
	struct merged m, gm;
	struct buf rec, out, set, seq, grec, ids, key, vkey;
};

static void scratch_free(struct scratch *s)
{
	merged_free(&s->m);
	merged_free(&s->gm);
	buf_free(&s->rec);
	buf_free(&s->out);
	buf_free(&s->set);
	buf_free(&s->seq);
	buf_free(&s->grec);
	buf_free(&s->ids);
	buf_free(&s->key);
	buf_free(&s->vkey);
}

/* db_foreach_group's fn: the group's ID into the buf. */
static int collect_group(entry_id group, void *arg)
{
	return buf_append(arg, &group, sizeof(group)) < 0 ? 1 : 0;
}

/*
 * The groups whose member values name entry id (renamed to new_dn, or deleted: new_dn
 * NULL) rewritten: each value naming its DN now (compared in normal form) replaced by
 * new_dn, or removed. A DC changes its groups' links itself when a member is renamed,
 * moved or deleted, but the DirSync stream says nothing of it. Called before the entry
 * changes (the links name it until then). 0, or -1 with why set.
 */
static int rewrite_members(struct replica *r, struct scratch *s, entry_id id, const char *new_dn,
                           char *why, size_t cap)
{
	struct db_read *rd = db_write_reads(r->txn);
	struct entry_view e;
	s->ids.off = s->ids.len = s->key.off = s->key.len = 0;
	int rc = db_foreach_group(r->db, rd, id, collect_group, &s->ids);
	if (rc == 0 && (rc = db_get_entry(r->db, rd, id, &e)) == 0 &&
	    dn_normalize((const char *)e.dn, e.dnlen, &s->key, NULL) < 0)
		rc = -1;
	if (rc) {
		snprintf(why, cap, "the groups of a renamed or deleted member: %s",
		         rc < 0 ? "its DN does not parse" : db_error_text(rc));
		return -1;
	}
	for (size_t i = 0; i < s->ids.len / sizeof(entry_id); i++) {
		entry_id g;
		memcpy(&g, s->ids.data + i * sizeof(g), sizeof(g));
		if (db_get_entry(r->db, rd, g, &e) != 0)
			continue; /* gone meanwhile */
		unsigned char uuid[SYNC_UUID_LEN];
		memcpy(uuid, e.uuid, SYNC_UUID_LEN);
		char *gdn = strndup((const char *)e.dn, e.dnlen);
		merged_clear(&s->gm);
		s->grec.off = s->grec.len = 0;
		struct merged_attr *a = NULL;
		int st = !gdn || buf_append(&s->grec, e.attrs, e.attrslen) < 0 ||
		                 merged_add(&s->gm, s->grec.data, s->grec.len, false) < 0 ||
		                 !(a = merged_attr_of(&s->gm, "member", 6))
		             ? -1
		             : 0;
		for (size_t j = 0; st == 0 && j < a->n;) {
			s->vkey.off = s->vkey.len = 0;
			if (dn_normalize(a->v[j].bv_val, a->v[j].bv_len, &s->vkey, NULL) == 0 &&
			    s->vkey.len == s->key.len &&
			    memcmp(s->vkey.data, s->key.data, s->key.len) == 0)
				a->v[j] = a->v[--a->n];
			else
				j++;
		}
		if (st == 0 && new_dn)
			st = merged_value_add(a, new_dn, strlen(new_dn));
		if (st == 0)
			st = merged_encode(&s->gm, &s->out, &s->set, &s->seq);
		if (st < 0)
			snprintf(why, cap, "rewriting the members of %.200s: out of memory",
			         gdn ? gdn : "?");
		else
			st = replica_put(r, uuid, gdn, s->out.data, s->out.len, why, cap);
		free(gdn);
		if (st < 0)
			return -1;
	}
	return 0;
}

/* The first value of type name in the content of a PartialAttributeList, or false. */
static bool first_value(const unsigned char *p, size_t len, const char *name,
                        const unsigned char **v, size_t *vlen)
{
	const unsigned char *end = p + len, *seq, *t, *vals;
	size_t slen, tlen, setlen, nlen = strlen(name);
	unsigned char tag;
	while (p < end && tlv_read(&p, end, &tag, &seq, &slen)) {
		const unsigned char *q = seq, *r;
		if (!tlv_read(&q, seq + slen, &tag, &t, &tlen) ||
		    !tlv_read(&q, seq + slen, &tag, &vals, &setlen))
			return false;
		r = vals;
		if (tlen == nlen && strncasecmp((const char *)t, name, nlen) == 0)
			return tlv_read(&r, vals + setlen, &tag, v, vlen);
	}
	return false;
}

/*
 * Whether the object at dn (attributes a[0..len)) is not one the replica holds: a
 * tombstone (isDeleted: TRUE), or the head of another naming context below the one
 * replicated (instanceType's bit 1, IT_NC_HEAD: the DC sends CN=Configuration under the
 * domain's root, where a search of the domain answers a referral to it, not the object).
 */
static bool not_here(struct replica *r, struct scratch *s, const char *dn, const unsigned char *a,
                     size_t len)
{
	const unsigned char *v;
	size_t vlen;
	if (first_value(a, len, "isDeleted", &v, &vlen) && vlen == 4 &&
	    strncasecmp((const char *)v, "TRUE", 4) == 0)
		return true;
	long long type = first_value(a, len, "instanceType", &v, &vlen)
	                     ? ds389_decimal((const char *)v, vlen)
	                     : -1;
	if (type < 0 || !(type & 1))
		return false;
	s->key.off = s->key.len = s->vkey.off = s->vkey.len = 0;
	const char *base = r->conf->searchbase;
	return dn_normalize(dn, strlen(dn), NULL, &s->key) == 0 &&
	       dn_normalize(base, strlen(base), NULL, &s->vkey) == 0 &&
	       (s->key.len != s->vkey.len || memcmp(s->key.data, s->vkey.data, s->key.len) != 0);
}

/*
 * One object the DC sent: a tombstone (or another naming context's head) deleted, anything else
 * merged with the stored copy (when there is one) and stored. An object the replica does not hold
 * that comes without its objectClass (a change of one it skipped) is skipped, logged. 0, or -1 with
 * why set.
 */
static int on_entry(struct replica *r, LDAPMessage *e, struct scratch *s, char *why, size_t cap)
{
	char *dn = ldap_get_dn(r->ld, e);
	struct berval attrs;
	BerElement *ber = NULL;
	const unsigned char *guid, *del;
	size_t glen, dlen;
	char *old_dn = NULL;
	LDAPDN old_rdn = NULL, new_rdn = NULL;
	int status = -1;
	if (!dn || replica_entry_attrs(r->ld, e, &attrs, &ber) < 0) {
		snprintf(why, cap, "an object of the DC's answer does not parse");
		goto out;
	}
	const unsigned char *a = (const unsigned char *)attrs.bv_val;
	if (!first_value(a, attrs.bv_len, "objectGUID", &guid, &glen) || glen != SYNC_UUID_LEN) {
		snprintf(why, cap, "object %.200s: no 16-byte objectGUID (is it asked for?)", dn);
		goto out;
	}
	unsigned char uuid[SYNC_UUID_LEN];
	memcpy(uuid, guid, SYNC_UUID_LEN);
	entry_id id;
	struct entry_view stored;
	struct db_read *rd = db_write_reads(r->txn);
	bool held =
	    db_uuid2id(r->db, rd, uuid, &id) == 0 && db_get_entry(r->db, rd, id, &stored) == 0;
	if (not_here(r, s, dn, a, attrs.bv_len)) {
		status = held && rewrite_members(r, s, id, NULL, why, cap) < 0
		             ? -1
		             : replica_delete(r, uuid, why, cap);
		goto out;
	}
	merged_clear(&s->m);
	if (held) { /* copied: the writes below may reuse the page it is on */
		s->rec.off = s->rec.len = 0;
		old_dn = strndup((const char *)stored.dn, stored.dnlen);
		if (!old_dn || buf_append(&s->rec, stored.attrs, stored.attrslen) < 0 ||
		    merged_add(&s->m, s->rec.data, s->rec.len, false) < 0) {
			snprintf(why, cap, "object %.200s: out of memory", dn);
			goto out;
		}
		/* Renamed or moved: the groups that name it first, while their links hold. */
		if (strcmp(old_dn, dn) != 0 && rewrite_members(r, s, id, dn, why, cap) < 0)
			goto out;
	} else if (!first_value(a, attrs.bv_len, "objectClass", &del, &dlen)) {
		log_error("syncrepl rid=%03d: the DC sent a change of \"%s\", which the replica "
		          "does not hold (skipped before?), without its objectClass: not stored; a "
		          "full refresh (no database file) brings it",
		          r->conf->rid, dn);
		status = 0;
		goto out;
	}
	if (merged_add(&s->m, a, attrs.bv_len, true) < 0 ||
	    merged_set_rdn(&s->m, old_dn, dn, &old_rdn, &new_rdn) < 0 ||
	    merged_encode(&s->m, &s->out, &s->set, &s->seq) < 0) {
		snprintf(why, cap, "object %.200s: its attributes or DN do not parse", dn);
		goto out;
	}
	status = replica_put(r, uuid, dn, s->out.data, s->out.len, why, cap);
out:
	ldap_dnfree(old_rdn);
	ldap_dnfree(new_rdn);
	free(old_dn);
	ber_free(ber, 0);
	ldap_memfree(dn);
	return status;
}

/* The DC's highestCommittedUSN (its root DSE), or -1 when it does not say. */
static long long read_usn(struct replica *r)
{
	static char *attrs[] = {"highestCommittedUSN", NULL};
	struct timeval t = {r->conf->network_timeout + 25, 0};
	LDAPMessage *res = NULL;
	long long usn = -1;
	if (ldap_search_ext_s(r->ld, "", LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, NULL, NULL,
	                      &t, 1, &res) == LDAP_SUCCESS) {
		LDAPMessage *e = ldap_first_entry(r->ld, res);
		struct berval **v = e ? ldap_get_values_len(r->ld, e, attrs[0]) : NULL;
		if (v && v[0])
			usn = ds389_decimal(v[0]->bv_val, v[0]->bv_len);
		ldap_value_free_len(v);
	}
	ldap_msgfree(res);
	return usn;
}

/* The stored cookie into out (empty: none, or r->drop_cookie). */
static void stored_cookie(struct replica *r, struct buf *out)
{
	struct db_read *rt;
	const void *data;
	size_t len;
	out->off = out->len = 0;
	if (r->drop_cookie || db_read_begin(r->db, &rt) != 0)
		return;
	if (db_update_get_cookie(r->db, rt, &data, &len) == 0)
		(void)buf_append(out, data, len); /* out of memory: a full refresh */
	db_read_end(rt);
}

/*
 * One page: the search with the control and cookie, its objects applied, and the DC's
 * next cookie into cookie with whether it has more (*more). Returns 0, 1 when the DC
 * refused a cookie it was sent (an LDAP result, not a lost connection), 2 when the page is
 * to be asked again (OBJECT_SECURITY set since), or -1 with why set.
 */
static int page(struct replica *r, struct buf *cookie, bool *more, struct scratch *s, char *why,
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
		/* The DC answered: a cookie it no longer takes (but not a right or a busy DC). */
		status = rc > 0 && cookie->len && rc != LDAP_INSUFFICIENT_ACCESS &&
		                 rc != LDAP_BUSY && rc != LDAP_UNAVAILABLE
		             ? 1
		             : -1;
		return status;
	}
	for (LDAPMessage *e = ldap_first_entry(r->ld, res); e && status == 0;
	     e = ldap_next_entry(r->ld, e)) {
		if ((status = replica_txn_open(r)) != 0) {
			snprintf(why, cap, "write transaction: %s", db_error_text(status));
			status = -1;
		} else {
			status = on_entry(r, e, s, why, cap);
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
	struct scratch s = {0};
	stored_cookie(r, &cookie);
	bool resumed = cookie.len > 0;
	r->drop_cookie = false;
	r->full_refresh = !resumed;
	r->refreshing = true;
	r->npresent = 0;
	r->refresh_puts = r->refresh_deletes = r->refresh_held = 0;
	held_clear(&r->held);
	if (resumed)
		log_debug("syncrepl rid=%03d: DirSync from the stored cookie (%zu bytes)", c->rid,
		          cookie.len);
	else if (r->logged_error[0])
		log_debug("syncrepl rid=%03d: no cookie: full DirSync refresh from %s", c->rid,
		          c->provider);
	else
		log_info("syncrepl rid=%03d: no cookie: full DirSync refresh from %s", c->rid,
		         c->provider);
	replica_set_state(r, "refreshing", NULL);
	int status = SESSION_ERROR, rc;
	bool more = true, retried = false;
	r->poll_usn = read_usn(r);
	replica_note_provider_last(r, r->poll_usn);
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
	if ((rc = replica_txn_open(r)) != 0) {
		snprintf(why, cap, "write transaction: %s", db_error_text(rc));
		goto out;
	}
	if (replica_refresh_end(r, why, cap) < 0)
		goto out;
	if (replica_set_cookie(r, &cb) != 0) {
		snprintf(why, cap, "storing the cookie failed");
		goto out;
	}
	r->refreshing = false;
	status = SESSION_DONE;
out:
	scratch_free(&s);
	buf_free(&cookie);
	return status;
}
