/*
 * A search request (op_search, ops.h): the checks made before anything is read (anonymous
 * access, max_filter_items, the paged results control), the bases answered here (the root
 * DSE, cn=Subschema, cn=monitor, one outside the database), then the search cursor
 * (search_op.h) set up: its limits, its base found in the database (aliases dereferenced
 * when finding it, search access and the assertion control checked on it), its candidates
 * planned (search_plan.h), what it returns chosen (attributes, Matched Values, sorting).
 * search_run.c runs it; search_finish.c answers it. A paged search's next page comes here
 * too, with its cookie (resume_page).
 */
#include <ldap.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/controls.h"
#include "protocol/dn.h"
#include "server/clock.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/monitor/monitor.h"
#include "server/net/reply.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"
#include "server/ops/search_alias.h"
#include "server/ops/search_chain.h"
#include "server/ops/search_checks.h"
#include "server/ops/search_names.h"
#include "server/ops/search_op.h"
#include "server/ops/search_sync.h"

/* Steps of op_search, each called once per search, inlined into it as when they were one
 * function: GCC's LTO left these out of line (op_search is large), which cost about 40
 * instructions a lookup (bench/instructions.sh). */
#define SEARCH_STEP static inline __attribute__((always_inline))

/* Keeps the requested attribute names beyond the request's lifetime. */
SEARCH_STEP int copy_names(struct search_op *s, const struct search_request *r)
{
	if (r->nattrs == 0)
		return 0;
	struct berval names[REQUEST_MAX_ATTRS];
	size_t cap = search_names_space(r);
	char *space = malloc(cap);
	if (!space)
		return -1;
	search_names_canonical(r, names, space, cap);
	size_t total = 0;
	for (int i = 0; i < r->nattrs; i++)
		total += names[i].bv_len;
	s->names = calloc((size_t)r->nattrs, sizeof(*s->names));
	/* At least one byte: names that are all empty ("") still get a non-NULL data. */
	if (!s->names || buf_reserve(&s->name_bytes, total + 1) < 0) {
		free(space);
		return -1;
	}
	/* Reserved up front, so the pointers taken here stay valid. */
	for (int i = 0; i < r->nattrs; i++) {
		s->names[i].bv_val = (char *)s->name_bytes.data + s->name_bytes.len;
		s->names[i].bv_len = names[i].bv_len;
		buf_append(&s->name_bytes, names[i].bv_val, names[i].bv_len);
	}
	s->nnames = r->nattrs;
	free(space);
	return 0;
}

/* Size and time limits: the client's, within the server's (the rootdn has none). The
 * filter work limit is the server's (max_search_work). */
static void set_limits(struct conn *c, struct search_op *s, const struct search_request *r)
{
	int size = r->sizelimit, time = r->timelimit;
	int max_size = server_sizelimit(c->w->srv), max_time = server_timelimit(c->w->srv);
	s->max_work = c->auth != AUTH_ROOT ? server_max_search_work(c->w->srv) : 0;
	if (c->auth != AUTH_ROOT) {
		if (max_size && (size == 0 || size > max_size))
			size = max_size;
		if (max_time && (time == 0 || time > max_time))
			time = max_time;
	}
	s->sizelimit = size;
	s->deadline = time ? clock_seconds() + time : 0;
}

/*
 * The key of the search base, in ops_worker(w)->base_key (valid until the worker's next search
 * starts); NULL if it is not a valid DN. A load names the same base search after search, and
 * normalizing it costs about a tenth of a lookup, so each worker keeps the last base it normalized.
 * The schema, which the normal form follows, does not change while the server runs (a reload that
 * would change it is refused).
 */
static const struct buf *base_key(struct worker *w, const struct berval *base)
{
	if (ops_worker(w)->base_dn.len == base->bv_len && base->bv_len > 0 &&
	    memcmp(ops_worker(w)->base_dn.data, base->bv_val, base->bv_len) == 0)
		return &ops_worker(w)->base_key;
	ops_worker(w)->base_dn.len = ops_worker(w)->base_key.len =
	    0; /* forgotten until both are stored again */
	if (dn_normalize(base->bv_val, base->bv_len, NULL, &ops_worker(w)->base_key) < 0)
		return NULL;
	if (buf_append(&ops_worker(w)->base_dn, base->bv_val, base->bv_len) < 0)
		ops_worker(w)->base_dn.len = 0; /* not kept: the next search normalizes again */
	return &ops_worker(w)->base_key;
}

/* The next page of the paged search parked on c (RFC 2696 3). */
static void resume_page(struct conn *c, struct ldap_request *req, int page_size,
                        const struct berval *cookie)
{
	struct search_op *s = (struct search_op *)c->parked;
	uint64_t want;
	if (!s || cookie->bv_len != sizeof(want) ||
	    (memcpy(&want, cookie->bv_val, sizeof(want)), want != s->cookie)) {
		/* Also the cookie of a search dropped because the database was reloaded
		 * twice since it began (search_expire). */
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_UNWILLING_TO_PERFORM, NULL,
		           "paged results cookie is invalid");
		return;
	}
	/* The cookie goes on only with the request that made it; the search stays parked. */
	unsigned char digest[SEARCH_PAGE_DIGEST];
	if (search_page_digest(c, req, digest) < 0 ||
	    memcmp(digest, s->page_digest, sizeof(digest)) != 0) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_UNWILLING_TO_PERFORM, NULL,
		           "paged results cookie was made by another search request (base, scope, "
		           "filter, attributes, controls or identity differ)");
		return;
	}
	c->parked = NULL;
	c->task = &s->task;
	s->msgid = s->task.msgid = req->msgid;
	access_op_free(&s->access); /* the identity may have changed since the last page */
	access_op_init(&s->access, c);
	/* Each page has its own time limit; the size limit stays the first request's, as
	 * it counts the entries of every page. */
	int sizelimit = s->sizelimit;
	set_limits(c, s, &req->u.search);
	s->sizelimit = sizelimit;
	s->page_size = page_size;
	s->page_sent = 0;
	reply_begin(c);
	if (page_size == 0) { /* the client abandons the paged search */
		s->have_pending = false;
		search_finish(c, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	search_run(c);
}

/* The checks made before anything is read: anonymous access (allow_anonymous) and the
 * filter's size (max_filter_items; not the rootdn's). True when req is refused (answered). */
static bool search_refused(struct conn *c, const struct ldap_request *req)
{
	const struct search_request *r = &req->u.search;
	if (!access_may_read(c)) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_INSUFFICIENT_ACCESS, NULL,
		           "anonymous access is disabled (allow_anonymous)");
		return true;
	}
	size_t max_items = server_max_filter_items(c->w->srv), items;
	if (c->auth != AUTH_ROOT && max_items && (items = filter_weight(r->filter)) > max_items) {
		char why[160];
		snprintf(why, sizeof(why),
		         "the filter has %zu items, more than the %zu allowed "
		         "(max_filter_items)",
		         items, max_items);
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_ADMINLIMIT_EXCEEDED, NULL,
		           why);
		return true;
	}
	return false;
}

/*
 * Where the base (key, the worker's: base_key) sends the search: a built entry or a base
 * outside the database is answered here (NULL returned); else the search's memory is taken
 * from req's arena, *sp, and the base key copied there is returned.
 */
static const unsigned char *search_route(struct conn *c, struct ldap_request *req,
                                         const struct buf *key, struct search_op **sp)
{
	struct worker *w = c->w;
	const struct db *db = &db_worker(w)->gen->db;
	struct search_op *s = NULL;
	const unsigned char *own_key = NULL;
	if (!key)
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_INVALID_DN_SYNTAX, NULL,
		           "invalid DN");
	else if (monitor_holds(key)) {
		/* Built entries, not paged, sorted or tested (RFC 4511 4.1.11). */
		if (!ops_refuse_critical(c, req, OP_APPLY_MONITOR))
			monitor_search(c, req, key);
	} else if (search_builtin_is_subschema(key))
		search_builtin(c, req, &ops_shared(w->srv)->subschema);
	else if (!dn_key_in_subtree(key->data, key->len, db->suffix_key.data, db->suffix_key.len))
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_NO_SUCH_OBJECT, NULL, NULL);
	else if (!(s = arena_alloc(req->mem, sizeof(*s))) ||
	         !(own_key = (const unsigned char *)arena_strdup(req->mem, key->data, key->len)))
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_OTHER, NULL,
		           "out of memory");
	*sp = s;
	return own_key;
}

/* Sets up s, req's search on c from base own_key[0..keylen) (page_size: 0 when not paged),
 * and makes it c->task: from now on the search answers (search_finish). */
static void search_init(struct conn *c, struct ldap_request *req, struct search_op *s,
                        const unsigned char *own_key, size_t keylen, int page_size)
{
	struct search_request *r = &req->u.search;
	memset(s, 0, offsetof(struct search_op, access));
	s->msgid = s->task.msgid = req->msgid;
	s->task.resume = search_run;
	s->task.free = search_task_free;
	s->c = c;
	search_txn_start(&s->read, c->w, search_expire); /* the generation w serves, from now on */
	access_op_init(&s->access, c);
	s->plan.scope = r->scope;
	s->deref = r->deref;
	set_limits(c, s, r);
	s->page_size = page_size;
	arena_take(&s->mem, req->mem); /* the search and its filter live as long as it does */
	s->filter = r->filter;
	/* A leaf (a lookup's filter) gets no memo (filter.h) and skips the call: s->memo is
	 * zeroed above. Out of memory, a costly entry is evaluated in one slice, as before. */
	if (s->filter->child && filter_memo_init(&s->memo, s->filter, &s->mem) < 0)
		log_error("search: out of memory for the filter's memo");
	s->plan.base_key = own_key;
	s->plan.base_keylen = keylen;
	c->task = &s->task;
	reply_begin(c);
}

/* derefFindingBaseObj: the search starts at the alias's target (s->plan's base, found as
 * entry s->plan.base_id). Returns LDAP_SUCCESS or the result the search ends with. */
static int search_deref_base(struct search_op *s, const struct db *db, struct db_read *txn)
{
	struct entry_view be;
	int d = db_get_entry(db, txn, s->plan.base_id, &be) == 0
	            ? search_deref(db, txn, &s->plan.base_id, &be)
	            : LDAP_OTHER;
	if (d == LDAP_SUCCESS) {
		s->plan.base_key = (const unsigned char *)arena_strdup(&s->mem, be.key, be.keylen);
		s->plan.base_keylen = be.keylen;
		d = s->plan.base_key ? d : LDAP_OTHER;
	}
	return d;
}

/*
 * Finds the base in the worker's read transaction (begun by the caller) and checks it
 * (search access, the assertion control), then plans the candidates: the first slice reads
 * on in this transaction. False when the search has ended (answered, with the matchedDN of
 * a base that is missing or hidden).
 */
SEARCH_STEP bool search_find_base(struct conn *c, struct ldap_request *req, struct search_op *s)
{
	struct worker *w = c->w;
	const struct db *db = &db_worker(w)->gen->db;
	int rc = db_dn2id(db, db_worker(w)->txn, s->plan.base_key, s->plan.base_keylen,
	                  &s->plan.base_id);
	if (rc == 0 && (s->deref & LDAP_DEREF_FINDING)) {
		int d = search_deref_base(s, db, db_worker(w)->txn);
		if (d != LDAP_SUCCESS) {
			db_gen_txn_end(w);
			search_finish(c, d, NULL, NULL);
			return false;
		}
	}
	int asserted = rc == 0 ? search_base_access(&s->access, w, s->plan.base_id) : LDAP_SUCCESS;
	if (asserted == LDAP_SUCCESS && rc == 0)
		asserted = search_assertion(req, &s->access, w, s->plan.base_id);
	struct buf matched = {0};
	/* A base the client may not know of is answered as a missing one, matchedDN too. */
	if (rc == DB_NOTFOUND || asserted == LDAP_NO_SUCH_OBJECT)
		op_matched_dn(w, &s->access,
		              &(struct buf){.data = (unsigned char *)s->plan.base_key,
		                            .len = s->plan.base_keylen},
		              &matched);
	if (asserted != LDAP_SUCCESS) {
		db_gen_txn_end(w);
		search_finish(c, asserted, (const char *)matched.data,
		              asserted == LDAP_PROTOCOL_ERROR ? "malformed assertion control"
		                                              : NULL);
		buf_free(&matched);
		return false;
	}
	char why[200];
	int chained =
	    rc == 0 && search_chain_maybe(s->filter)
	        ? search_chain_resolve(s->filter, db, db_worker(w)->txn, server_inchain_max(w->srv),
	                               &s->mem, why, sizeof(why))
	        : LDAP_SUCCESS;
	if (chained != LDAP_SUCCESS) {
		db_gen_txn_end(w);
		search_finish(c, chained, NULL,
		              chained == LDAP_ADMINLIMIT_EXCEEDED
		                  ? why
		                  : "internal error reading the database");
		buf_free(&matched);
		return false;
	}
	if (rc == 0)
		search_plan_candidates(&s->plan, db, db_worker(w)->txn, s->filter);
	if (rc && rc != DB_NOTFOUND)
		db_gen_txn_failed(w);
	if (rc)
		db_gen_txn_end(w);
	else /* the first slice reads on in this transaction: one snapshot from the base on */
		search_txn_planned(&s->read, w);
	if (rc) {
		search_finish(c, rc == DB_NOTFOUND ? LDAP_NO_SUCH_OBJECT : LDAP_OTHER,
		              rc == DB_NOTFOUND ? (const char *)matched.data : NULL, NULL);
		buf_free(&matched);
		return false;
	}
	return true;
}

/* The VLV control (search_vlv.h), when req has one: s->vlv set. False when the search has
 * ended: malformed, without the sort control (virtualListViewError, the response control
 * saying sortControlMissing, as sssvlv) or with paged results (unwillingToPerform, as
 * sssvlv: the two are different ways through one sorted list). */
static bool search_vlv_request(struct conn *c, struct ldap_request *req, struct search_op *s,
                               bool sorted, bool paged)
{
	const struct request_control *vlv = request_control(req, CONTROL_VLV_REQUEST);
	if (!vlv)
		return true;
	if (!vlv->has_value || control_vlv_decode(&vlv->value, &s->vlv_req) < 0) {
		search_finish(c, LDAP_PROTOCOL_ERROR, NULL, "malformed VLV control");
		return false;
	}
	s->vlv = true;
	if (!sorted) {
		s->vlv_at.result = VLV_SORT_CONTROL_MISSING;
		search_finish(c, LDAP_VLV_ERROR, NULL, "VLV requires the sort control");
		return false;
	}
	if (paged) {
		s->vlv = false;
		search_finish(c, LDAP_UNWILLING_TO_PERFORM, NULL,
		              "VLV cannot be used with paged results");
		return false;
	}
	return true;
}

/* What the search returns: the attributes asked for, the Matched Values control, and the
 * sort control (paged: the request had the paged results control). False when the search
 * has ended (answered). */
SEARCH_STEP bool search_output(struct conn *c, struct ldap_request *req, struct search_op *s,
                               bool paged)
{
	attr_select_init(&s->sel, s->names, s->nnames, req->u.search.typesonly);
	s->sel.sync = s->sync != NULL;
	if (search_matched_values(req, &s->mem, &c->w->scratch, &s->values) < 0) {
		search_finish(c, LDAP_PROTOCOL_ERROR, NULL, "malformed matched values control");
		return false;
	}
	s->sel.values = s->values;
	s->want_oper = computed_attrs_requested(&s->sel);
	s->filter_oper = computed_attrs_in_filter(s->filter);
	const struct request_control *sort = request_control(req, CONTROL_SORT_REQUEST);
	/* A lookup carries no control: not even the VLV control's lookup on its path. */
	if (req->ncontrols && !search_vlv_request(c, req, s, sort != NULL, paged))
		return false;
	if (paged && s->page_size == 0) { /* size 0 and no cookie: nothing to return */
		search_finish(c, LDAP_SUCCESS, NULL, NULL);
		return false;
	}
	if (!sort)
		return true;
	struct sort_key keys[CONTROL_MAX_SORT_KEYS];
	int n = 0;
	if (!sort->has_value || control_sort_decode(&sort->value, keys, &n) < 0) {
		search_finish(c, LDAP_PROTOCOL_ERROR, NULL, "malformed sort control");
		return false;
	}
	s->sort_result = sort_spec_init(&s->sort, keys, n);
	s->sorting = s->sort_result == LDAP_SUCCESS;
	if (!s->sorting) {
		/* As slapd: the search fails with the sortResult code, critical or not
		 * (RFC 2891 would send the entries unsorted when not critical). */
		search_finish(c, s->sort_result, NULL, "cannot sort on the requested key");
		return false;
	}
	return true;
}

void op_search(struct conn *c, struct ldap_request *req)
{
	struct search_request *r = &req->u.search;
	struct worker *w = c->w;
	if (search_refused(c, req))
		return;
	if (r->base.bv_len == 0 && r->scope == LDAP_SCOPE_BASE) {
		search_builtin(c, req, &ops_shared(w->srv)->rootdse);
		return;
	}
	/* Paged results: a cookie continues the search parked on this connection. */
	const struct request_control *paged = request_control(req, CONTROL_PAGED_RESULTS);
	int page_size = 0;
	struct berval cookie = {0, NULL};
	if (paged &&
	    (!paged->has_value || control_paged_decode(&paged->value, &page_size, &cookie) < 0)) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_PROTOCOL_ERROR, NULL,
		           "malformed paged results control");
		return;
	}
	if (paged && cookie.bv_len) {
		resume_page(c, req, page_size, &cookie);
		return;
	}
	conn_task_drop(&c->parked); /* a new search replaces an unfinished paged one */
	/* The worker's (the last base normalized): copied into the search's arena. */
	const struct buf *key = base_key(w, &r->base);
	struct search_op *s;
	const unsigned char *own_key = search_route(c, req, key, &s);
	if (!own_key)
		return;
	search_init(c, req, s, own_key, key->len, paged ? page_size : 0);
	if (req->ncontrols && !search_sync_begin(c, req, s))
		return;
	if (copy_names(s, r) < 0 || (paged && search_page_digest(c, req, s->page_digest) < 0) ||
	    db_gen_txn_begin(w) != 0) {
		search_finish(c, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	if (search_find_base(c, req, s) && search_output(c, req, s, paged))
		search_run(c);
}
