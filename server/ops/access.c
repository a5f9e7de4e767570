#include "server/ops/access.h"

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

/* Group clauses have one bit each in struct access_op's membership cache. */
#define ACCESS_MAX_GROUPS 64

struct who {
	const struct access_who *src; /* kind, level, group class and attribute */
	struct buf key;               /* of the DN (who dn=, group=) */
	int group_slot;
};

struct rule {
	enum access_scope scope;
	struct buf key;          /* of the rule's dn= */
	struct arena filter_mem; /* where filter lives */
	struct filter *filter;
	bool filter_computed; /* the filter tests computed attributes (memberOf...) */
	bool all_attrs;       /* no attrs=: every attribute and the entry */
	bool entry;           /* attrs= names "entry" */
	const char **names;   /* attribute names attrs= covers (subtypes included) */
	size_t *name_lens;    /* their lengths: most types are told apart by length alone */
	size_t nnames;
	struct who *who;
	int nwho;
};

struct access_rules {
	struct rule *rule;
	int n;
	/* The level on "entry" the rules give everyone on every entry (the first rule that
	 * covers "entry" is for all DNs, with no filter, and starts "by *"), else none. */
	enum access_level entry_floor;
	/* Bit n set: some rule names an attribute of n bytes (bit 63: of 63 or more). A type
	 * whose length (before any options) has no bit is named by no rule. */
	uint64_t name_lens;
	/* No rule has a dn= scope or a filter: entries differ only by being the client's own
	 * (by self), so access_op caches the decision for the others. */
	bool entry_free;
};

bool access_may_read(const struct conn *c)
{
	return c->auth != AUTH_ANONYMOUS || server_allow_anonymous(c->w->srv);
}

/* --- compiling ----------------------------------------------------------------------- */

static int add_name(struct rule *r, const char *name)
{
	for (size_t i = 0; i < r->nnames; i++)
		if (strcasecmp(r->names[i], name) == 0)
			return 0;
	const char **names = realloc(r->names, (r->nnames + 1) * sizeof(*names));
	if (!names)
		return -1;
	r->names = names;
	size_t *lens = realloc(r->name_lens, (r->nnames + 1) * sizeof(*lens));
	if (!lens)
		return -1;
	r->name_lens = lens;
	r->name_lens[r->nnames] = strlen(name);
	r->names[r->nnames++] = name;
	return 0;
}

static uint64_t length_bit(size_t len)
{
	return (uint64_t)1 << (len < 63 ? len : 63);
}

/* Whether some rule may name type[0..len) (options allowed), by the lengths rules name. */
static bool may_be_named(uint64_t name_lens, const char *type, size_t len)
{
	if (name_lens & length_bit(63))
		return true;
	for (uint64_t bits = name_lens; bits; bits &= bits - 1) {
		size_t n = (size_t)__builtin_ctzll(bits);
		if (n == len || (n < len && type[n] == ';'))
			return true;
	}
	return false;
}

/* The type and its subtypes; without a schema, the name as written. */
static int add_type(struct rule *r, const char *name, const struct schema_attr *at)
{
	if (!at)
		return add_name(r, name);
	for (size_t i = 0; i < schema_attr_count(); i++) {
		const struct schema_attr *x = schema_attr_at(i);
		if (schema_attr_is_a(x, at) && add_name(r, x->name) < 0)
			return -1;
	}
	return 0;
}

/* Every MUST and MAY type of oc itself. */
static int add_class_types(struct rule *r, const struct schema_oc *oc)
{
	for (int list = 0; list < 2; list++)
		for (char **n = list ? oc->may : oc->must; n && *n; n++) {
			const struct schema_attr *at = schema_attr_find(*n, strlen(*n));
			if (at && add_type(r, at->name, at) < 0)
				return -1;
		}
	return 0;
}

/* Every MUST and MAY type of oc and of its superclasses. */
static int add_class(struct rule *r, const struct schema_oc *oc)
{
	if (add_class_types(r, oc) < 0)
		return -1;
	for (const struct schema_oc *const *sup = oc->superclasses; *sup; sup++)
		if (add_class_types(r, *sup) < 0)
			return -1;
	return 0;
}

/* attrs=: names, "entry", "children", "@class" (or a class name that is no attribute). */
static const char *compile_attrs(struct rule *r, const struct access_rule *src)
{
	r->all_attrs = !src->attrs;
	for (char **a = src->attrs; a && *a; a++) {
		const char *name = **a == '@' ? *a + 1 : *a;
		const struct schema_attr *at =
		    **a == '@' ? NULL : schema_attr_find(name, strlen(name));
		const struct schema_oc *oc = at ? NULL : schema_oc_find(name, strlen(name));
		int rc = 0;
		if (strcasecmp(*a, "entry") == 0)
			r->entry = true;
		else if (strcasecmp(*a, "children") == 0)
			; /* adding and deleting entries: never asked of a read-only server */
		else if (oc)
			rc = add_class(r, oc);
		else if (at || (!schema_loaded() && **a != '@'))
			rc = add_type(r, name, at);
		else
			return **a == '@' ? "attrs=: unknown object class"
			                  : "attrs=: unknown attribute";
		if (rc < 0)
			return "out of memory";
	}
	return NULL;
}

static const char *compile_dn(struct buf *key, const char *dn)
{
	return dn && dn_normalize(dn, strlen(dn), NULL, key) < 0 ? "a DN the schema rejects" : NULL;
}

static const char *compile_rule(struct rule *r, const struct access_rule *src, int *groups)
{
	const char *why;
	r->scope = src->scope;
	if ((why = compile_dn(&r->key, src->dn)))
		return why;
	if (src->filter) {
		if (!(r->filter = filter_from_string(src->filter, &r->filter_mem)))
			return "filter=: not a valid filter";
		r->filter_computed = op_attrs_in_filter(r->filter);
	}
	if ((why = compile_attrs(r, src)))
		return why;
	if (!(r->who = calloc((size_t)src->nwho + 1, sizeof(*r->who))))
		return "out of memory";
	for (int i = 0; i < src->nwho; i++, r->nwho++) {
		struct who *w = &r->who[i];
		w->src = &src->who[i];
		if ((why = compile_dn(&w->key, w->src->dn)))
			return why;
		if (w->src->kind == ACCESS_WHO_GROUP) {
			if (*groups == ACCESS_MAX_GROUPS)
				return "more than 64 group= clauses";
			w->group_slot = (*groups)++;
			if (schema_loaded() &&
			    !schema_oc_find(w->src->group_class, strlen(w->src->group_class)))
				return "group/CLASS: unknown object class";
			if (schema_loaded() &&
			    !schema_attr_find(w->src->group_attr, strlen(w->src->group_attr)))
				return "group/CLASS/ATTR: unknown attribute";
		}
	}
	return NULL;
}

int access_compile(struct server *srv)
{
	const struct config *cfg = &srv->cfg;
	struct access_rules *rules = calloc(1, sizeof(*rules));
	if (!rules || !(rules->rule = calloc((size_t)cfg->naccess + 1, sizeof(*rules->rule)))) {
		free(rules);
		log_error("access rules: out of memory");
		return -1;
	}
	srv->access = rules;
	rules->entry_floor = ACCESS_NONE;
	int groups = 0;
	for (int i = 0; i < cfg->naccess; i++, rules->n++) {
		const char *why = compile_rule(&rules->rule[i], &cfg->access[i], &groups);
		if (why) {
			rules->n++; /* freed with the others */
			if (cfg->access[i].line)
				log_error("%s:%d: access: %s", cfg->path, cfg->access[i].line, why);
			else
				log_error("built-in access rule %d: %s", i + 1, why);
			return -1;
		}
	}
	rules->entry_free = true;
	for (int i = 0; i < rules->n; i++) {
		for (size_t k = 0; k < rules->rule[i].nnames; k++)
			rules->name_lens |= length_bit(rules->rule[i].name_lens[k]);
		if (rules->rule[i].scope != ACCESS_SCOPE_ANY || rules->rule[i].filter)
			rules->entry_free = false;
	}
	for (int i = 0; i < rules->n; i++) {
		const struct rule *r = &rules->rule[i];
		if (!r->all_attrs && !r->entry)
			continue;
		if (r->scope == ACCESS_SCOPE_ANY && !r->filter && r->nwho &&
		    r->who[0].src->kind == ACCESS_WHO_ANY)
			rules->entry_floor = r->who[0].src->level;
		break;
	}
	return 0;
}

void access_free(struct server *srv)
{
	struct access_rules *rules = srv->access;
	if (!rules)
		return;
	for (int i = 0; i < rules->n; i++) {
		struct rule *r = &rules->rule[i];
		buf_free(&r->key);
		arena_free(&r->filter_mem);
		free(r->names);
		free(r->name_lens);
		for (int j = 0; j < r->nwho; j++)
			buf_free(&r->who[j].key);
		free(r->who);
	}
	free(rules->rule);
	free(rules);
	srv->access = NULL;
}

/* --- deciding ------------------------------------------------------------------------- */

void access_op_init(struct access_op *op, struct conn *c)
{
	op->rules = c->w->srv->access;
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
			op_attrs_all(&op->extra, op->db, op->txn, id, e, NULL);
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
 * the same for every operation, as the rules do not change while workers run. A worker
 * decides it once and keeps it. Its op is its own, holding what the gates read of one
 * (rules, bypass), so that it outlives the operation that made it.
 */
struct access_anonymous {
	struct access_op op;
	struct access_entry d;
};

/* The worker's anonymous decision, made now from op's first entry if not yet; NULL when
 * out of memory (the operation decides for itself then). */
static const struct access_entry *anonymous(struct access_op *op, entry_id id,
                                            const struct entry_view *e)
{
	struct worker *w = op->c->w;
	if (ops_worker(w)->anonymous)
		return &ops_worker(w)->anonymous->d;
	struct access_anonymous *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->op = (struct access_op){.rules = op->rules};
	a->d.op = &a->op;         /* what the gates read */
	decide(&a->d, op, id, e); /* op: the client's, anonymous */
	a->d.e = NULL;            /* e is borrowed for this entry only */
	ops_worker(w)->anonymous = a;
	return &a->d;
}

void access_worker_free(struct worker *w)
{
	free(ops_worker(w)->anonymous);
	ops_worker(w)->anonymous = NULL;
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
	if (op->c->auth == AUTH_ANONYMOUS)
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
