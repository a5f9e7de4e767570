#include "storage/entry_schema.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol/schema.h"
#include "storage/value_syntax.h"

/* Object classes an entry may name, and attribute types it may hold. */
#define SCHEMA_MAX_CLASSES 64

static const struct schema_oc *oc_named(const char *name)
{
	return schema_oc_find(name, strlen(name));
}

/* Whether test holds for class c or one of its superclasses (SUP chains are short;
 * depth bounds loops in a bad schema). */
static bool oc_chain_any(const struct schema_oc *c,
                         bool (*test)(const struct schema_oc *c, const void *arg), const void *arg,
                         int depth)
{
	if (test(c, arg))
		return true;
	for (int i = 0; depth < 16 && c->sups && c->sups[i]; i++) {
		const struct schema_oc *s = oc_named(c->sups[i]);
		if (s && oc_chain_any(s, test, arg, depth + 1))
			return true;
	}
	return false;
}

static bool oc_is(const struct schema_oc *c, const void *sup)
{
	return c == sup;
}

/* Whether class c is sup or derives from it. */
static bool oc_derives(const struct schema_oc *c, const struct schema_oc *sup)
{
	return oc_chain_any(c, oc_is, sup, 0);
}

/* Whether at is named in list, itself or as a subtype of a type named there. */
static bool at_in(const struct schema_attr *at, char **list)
{
	for (int i = 0; list && list[i]; i++) {
		const struct schema_attr *t = schema_attr_find(list[i], strlen(list[i]));
		for (const struct schema_attr *a = at; t && a; a = a->sup)
			if (a == t)
				return true;
	}
	return false;
}

/* Whether class c itself names at as MUST or MAY. */
static bool oc_names(const struct schema_oc *c, const void *at)
{
	return at_in(at, c->must) || at_in(at, c->may);
}

/* Whether class c or a superclass allows at (MUST or MAY). */
static bool oc_allows(const struct schema_oc *c, const struct schema_attr *at)
{
	return oc_chain_any(c, oc_names, at, 0);
}

static const LDAPMod *mod_of(LDAPMod **mods, const struct schema_attr *at)
{
	for (int i = 0; mods[i]; i++) {
		const char *t = mods[i]->mod_type;
		if (schema_attr_find(t, strlen(t)) == at)
			return mods[i];
	}
	return NULL;
}

/* The MUSTs of c and its superclasses, each present in mods. */
static int check_musts(LDAPMod **mods, const struct schema_oc *c, int depth, char *why,
                       size_t whylen)
{
	for (int i = 0; c->must && c->must[i]; i++) {
		const struct schema_attr *at = schema_attr_find(c->must[i], strlen(c->must[i]));
		if (at && !mod_of(mods, at)) {
			snprintf(why, whylen, "object class '%s' requires attribute '%s'", c->name,
			         at->name);
			return -1;
		}
	}
	for (int i = 0; depth < 16 && c->sups && c->sups[i]; i++) {
		const struct schema_oc *s = oc_named(c->sups[i]);
		if (s && check_musts(mods, s, depth + 1, why, whylen) < 0)
			return -1;
	}
	return 0;
}

/* Reads the objectClass values into classes; checks they are defined and the structural chain. */
static int check_classes(LDAPMod **mods, const struct schema_oc **classes, int *n,
                         struct schema_fault *fault, char *why, size_t whylen)
{
	const struct schema_attr *oc_at = schema_attr_find("objectClass", 11);
	const LDAPMod *m = mod_of(mods, oc_at);
	const struct schema_oc *structural = NULL;
	*n = 0;
	for (int i = 0; m && m->mod_bvalues[i]; i++) {
		const struct berval *v = m->mod_bvalues[i];
		const struct schema_oc *c = schema_oc_find(v->bv_val, v->bv_len);
		*fault = (struct schema_fault){m, i};
		if (!c) {
			snprintf(why, whylen, "undefined object class '%.*s'", (int)v->bv_len,
			         v->bv_val);
			return -1;
		}
		if (*n < SCHEMA_MAX_CLASSES)
			classes[(*n)++] = c;
		if (c->kind != SCHEMA_OC_STRUCTURAL || (structural && oc_derives(structural, c)))
			continue;
		if (structural && !oc_derives(c, structural)) {
			snprintf(
			    why, whylen,
			    "structural object classes '%s' and '%s' are not one chain (neither "
			    "derives from the other)",
			    structural->name, c->name);
			return -1;
		}
		structural = c;
	}
	if (!structural) {
		*fault = (struct schema_fault){NULL, 0};
		snprintf(why, whylen, "no structural object class");
		return -1;
	}
	return 0;
}

int entry_schema_check(LDAPMod **mods, struct schema_fault *fault, char *why, size_t whylen)
{
	*fault = (struct schema_fault){NULL, 0};
	if (!schema_loaded() || !mods)
		return 0;
	const struct schema_oc *classes[SCHEMA_MAX_CLASSES];
	int n;
	if (check_classes(mods, classes, &n, fault, why, whylen) < 0)
		return -1;
	*fault = (struct schema_fault){NULL, 0};
	bool extensible = false;
	for (int i = 0; i < n; i++) {
		extensible |= strcasecmp(classes[i]->name, "extensibleObject") == 0;
		if (check_musts(mods, classes[i], 0, why, whylen) < 0)
			return -1;
	}
	for (int i = 0; mods[i]; i++) {
		const char *t = mods[i]->mod_type;
		const struct schema_attr *at = schema_attr_find(t, strlen(t));
		*fault = (struct schema_fault){mods[i], 0};
		if (!at) {
			snprintf(why, whylen, "undefined attribute type '%s'", t);
			return -1;
		}
		if (at->operational)
			continue; /* the importer keeps entryUUID and drops the others */
		bool allowed = extensible;
		for (int k = 0; k < n && !allowed; k++)
			allowed = oc_allows(classes[k], at);
		if (!allowed) {
			snprintf(why, whylen,
			         "attribute '%s' is not allowed by the entry's object classes", t);
			return -1;
		}
		if (at->single_value && mods[i]->mod_bvalues[0] && mods[i]->mod_bvalues[1]) {
			fault->value = 1;
			snprintf(why, whylen,
			         "attribute '%s' is single-valued but has several values", t);
			return -1;
		}
		for (int j = 0; mods[i]->mod_bvalues[j]; j++) {
			const struct berval *v = mods[i]->mod_bvalues[j];
			const char *want = value_syntax_check(at->syntax, v->bv_val, v->bv_len);
			if (want) {
				fault->value = j;
				snprintf(why, whylen, "value \"%.*s\" of '%s' is not %s",
				         (int)(v->bv_len > 64 ? 64 : v->bv_len), v->bv_val, t,
				         want);
				return -1;
			}
		}
	}
	return 0;
}
