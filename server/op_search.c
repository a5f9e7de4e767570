/*
 * Search: picks a candidate set, evaluates the filter on each candidate in one
 * read transaction, and streams SearchResultEntry PDUs through the send
 * policy. The search is a resumable cursor (struct search_op): it stops when
 * the socket is full and continues on EPOLLOUT, and it yields after
 * SEARCH_SLICE candidates so other connections of the worker are served.
 */
#include <errno.h>
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/dn.h"
#include "protocol/schema.h"
#include "protocol/response.h"
#include "server/log.h"
#include "server/ops.h"
#include "storage/candidates.h"

/* Candidates examined before a search lets the worker's other connections run. */
#define SEARCH_SLICE 512

struct search_op {
	int32_t msgid;
	int scope;
	entry_id base_id;
	struct buf base_key;
	struct filter *filter;
	struct candidates cand;
	bool check_scope; /* candidates come from an index: scope is checked per entry */
	int sizelimit;    /* 0: none */
	int sent;
	struct attr_select sel;
	bool want_oper;       /* operational attributes are asked for */
	struct berval *names; /* copies of the requested attribute names */
	int nnames;
	struct buf name_bytes;
};

static void search_free(struct search_op *s)
{
	cand_free(&s->cand);
	filter_free(s->filter);
	buf_free(&s->base_key);
	buf_free(&s->name_bytes);
	free(s->names);
	free(s);
}

/* Keeps the requested attribute names beyond the request's lifetime. */
static int copy_names(struct search_op *s, const struct search_request *r)
{
	size_t total = 0;
	for (int i = 0; i < r->nattrs; i++)
		total += r->attrs[i].bv_len;
	if (r->nattrs == 0)
		return 0;
	s->names = calloc((size_t)r->nattrs, sizeof(*s->names));
	if (!s->names || buf_reserve(&s->name_bytes, total + 1) < 0)
		return -1;
	(void)total;
	/* Offsets first: name_bytes may move while it grows. */
	size_t *off = calloc((size_t)r->nattrs, sizeof(*off));
	if (!off)
		return -1;
	for (int i = 0; i < r->nattrs; i++) {
		/* Aliases and OIDs become the schema's name, as stored entries spell it. */
		const struct schema_attr *at =
		    schema_attr_find(r->attrs[i].bv_val, r->attrs[i].bv_len);
		const char *name = at && !memchr(r->attrs[i].bv_val, ';', r->attrs[i].bv_len)
		                       ? at->name
		                       : r->attrs[i].bv_val;
		size_t len = name == r->attrs[i].bv_val ? r->attrs[i].bv_len : strlen(name);
		off[i] = s->name_bytes.len;
		s->names[i].bv_len = len;
		if (buf_append(&s->name_bytes, name, len) < 0) {
			free(off);
			return -1;
		}
	}
	for (int i = 0; i < r->nattrs; i++)
		s->names[i].bv_val = (char *)s->name_bytes.data + off[i];
	free(off);
	s->nnames = r->nattrs;
	return 0;
}

/* An indexed equality assertion of f, or of one operand of a top-level AND. */
static const struct filter *indexed_equality(const struct db *db, const struct filter *f,
                                             const struct db_index **ix)
{
	if (f->kind == FILTER_EQ && !f->invalid && (*ix = db_index_find(db, f->attr, f->attr_len)))
		return f;
	if (f->kind == FILTER_AND)
		for (const struct filter *c = f->child; c; c = c->next)
			if (c->kind == FILTER_EQ && !c->invalid &&
			    (*ix = db_index_find(db, c->attr, c->attr_len)))
				return c;
	return NULL;
}

/* Chooses the candidate set: the scope's own, or an equality index when smaller. */
static int choose_candidates(struct search_op *s, struct worker *w)
{
	const struct db *db = &w->srv->db;
	int rc = 0;
	if (s->scope == LDAP_SCOPE_BASE) {
		cand_init_one(&s->cand, s->base_id);
		return 0;
	}
	if (s->scope == LDAP_SCOPE_ONELEVEL)
		rc = cand_init_children(&s->cand, db, s->base_id);
	else
		rc = cand_init_subtree(&s->cand, db, s->base_key.data, s->base_key.len);
	if (rc < 0)
		return -1;
	const struct db_index *ix;
	const struct filter *eq = indexed_equality(db, s->filter, &ix);
	if (!eq)
		return 0;
	struct candidates idx;
	if (cand_init_index(&idx, ix, eq->value.val, eq->value.len) < 0)
		return -1;
	size_t n_idx = cand_count(&idx, w->txn), n_scope = cand_count(&s->cand, w->txn);
	if (n_idx < n_scope) {
		cand_free(&s->cand);
		s->cand = idx;
		s->check_scope = true;
	} else {
		cand_free(&idx);
	}
	return 0;
}

static bool in_scope(const struct search_op *s, entry_id id, const struct entry_view *e)
{
	if (!s->check_scope)
		return true;
	if (s->scope == LDAP_SCOPE_ONELEVEL)
		return e->parent == s->base_id && id != s->base_id;
	return dn_key_in_subtree(e->key, e->keylen, s->base_key.data, s->base_key.len);
}

static void search_finish(struct conn *c, int rc, const char *matched, const char *message)
{
	struct search_op *s = c->search;
	int32_t msgid = s->msgid;
	c->search = NULL;
	search_free(s);
	if (response_result(&c->out, msgid, LDAP_RES_SEARCH_RESULT, rc, matched, message, NULL) <
	    0) {
		c->closing = true;
		return;
	}
	conn_pdu_queued(c, true);
}

/* Sends matching entries until done, the socket is full or the slice is used. */
static void search_run(struct conn *c)
{
	struct search_op *s = c->search;
	struct worker *w = c->w;
	const struct db *db = &w->srv->db;
	int rc = mdb_txn_renew(w->txn);
	if (rc == 0)
		rc = cand_begin(&s->cand, w->txn);
	int result = LDAP_SUCCESS;
	const char *message = NULL;
	for (int n = 0; rc == 0; n++) {
		if (c->blocked || c->closing)
			break; /* continues on EPOLLOUT */
		if (n == SEARCH_SLICE) {
			conn_make_ready(c);
			break;
		}
		entry_id id;
		rc = cand_next(&s->cand, &id);
		if (rc)
			break;
		struct entry_view e;
		rc = db_get_entry(db, w->txn, id, &e);
		if (rc == MDB_NOTFOUND) { /* an index naming a missing entry: skip it */
			rc = 0;
			continue;
		}
		if (rc || !in_scope(s, id, &e))
			continue;
		bool self = c->auth == AUTH_USER && c->bound_key.len == e.keylen &&
		            memcmp(c->bound_key.data, e.key, e.keylen) == 0;
		const char *hidden = c->auth == AUTH_ROOT || self ? NULL : "userPassword";
		struct filter_ctx fctx = {
		    .dn = e.dn, .dnlen = e.dnlen, .hidden = hidden, .scratch = &w->scratch};
		if (filter_eval_ctx(s->filter, e.attrs, e.attrslen, &fctx) != FILTER_TRUE)
			continue;
		if (s->sizelimit && s->sent == s->sizelimit) {
			result = LDAP_SIZELIMIT_EXCEEDED;
			rc = MDB_NOTFOUND;
			break;
		}
		s->sel.hidden = hidden;
		w->extra.off = w->extra.len = 0;
		if (s->want_oper && op_attrs_build(&w->extra, &s->sel, db, w->txn, id, &e) < 0) {
			rc = ENOMEM;
			break;
		}
		if (response_entry_extra(&c->out, s->msgid, e.op, e.oplen, &s->sel, w->extra.data,
		                         w->extra.len) < 0) {
			rc = ENOMEM;
			break;
		}
		s->sent++;
		STAT_ADD(w->stats.entries_sent, 1);
		conn_pdu_queued(c, false);
	}
	cand_end(&s->cand);
	mdb_txn_reset(w->txn);
	if (rc == MDB_NOTFOUND) {
		search_finish(c, result, NULL, message);
	} else if (rc != 0) {
		log_error("search: %s", rc == ENOMEM ? "out of memory" : mdb_strerror(rc));
		search_finish(c, LDAP_OTHER, NULL, "internal error reading the database");
	}
}

/* The DN of the deepest existing entry above a missing base, for matchedDN. */
static void matched_dn(struct worker *w, const struct buf *key, struct buf *out)
{
	const struct db *db = &w->srv->db;
	size_t len = dn_key_parent_len(key->data, key->len);
	while (len >= db->suffix_key.len && len > 0) {
		entry_id id;
		struct entry_view e;
		if (db_dn2id(db, w->txn, key->data, len, &id) == 0 &&
		    db_get_entry(db, w->txn, id, &e) == 0) {
			buf_append(out, e.dn, e.dnlen);
			break;
		}
		len = dn_key_parent_len(key->data, len);
	}
	buf_append(out, "", 1);
}

static void search_rootdse(struct conn *c, struct ldap_request *req)
{
	struct search_request *r = &req->u.search;
	struct server *srv = c->w->srv;
	struct entry_view e;
	conn_response_begin(c);
	if (entry_parse(srv->rootdse.data, srv->rootdse.len, &e) == 0 &&
	    filter_eval(r->filter, e.attrs, e.attrslen, &c->w->scratch) == FILTER_TRUE) {
		struct attr_select sel;
		attr_select_init(&sel, r->attrs, r->nattrs, r->typesonly);
		if (response_entry(&c->out, req->msgid, e.op, e.oplen, &sel) == 0) {
			conn_pdu_queued(c, false);
		}
	}
	if (response_result(&c->out, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_SUCCESS, NULL, NULL,
	                    NULL) == 0) {
		conn_pdu_queued(c, true);
	}
}

void op_search(struct conn *c, struct ldap_request *req)
{
	struct search_request *r = &req->u.search;
	struct worker *w = c->w;
	const struct db *db = &w->srv->db;
	if (r->base.bv_len == 0 && r->scope == LDAP_SCOPE_BASE) {
		search_rootdse(c, req);
		return;
	}
	struct buf key = {0};
	int result = LDAP_SUCCESS;
	if (dn_normalize(r->base.bv_val, r->base.bv_len, NULL, &key) < 0)
		result = LDAP_INVALID_DN_SYNTAX;
	else if (op_monitor_holds(&key))
		result = -1;
	else if (!dn_key_in_subtree(key.data, key.len, db->suffix_key.data, db->suffix_key.len))
		result = LDAP_NO_SUCH_OBJECT;
	struct search_op *s = result == LDAP_SUCCESS ? calloc(1, sizeof(*s)) : NULL;
	if (result == LDAP_SUCCESS && !s)
		result = LDAP_OTHER;
	if (result != LDAP_SUCCESS) {
		if (result < 0)
			op_monitor_search(c, req, &key);
		else
			conn_send_result(c, req->msgid, LDAP_RES_SEARCH_RESULT, result, NULL,
			                 result == LDAP_INVALID_DN_SYNTAX ? "invalid DN" : NULL);
		buf_free(&key);
		return;
	}
	s->msgid = req->msgid;
	s->scope = r->scope;
	s->sizelimit = r->sizelimit;
	s->filter = r->filter;
	r->filter = NULL; /* the search owns it now */
	s->base_key = key;
	c->search = s;
	conn_response_begin(c);
	if (copy_names(s, r) < 0 || mdb_txn_renew(w->txn) != 0) {
		search_finish(c, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	int rc = db_dn2id(db, w->txn, s->base_key.data, s->base_key.len, &s->base_id);
	if (rc == 0 && choose_candidates(s, w) < 0)
		rc = ENOMEM;
	struct buf matched = {0};
	if (rc == MDB_NOTFOUND)
		matched_dn(w, &s->base_key, &matched);
	mdb_txn_reset(w->txn);
	if (rc) {
		search_finish(c, rc == MDB_NOTFOUND ? LDAP_NO_SUCH_OBJECT : LDAP_OTHER,
		              rc == MDB_NOTFOUND ? (const char *)matched.data : NULL, NULL);
		buf_free(&matched);
		return;
	}
	attr_select_init(&s->sel, s->names, s->nnames, r->typesonly);
	s->want_oper = op_attrs_requested(&s->sel);
	search_run(c);
}

void op_search_continue(struct conn *c)
{
	if (c->search)
		search_run(c);
}

void op_search_abandon(struct conn *c)
{
	if (c->search) {
		search_free(c->search);
		c->search = NULL;
	}
}
