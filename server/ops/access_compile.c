/* The access rules compiled from the configuration's (conf/access_rule.h) against the
 * schema, at start-up and at a SIGHUP that changes them, and their life as a refcounted set
 * (access.h: access_compile, access_rules_release, access_publish). */
#include "server/ops/access.h"

#include "server/ops/access_rules.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/schema.h"
#include "server/log.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"

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

static const char *compile_rule(struct rule *r, const struct access_rule *src, int *groups,
                                bool *by_peer)
{
	const char *why;
	r->scope = src->scope;
	if ((why = compile_dn(&r->key, src->dn)))
		return why;
	if (src->filter) {
		if (!(r->filter = filter_from_string(src->filter, &r->filter_mem)))
			return "filter=: not a valid filter";
		r->filter_computed = computed_attrs_in_filter(r->filter);
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
		if (w->src->kind == ACCESS_WHO_PEER_IP || w->src->kind == ACCESS_WHO_PEER_PATH)
			*by_peer = true;
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

struct access_rules *access_compile(struct config *cfg, int nworkers)
{
	struct access_rules *rules = calloc(1, sizeof(*rules));
	if (!rules || !(rules->rule = calloc((size_t)cfg->naccess + 1, sizeof(*rules->rule))) ||
	    !(rules->anonymous = calloc((size_t)nworkers + 1, sizeof(*rules->anonymous)))) {
		if (rules)
			free(rules->rule);
		free(rules);
		log_error("access rules: out of memory");
		return NULL;
	}
	rules->refs = 1;
	rules->nworkers = nworkers;
	rules->entry_floor = ACCESS_NONE;
	int groups = 0;
	for (int i = 0; i < cfg->naccess; i++, rules->n++) {
		const char *why =
		    compile_rule(&rules->rule[i], &cfg->access[i], &groups, &rules->by_peer);
		if (why) {
			rules->n++; /* freed with the others */
			if (cfg->access[i].line)
				log_error("%s:%d: access: %s", cfg->path, cfg->access[i].line, why);
			else
				log_error("built-in access rule %d: %s", i + 1, why);
			access_rules_release(rules); /* cfg's rules are still cfg's */
			return NULL;
		}
	}
	rules->text = config_key_text(cfg, "access");
	rules->src = cfg->access; /* the compiled rules point into them */
	rules->nsrc = cfg->naccess;
	cfg->access = NULL;
	cfg->naccess = 0;
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
	return rules;
}

void access_rules_release(struct access_rules *rules)
{
	if (!rules || __atomic_sub_fetch(&rules->refs, 1, __ATOMIC_ACQ_REL) != 0)
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
	for (int i = 0; i < rules->nworkers; i++)
		free(rules->anonymous[i]); /* plain blocks: their op holds no buffer */
	for (int i = 0; i < rules->nsrc; i++)
		access_rule_free(&rules->src[i]);
	free(rules->src);
	free(rules->text);
	free(rules->anonymous);
	free(rules->rule);
	free(rules);
}

void access_publish(struct server *srv, struct access_rules *rules)
{
	struct ops_shared *shared = ops_shared(srv);
	pthread_mutex_lock(&shared->lock);
	struct access_rules *old = shared->access;
	__atomic_store_n(&shared->access, rules, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&shared->lock);
	access_rules_release(old); /* workers still on it hold it */
}

bool access_rules_differ(const struct access_rules *rules, const struct config *cfg)
{
	char *text = config_key_text(cfg, "access");
	bool differ = !rules || !rules->text || !text || strcmp(rules->text, text) != 0;
	free(text);
	return differ;
}

int access_rules_count(const struct access_rules *rules)
{
	return rules->n;
}
