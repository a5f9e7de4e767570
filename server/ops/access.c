/* Deciding access: which entries and attributes a client may see or compare (access.h). */
#include "server/ops/access.h"

#include "server/ops/access_rules.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/filter.h"
#include "protocol/schema.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"
#include "storage/db_fault.h"

bool access_may_read(const struct conn *c)
{
	return c->auth != AUTH_ANONYMOUS || server_allow_anonymous(c->w->srv);
}

/* --- deciding ------------------------------------------------------------------------- */

/* visible_children's walk: what each child is counted against, and the count. */
struct visible_walk {
	struct access_op *op;
	const struct db *db;
	struct db_read *txn;
	bool first_only;
	size_t n;
};

/* db_foreach_child's fn: counts child if the client may read it; stops at the first
 * with first_only. An entry that cannot be read is not counted. */
static int visible_child(entry_id child, void *arg)
{
	struct visible_walk *vw = arg;
	struct entry_view e;
	struct access_entry ae;
	if (db_get_entry(vw->db, vw->txn, child, &e) != 0)
		return 0;
	access_entry_init(&ae, vw->op, child, &e);
	return ae.entry >= ACCESS_READ && (++vw->n, vw->first_only);
}

/*
 * access_op's visible_children: every child, counted by LMDB, when the client may read
 * every entry; else each child is looked at, so the count costs a one-level search.
 */
static size_t visible_children(struct access_op *op, const struct db *db, struct db_read *txn,
                               entry_id id, bool first_only)
{
	if (access_entry_granted(op, ACCESS_READ))
		return computed_attrs_all_children(db, txn, id);
	struct visible_walk vw = {.op = op, .db = db, .txn = txn, .first_only = first_only};
	db_foreach_child(db, txn, id, visible_child, &vw);
	return vw.n;
}

/*
 * At an operation's start on w: takes the set published since w last looked, if one was.
 * The operations of w still running under the old set borrowed w's reference to it; they
 * become owners (one reference each, added at once), and w lets go of its own.
 */
static void take_current_rules(struct worker *w)
{
	struct server *srv = w->srv;
	struct ops_worker *ow = ops_worker(w);
	struct ops_shared *shared = ops_shared(srv);
	if (__atomic_load_n(&shared->access, __ATOMIC_ACQUIRE) == ow->rules)
		return;
	pthread_mutex_lock(&shared->lock); /* access_publish releases the set it replaces */
	struct access_rules *now = shared->access;
	__atomic_add_fetch(&now->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&shared->lock);
	struct access_rules *old = ow->rules;
	if (old) {
		__atomic_add_fetch(&old->refs, ow->rules_borrowed, __ATOMIC_RELAXED);
		access_rules_release(old);
	}
	ow->rules = now;
	ow->rules_borrowed = 0;
}

void access_op_init(struct access_op *op, struct conn *c)
{
	take_current_rules(c->w);
	op->visible_children = visible_children;
	op->rules = ops_worker(c->w)->rules;
	ops_worker(c->w)->rules_borrowed++;
	op->w = c->w;
	op->c = c;
	op->bypass = c->auth == AUTH_ROOT;
	op->groups_known = op->groups_member = 0;
	op->extra = (struct buf){0};
	op->db = &db_worker(c->w)->gen->db;
	op->txn = db_worker(c->w)->txn;
	op->cached = false; /* op->cache is filled by the first entry that may use it */
}

bool access_entry_granted(const struct access_op *op, enum access_level need)
{
	return op->bypass || op->rules->entry_floor >= need;
}

void access_op_free(struct access_op *op)
{
	buf_free(&op->extra);
	if (!op->rules)
		return;
	struct ops_worker *ow = ops_worker(op->w);
	if (op->rules == ow->rules)
		ow->rules_borrowed--;
	else
		access_rules_release(op->rules); /* its own: the worker has moved on */
	op->rules = NULL;
}

/* Whether key[0..len) is in scope of base (a rule's dn= or a who's). */
static bool in_scope(enum access_scope scope, const struct buf *base, const unsigned char *key,
                     size_t len)
{
	switch (scope) {
	case ACCESS_SCOPE_ANY:
		return true;
	case ACCESS_SCOPE_BASE:
		return len == base->len && memcmp(key, base->data, len) == 0;
	case ACCESS_SCOPE_ONE:
		return dn_key_parent_len(key, len) == base->len &&
		       memcmp(key, base->data, base->len) == 0;
	case ACCESS_SCOPE_SUBTREE:
		return dn_key_in_subtree(key, len, base->data, base->len);
	case ACCESS_SCOPE_CHILDREN:
		return len > base->len && dn_key_in_subtree(key, len, base->data, base->len);
	}
	return false;
}

/* Whether the bound identity is a member of w's group (looked up once per operation). */
static bool in_group(struct access_op *op, const struct who *w)
{
	uint64_t bit = 1ULL << w->group_slot;
	if (op->groups_known & bit)
		return op->groups_member & bit;
	struct worker *wk = op->c->w;
	entry_id gid;
	struct entry_view g;
	bool member = false;
	if (db_dn2id(op->db, op->txn, w->key.data, w->key.len, &gid) == 0 &&
	    db_get_entry(op->db, op->txn, gid, &g) == 0) {
		const char *cls = w->src->group_class, *attr = w->src->group_attr;
		struct berval oc = {11, "objectClass"}, clsv = {strlen(cls), (char *)cls};
		struct berval at = {strlen(attr), (char *)attr};
		struct berval me = {op->c->bound_dn.len, (char *)op->c->bound_dn.data};
		unsigned char space[1024];
		struct arena mem;
		arena_init(&mem, space, sizeof(space));
		struct filter *is_group = filter_make(FILTER_EQ, &oc, &clsv, &mem, &wk->scratch);
		struct filter *has_me = filter_make(FILTER_EQ, &at, &me, &mem, &wk->scratch);
		member = is_group && has_me &&
		         filter_eval(is_group, g.attrs, g.attrslen, &wk->scratch) == FILTER_TRUE &&
		         filter_eval(has_me, g.attrs, g.attrslen, &wk->scratch) == FILTER_TRUE;
		arena_free(&mem);
	}
	op->groups_known |= bit;
	if (member)
		op->groups_member |= bit;
	return member;
}

/* Whether e is the bound client's own entry (what "by self" asks). */
static bool is_self(const struct access_op *op, const struct entry_view *e)
{
	const struct conn *c = op->c;
	return c->auth == AUTH_USER && c->bound_key.len == e->keylen &&
	       memcmp(c->bound_key.data, e->key, e->keylen) == 0;
}

static bool who_holds(struct access_op *op, const struct who *w, const struct entry_view *e)
{
	const struct conn *c = op->c;
	bool user = c->auth == AUTH_USER;
	switch (w->src->kind) {
	case ACCESS_WHO_ANY:
		return true;
	case ACCESS_WHO_ANONYMOUS:
		return c->auth == AUTH_ANONYMOUS;
	case ACCESS_WHO_USERS:
		return c->auth != AUTH_ANONYMOUS;
	case ACCESS_WHO_SELF:
		return is_self(op, e);
	case ACCESS_WHO_DN:
		return user &&
		       in_scope(w->src->scope, &w->key, c->bound_key.data, c->bound_key.len);
	case ACCESS_WHO_GROUP:
		return user && in_group(op, w);
	case ACCESS_WHO_PEER_IP: /* the client's address: after a PROXY header, the one it carries
	                          */
		return ip_net_holds(&w->src->net, &c->peer_ip);
	case ACCESS_WHO_PEER_PATH:
		return c->local && strcmp(c->listen->path, w->src->path) == 0;
	}
	return false;
}

/* Whether rule r's WHAT (dn=, filter=) holds for entry id. */
static bool what_holds(struct access_op *op, const struct rule *r, entry_id id,
                       const struct entry_view *e, bool *extra_built)
{
	if (!in_scope(r->scope, &r->key, e->key, e->keylen))
		return false;
	if (!r->filter)
		return true;
	struct worker *w = op->c->w;
	struct filter_ctx ctx = {.dn = e->dn, .dnlen = e->dnlen, .scratch = &w->scratch};
	if (r->filter_computed) {
		if (!*extra_built) {
			op->extra.off = op->extra.len = 0;
			computed_attrs_all(&op->extra, op->db, op->txn, id, e, NULL);
			*extra_built = true;
		}
		ctx.extra = op->extra.data;
		ctx.extra_len = op->extra.len;
	}
	return filter_eval_ctx(r->filter, e->attrs, e->attrslen, &ctx) == FILTER_TRUE;
}

/* Whether rule r names the attribute type[0..len) (options ignored). */
static bool covers(const struct rule *r, const char *type, size_t len)
{
	if (r->all_attrs)
		return true;
	for (size_t i = 0; i < r->nnames; i++) {
		size_t n = r->name_lens[i]; /* the name, then the end or options */
		if ((len == n || (len > n && type[n] == ';')) &&
		    strncasecmp(r->names[i], type, n) == 0)
			return true;
	}
	return false;
}

/* access_attr_level for a type some rule may name: the first of ae's rules that covers it. */
static enum access_level named_level(const struct access_entry *ae, const char *type, size_t len)
{
	const struct rule *rules = ae->op->rules->rule;
	const struct access_entry *d = ae->d;
	for (int k = 0; k < d->n; k++)
		if (covers(&rules[d->rule[k]], type, len))
			return (enum access_level)d->level[k];
	return ACCESS_NONE;
}

enum access_level access_attr_level(const struct access_entry *ae, const char *type, size_t len)
{
	if (ae->op->bypass)
		return ACCESS_READ;
	if (!may_be_named(ae->op->rules->name_lens, type, len))
		return ae->unnamed; /* what the first rule for all attributes gives */
	return named_level(ae, type, len);
}

static bool gate_allows(const struct attr_gate *g, const char *type, size_t len)
{
	const struct access_gate *ag = (const struct access_gate *)g;
	return access_attr_level(ag->ae, type, len) >= ag->need;
}

/* Whether every attribute gets at least need: the first rule for all attributes grants
 * it and no rule before it that names attributes grants less. */
static bool all_at_least(const struct access_entry *ae, enum access_level need)
{
	const struct rule *rules = ae->op->rules->rule;
	for (int k = 0; k < ae->n; k++) {
		const struct rule *r = &rules[ae->rule[k]];
		if (r->all_attrs)
			return ae->level[k] >= need;
		if (r->nnames && ae->level[k] < need)
			return false;
	}
	return false;
}

/* The gates of d (the decision an access_entry reads through), with attr_gate's shortcut:
 * a type no rule may name gets what the first rule for all attributes gives. */
static void init_gates(struct access_entry *d)
{
	const struct access_rules *rules = d->op->rules;
	static const enum access_level need[] = {ACCESS_SEARCH, ACCESS_READ, ACCESS_COMPARE};
	struct access_gate *g[] = {&d->search, &d->read, &d->compare};
	for (int i = 0; i < 3; i++)
		*g[i] = (struct access_gate){{.allows = gate_allows,
		                              .has_shortcut = true,
		                              .others = d->op->bypass || d->unnamed >= need[i],
		                              .named_lens = d->op->bypass ? 0 : rules->name_lens},
		                             d,
		                             need[i]};
}

/* Decides every rule for entry id (viewed as e) into ae, which becomes its own decision. */
static void decide(struct access_entry *ae, struct access_op *op, entry_id id,
                   const struct entry_view *e)
{
	ae->d = ae;
	ae->n = 0;
	if (op->bypass) {
		ae->entry = ae->unnamed = ACCESS_READ;
		ae->search_all = ae->read_all = true; /* no gate is asked for */
		return;
	}
	const struct access_rules *rules = op->rules;
	bool extra_built = false;
	ae->entry = ae->unnamed = ACCESS_NONE;
	bool entry_decided = false, unnamed_decided = false;
	for (int i = 0; i < rules->n; i++) {
		const struct rule *r = &rules->rule[i];
		if (!what_holds(op, r, id, e, &extra_built))
			continue;
		enum access_level level = ACCESS_NONE;
		for (int j = 0; j < r->nwho; j++)
			if (who_holds(op, &r->who[j], e)) {
				level = r->who[j].src->level;
				break;
			}
		ae->rule[ae->n] = (uint8_t)i;
		ae->level[ae->n++] = (uint8_t)level;
		if (!entry_decided && (r->all_attrs || r->entry)) {
			ae->entry = level;
			entry_decided = true;
		}
		if (!unnamed_decided && r->all_attrs) {
			ae->unnamed = level;
			unnamed_decided = true;
		}
	}
	ae->search_all = all_at_least(ae, ACCESS_SEARCH);
	ae->read_all = all_at_least(ae, ACCESS_READ);
	if (!ae->search_all || !ae->read_all) /* else every access_*_gate is NULL */
		init_gates(ae);
}

/*
 * What an anonymous client may do when the rules cannot tell entries apart (entry_free):
 * the same for every operation under one set of rules, unless a rule asks where the client
 * is (by_peer: then each operation decides for itself). A worker decides it once per set
 * and keeps it in the set (its slot of rules->anonymous), so that an operation still
 * running under an older set reads that set's decision. Its op is its own, holding what
 * the gates read of one (rules, bypass), so that it outlives the operation that made it.
 */
struct access_anonymous {
	struct access_op op;
	struct access_entry d;
};

/* The worker's anonymous decision under op's rules, made now from op's first entry if not
 * yet; NULL when out of memory (the operation decides for itself then). */
static const struct access_entry *anonymous(struct access_op *op, entry_id id,
                                            const struct entry_view *e)
{
	int slot = op->w->id;
	if (slot < 0 || slot >= op->rules->nworkers)
		return NULL; /* not a worker the set was made for: decided by the operation */
	struct access_anonymous **kept = &op->rules->anonymous[slot];
	if (*kept)
		return &(*kept)->d;
	struct access_anonymous *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->op = (struct access_op){.rules = op->rules, .visible_children = visible_children};
	a->d.op = &a->op;         /* what the gates read */
	decide(&a->d, op, id, e); /* op: the client's, anonymous */
	a->d.e = NULL;            /* e is borrowed for this entry only */
	*kept = a;
	return &a->d;
}

void access_worker_free(struct worker *w)
{
	access_rules_release(ops_worker(w)->rules);
	ops_worker(w)->rules = NULL;
}

void access_entry_init(struct access_entry *ae, struct access_op *op, entry_id id,
                       const struct entry_view *e)
{
	ae->op = op;
	ae->e = e;
	if (!op->rules->entry_free || is_self(op, e)) {
		decide(ae, op, id, e);
		return;
	}
	const struct access_entry *d = NULL;
	if (op->c->auth == AUTH_ANONYMOUS && !op->rules->by_peer)
		d = anonymous(op, id, e);
	if (!d) {
		d = &op->cache;
		if (!op->cached) {
			op->cache.op = op;
			decide(&op->cache, op, id, e);
			op->cache.e = NULL; /* e is borrowed for this entry only */
			op->cached = true;
		}
	}
	ae->d = d; /* n, rule and level are read through d */
	ae->entry = d->entry;
	ae->unnamed = d->unnamed;
	ae->search_all = d->search_all;
	ae->read_all = d->read_all;
}

const struct attr_gate *access_search_gate(const struct access_entry *ae)
{
	return ae->search_all ? NULL : &ae->d->search.gate;
}

const struct attr_gate *access_read_gate(const struct access_entry *ae)
{
	return ae->read_all ? NULL : &ae->d->read.gate;
}

const struct attr_gate *access_compare_gate(const struct access_entry *ae)
{
	return ae->search_all ? NULL : &ae->d->compare.gate; /* search implies compare */
}
