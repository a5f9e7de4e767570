/* An Active Directory provider followed by uSNChanged polling: see usn.h. */
#include "server/replica/usn.h"
#include "server/replica/ad_dc.h"
#include "server/replica/ad_object.h"
#include "server/replica/ad_poll.h"
#include "server/replica/usn_text.h"

#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "server/log.h"
#include "storage/db_update.h"

/* One poll: the USNs it spans (low: the cookie's, high: the DC's when it began), the
 * DC's invocationId, and whether it is a full load. */
struct poll {
	long long low, high;
	char inv[AD_DC_INVOCATION_LEN];
	bool full;
	struct ad_scratch s;
	long unkeyed; /* objects without an objectGUID this account may read: not stored */
	char unkeyed_why[256];
};

/* The value lists of a ranged attribute's later windows (their messages kept, as the
 * values point into them), merged after the object's own. */
struct ranged {
	LDAPMessage **msg;
	BerElement **ber;
	struct berval *v;
	size_t n, cap;
};

static void ranged_clear(struct ranged *x)
{
	for (size_t i = 0; i < x->n; i++) {
		ber_free(x->ber[i], 0);
		ldap_msgfree(x->msg[i]);
	}
	x->n = 0;
}

static void ranged_free(struct ranged *x)
{
	ranged_clear(x);
	free(x->msg);
	free(x->ber);
	free(x->v);
	*x = (struct ranged){0};
}

/* Keeps res and the attribute list of its entry e. 0, or -1 (res freed). */
static int ranged_keep(struct replica *r, struct ranged *x, LDAPMessage *res, LDAPMessage *e)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 4;
		LDAPMessage **m = realloc(x->msg, cap * sizeof(*m));
		if (m)
			x->msg = m;
		BerElement **b = m ? realloc(x->ber, cap * sizeof(*b)) : NULL;
		if (b)
			x->ber = b;
		struct berval *v = b ? realloc(x->v, cap * sizeof(*v)) : NULL;
		if (!v) {
			ldap_msgfree(res);
			return -1;
		}
		x->v = v;
		x->cap = cap;
	}
	if (replica_entry_attrs(r->ld, e, &x->v[x->n], &x->ber[x->n]) < 0) {
		ldap_msgfree(res);
		return -1;
	}
	x->msg[x->n++] = res;
	return 0;
}

/* The window of type t[0..blen) from value `from` on of the object at dn, kept in x:
 * 1 when the DC has more (*hi, the window's last), 0 when it was the last (or the object
 * or the values are gone meanwhile: the next poll brings it again), -1 with why set. */
static int next_window(struct replica *r, const char *dn, const char *t, size_t blen,
                       long long from, struct ranged *x, long long *hi, char *why, size_t cap)
{
	char want[160];
	snprintf(want, sizeof(want), "%.*s;range=%lld-*", (int)(blen < 100 ? blen : 100), t, from);
	char *attrs[] = {want, NULL};
	struct timeval tv = {r->conf->network_timeout + 25, 0};
	LDAPMessage *res = NULL;
	int rc = ldap_search_ext_s(r->ld, dn, LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, NULL,
	                           NULL, &tv, 1, &res);
	LDAPMessage *e = rc == LDAP_SUCCESS ? ldap_first_entry(r->ld, res) : NULL;
	if (!e) {
		ldap_msgfree(res);
		if (rc == LDAP_SUCCESS || rc == LDAP_NO_SUCH_OBJECT)
			return 0;
		snprintf(why, cap, "%.100s of %.200s: %s (%d)", want, dn, ldap_err2string(rc), rc);
		return -1;
	}
	int more = 0;
	BerElement *ab = NULL;
	for (char *a = ldap_first_attribute(r->ld, e, &ab); a;
	     a = ldap_next_attribute(r->ld, e, ab)) {
		size_t l;
		long long h = 0;
		int k = usn_range_end(a, &l, &h);
		if (k >= 0 && l == blen && strncasecmp(a, t, blen) == 0) {
			more = k == 1 && h >= from; /* a window that does not advance ends it */
			*hi = h;
		}
		ldap_memfree(a);
	}
	ber_free(ab, 0);
	if (ranged_keep(r, x, res, e) < 0) {
		snprintf(why, cap, "%.100s of %.200s: out of memory", want, dn);
		return -1;
	}
	return more;
}

/* The later windows of every attribute of e the DC cut at its MaxValRange
 * ("member;range=0-1499"), into x. 0, or -1 with why set. */
static int ranged_rest(struct replica *r, LDAPMessage *e, struct ranged *x, char *why, size_t cap)
{
	BerElement *ab = NULL;
	char *dn = NULL;
	int st = 0;
	for (char *a = ldap_first_attribute(r->ld, e, &ab); a;
	     a = ldap_next_attribute(r->ld, e, ab)) {
		size_t blen;
		long long hi;
		if (st == 0 && usn_range_end(a, &blen, &hi) == 1) {
			if (!dn)
				dn = ldap_get_dn(r->ld, e);
			long w = 0;
			while (dn &&
			       (st = next_window(r, dn, a, blen, hi + 1, x, &hi, why, cap)) == 1)
				if (++w == USN_MAX_PAGES) {
					snprintf(why, cap,
					         "%.200s: %s still has more after %d windows", dn,
					         a, USN_MAX_PAGES);
					st = -1;
					break;
				}
			if (!dn) {
				snprintf(why, cap, "an object of the DC's answer has no DN");
				st = -1;
			}
		}
		ldap_memfree(a);
	}
	ber_free(ab, 0);
	ldap_memfree(dn);
	return st < 0 ? -1 : 0;
}

/* One page's objects applied, each whole (a live one replaces the stored entry, a
 * tombstone deletes it). *count adds them. 0, or -1 with why set. */
static int apply_page(struct replica *r, struct poll *p, LDAPMessage *res, long *count, char *why,
                      size_t cap)
{
	struct ranged x = {0};
	int st = 0;
	for (LDAPMessage *e = ldap_first_entry(r->ld, res); e && st == 0;
	     e = ldap_next_entry(r->ld, e)) {
		if ((st = replica_txn_open(r)) != 0) {
			snprintf(why, cap, "write transaction: %s", db_error_text(st));
			st = -1;
			break;
		}
		ranged_clear(&x);
		if (ranged_rest(r, e, &x, why, cap) < 0)
			st = -1;
		else
			st = ad_object_apply(r, e, x.v, x.n, true, &p->s, why, cap);
		if (st == 1 && !p->unkeyed++)
			snprintf(p->unkeyed_why, sizeof(p->unkeyed_why), "%s", why);
		st = st == 1 ? 0 : st;
		(*count)++;
		if (st == 0)
			st = replica_txn_piece(r, why, cap);
	}
	ranged_free(&x);
	return st;
}

/*
 * One page of a search of searchbase for filter (extra: a further control, or NULL),
 * from the Paged Results cookie *pc, which the DC's next replaces (empty: the last
 * page): its answer into *res (the caller's to free). 0, or -1 with why set and the LDAP
 * result in *ldrc.
 */
static int page(struct replica *r, const char *filter, char **attrs, LDAPControl *extra,
                struct berval *pc, LDAPMessage **res, int *ldrc, char *why, size_t cap)
{
	const struct syncrepl_conf *c = r->conf;
	LDAPControl *pctrl = NULL, **rctrls = NULL;
	*res = NULL;
	if ((*ldrc = ldap_create_page_control(r->ld, USN_PAGE_SIZE, pc, 1, &pctrl)) !=
	    LDAP_SUCCESS) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	LDAPControl *ctrls[] = {pctrl, extra, NULL};
	struct timeval t = {c->network_timeout + 25, 0};
	*ldrc = ldap_search_ext_s(r->ld, c->searchbase, LDAP_SCOPE_SUBTREE, filter, attrs, 0, ctrls,
	                          NULL, &t, LDAP_NO_LIMIT, res);
	ldap_control_free(pctrl);
	int err = LDAP_SUCCESS;
	if (*ldrc == LDAP_SUCCESS &&
	    ldap_parse_result(r->ld, *res, &err, NULL, NULL, NULL, &rctrls, 0) != LDAP_SUCCESS)
		*ldrc = LDAP_DECODING_ERROR;
	LDAPControl *rc = *ldrc == LDAP_SUCCESS
	                      ? ldap_control_find(LDAP_CONTROL_PAGEDRESULTS, rctrls, NULL)
	                      : NULL;
	ber_int_t estimate;
	ber_memfree(pc->bv_val);
	*pc = (struct berval){0, NULL};
	if (rc && ldap_parse_pageresponse_control(r->ld, rc, &estimate, pc) != LDAP_SUCCESS)
		*ldrc = LDAP_DECODING_ERROR;
	ldap_controls_free(rctrls);
	if (*ldrc == LDAP_SUCCESS)
		return 0;
	char *diag = NULL;
	ldap_get_option(r->ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
	snprintf(why, cap, "search %.200s: %s (%d)%s%.200s", filter, ldap_err2string(*ldrc), *ldrc,
	         diag && *diag ? ": " : "", diag ? diag : "");
	ldap_memfree(diag);
	return -1;
}

/* A search for filter page after page, each object applied (apply_page);
 * *count the objects. 0, 1 when the replica is stopping, or -1 with why set and the LDAP
 * result in *ldrc (LDAP_SUCCESS when the failure was not the DC's answer). */
static int paged(struct replica *r, struct poll *p, const char *filter, char **attrs,
                 LDAPControl *extra, long *count, int *ldrc, char *why, size_t cap)
{
	struct berval pc = {0, NULL};
	int st = 0;
	*count = 0;
	for (long pages = 0; st == 0; pages++) {
		*ldrc = LDAP_SUCCESS;
		if (replica_stopping(r)) {
			st = 1;
			break;
		}
		if (pages == USN_MAX_PAGES) {
			snprintf(why, cap, "the DC still has more after %d pages", USN_MAX_PAGES);
			st = -1;
			break;
		}
		LDAPMessage *res = NULL;
		st = page(r, filter, attrs, extra, &pc, &res, ldrc, why, cap);
		if (st == 0)
			st = apply_page(r, p, res, count, why, cap);
		ldap_msgfree(res);
		if (!pc.bv_len)
			break;
	}
	ber_memfree(pc.bv_val);
	return st;
}

/* Whether this account is shown tombstones: a one-level search of CN=Deleted Objects
 * with Show Deleted. A DC says nothing when it may not (AD hides the container; Samba
 * shows the container, but no tombstone in it, to a plain user), so none at all is
 * logged too, as what it may mean. Asked at the first poll (again after a failure to
 * ask); logged once. */
static void check_deleted_visible(struct replica *r)
{
	static char *attrs[] = {LDAP_NO_ATTRS, NULL};
	const struct syncrepl_conf *c = r->conf;
	char dn[1100];
	snprintf(dn, sizeof(dn), "CN=Deleted Objects,%s", c->searchbase);
	LDAPControl *sd = NULL;
	if (ldap_control_create(USN_SHOW_DELETED_OID, 1, NULL, 0, &sd) != LDAP_SUCCESS)
		return;
	LDAPControl *ctrls[] = {sd, NULL};
	struct timeval t = {c->network_timeout + 25, 0};
	LDAPMessage *res = NULL;
	int rc = ldap_search_ext_s(r->ld, dn, LDAP_SCOPE_ONELEVEL, "(isDeleted=TRUE)", attrs, 0,
	                           ctrls, NULL, &t, 1, &res);
	bool seen =
	    (rc == LDAP_SUCCESS || rc == LDAP_SIZELIMIT_EXCEEDED) && ldap_first_entry(r->ld, res);
	ldap_msgfree(res);
	ldap_control_free(sd);
	if (rc == LDAP_SERVER_DOWN || rc == LDAP_TIMEOUT || rc == LDAP_BUSY)
		return;
	r->deleted_checked = true;
	if (!seen && rc != LDAP_SUCCESS)
		log_error("syncrepl rid=%03d: \"%s\" cannot read %s (%s): deletions on the DC are "
		          "not visible to this account and do not reach the replica until a full "
		          "load (without the database file); give it List Contents there",
		          c->rid, c->binddn, dn, ldap_err2string(rc));
	else if (!seen)
		log_info("syncrepl rid=%03d: \"%s\" is shown no deleted object in %s: none yet, "
		         "or deletions on the DC are not visible to this account (then they do not "
		         "reach the replica until a full load; give it List Contents there)",
		         c->rid, c->binddn, dn);
	r->deleted_unseen = !seen;
}

/* The tombstones of the poll's USNs (usn.h, 3.) deleted. 0, 1 (stopping) or -1 with why
 * set. */
static int deletions(struct replica *r, struct poll *p, char *why, size_t cap)
{
	static char *attrs[] = {"objectGUID", "isDeleted", "instanceType", NULL};
	char filter[128];
	snprintf(filter, sizeof(filter), "(&(isDeleted=TRUE)(uSNChanged>=%lld)(uSNChanged<=%lld))",
	         p->low + 1, p->high);
	LDAPControl *sd = NULL;
	if (ldap_control_create(USN_SHOW_DELETED_OID, 1, NULL, 0, &sd) != LDAP_SUCCESS) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	long n;
	int ldrc;
	int st = paged(r, p, filter, attrs, sd, &n, &ldrc, why, cap);
	ldap_control_free(sd);
	/* A DC that refuses this account the control: as one that shows it nothing. */
	if (st < 0 &&
	    (ldrc == LDAP_INSUFFICIENT_ACCESS || ldrc == LDAP_UNAVAILABLE_CRITICAL_EXTENSION)) {
		if (!r->deleted_unseen)
			log_error(
			    "syncrepl rid=%03d: the DC refused the search for deleted objects "
			    "(%s): deletions do not reach the replica",
			    r->conf->rid, why);
		r->deleted_unseen = true;
		st = 0;
	}
	return st;
}

/* The live objects of the poll's USNs (usn.h, 2.; all of them in a full load), stored
 * whole. 0, 1 (stopping) or -1 with why set. */
static int changes(struct replica *r, struct poll *p, char *why, size_t cap)
{
	static const char *const own[] = {"objectGUID", "uSNChanged", "instanceType", "isDeleted",
	                                  "name"};
	char *attrs[72];
	size_t na = 0;
	/* The configured list, and what the poll needs itself (none: every attribute). */
	for (char **a = r->search_attrs; a && *a && na < 64; a++)
		attrs[na++] = *a;
	for (size_t i = 0; r->search_attrs && i < sizeof(own) / sizeof(own[0]); i++)
		attrs[na++] = (char *)own[i];
	attrs[na] = NULL;
	const char *f = r->conf->filter;
	bool bare = f[0] != '('; /* libldap takes "objectClass=user": bracketed here */
	char filter[1200];
	if (p->full)
		snprintf(filter, sizeof(filter), "%s%s%s", bare ? "(" : "", f, bare ? ")" : "");
	else
		snprintf(filter, sizeof(filter), "(&%s%s%s(uSNChanged>=%lld)(uSNChanged<=%lld))",
		         bare ? "(" : "", f, bare ? ")" : "", p->low + 1, p->high);
	long n;
	int ldrc;
	return paged(r, p, filter, r->search_attrs ? attrs : NULL, NULL, &n, &ldrc, why, cap);
}

/* Whether the poll resumes from the stored cookie c (p->low set), or is a full load: no
 * cookie, or one that does not parse, or of another invocation of the DC, or past its
 * USN (each logged). p->inv is the invocationId the new cookie keeps. */
static bool resumes(struct replica *r, const struct buf *c, struct poll *p)
{
	const struct syncrepl_conf *conf = r->conf;
	char inv[AD_DC_INVOCATION_LEN];
	if (!p->inv[0] && !r->invocation_unread) { /* a restore would go unnoticed */
		r->invocation_unread = true;
		log_error("syncrepl rid=%03d: \"%s\" cannot read the DC's invocationId (its NTDS "
		          "Settings object, named by the root DSE's dsServiceName): a DC restored "
		          "from a backup would not be noticed",
		          conf->rid, conf->binddn);
	}
	if (!c->len) {
		if (r->logged_error[0])
			log_debug("syncrepl rid=%03d: no cookie: full uSNChanged load from %s",
			          conf->rid, conf->provider);
		else
			log_info("syncrepl rid=%03d: no cookie: full uSNChanged load from %s",
			         conf->rid, conf->provider);
		return false;
	}
	if (usn_cookie_parse((const char *)c->data, c->len, &p->low, inv, sizeof(inv)) < 0) {
		log_info("syncrepl rid=%03d: the stored cookie (%zu bytes) is not a usnChanged one "
		         "(usn=N;invocationId=GUID): full uSNChanged load",
		         conf->rid, c->len);
		return false;
	}
	if (!p->inv[0]) /* unknown now: the stored one is kept */
		snprintf(p->inv, sizeof(p->inv), "%s", inv);
	if (strcmp(inv, p->inv) != 0) {
		log_info("syncrepl rid=%03d: the DC's invocationId is %s, the cookie's %s (a DC "
		         "restored from a backup, or another DC behind %s): its USNs are not the "
		         "cookie's: full uSNChanged load",
		         conf->rid, p->inv, inv, conf->provider);
		return false;
	}
	if (p->low > p->high) {
		log_info("syncrepl rid=%03d: the cookie's USN %lld is above the DC's "
		         "highestCommittedUSN %lld: full uSNChanged load",
		         conf->rid, p->low, p->high);
		return false;
	}
	log_debug("syncrepl rid=%03d: uSNChanged %lld to %lld", conf->rid, p->low + 1, p->high);
	return true;
}

int usn_session(struct replica *r, char *why, size_t cap)
{
	struct poll p = {.low = -1};
	struct buf cookie = {0};
	p.high = ad_dc_usn(r, p.inv, sizeof(p.inv));
	if (p.high < 0) {
		snprintf(why, cap, "the DC's root DSE gives no highestCommittedUSN");
		return SESSION_ERROR;
	}
	replica_stored_cookie(r, &cookie);
	p.full = !resumes(r, &cookie, &p);
	buf_free(&cookie);
	replica_poll_begin(r, p.full, p.high);
	if (!r->deleted_checked)
		check_deleted_visible(r);
	int st = 0;
	if (p.full || p.high > p.low) /* else nothing changed: no search */
		st = changes(r, &p, why, cap);
	if (st == 0 && !p.full && p.high > p.low)
		st = deletions(r, &p, why, cap);
	char text[128]; /* the new cookie (usn_text.h) */
	int n = usn_cookie_format(p.high, p.inv, text, sizeof(text));
	struct berval cb = {n < 0 ? 0 : (ber_len_t)n, text};
	if (st == 0)
		st = replica_poll_end(r, &cb, why, cap);
	if (st == 0 && p.unkeyed)
		log_info(
		    "syncrepl rid=%03d: %ld objects came without an objectGUID \"%s\" may read "
		    "(the first: %s): not stored",
		    r->conf->rid, p.unkeyed, r->conf->binddn, p.unkeyed_why);
	ad_scratch_free(&p.s);
	return st == 1 ? SESSION_STOPPED : st < 0 ? SESSION_ERROR : SESSION_DONE;
}
