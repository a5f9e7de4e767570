#include "storage/entry_schema.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Whether at is in list (a class's must_attrs or may_attrs), itself or as a subtype of a
 * type there. */
static bool at_in(const struct schema_attr *at, const struct schema_attr **list)
{
	for (int i = 0; list && list[i]; i++)
		if (schema_attr_is_a(at, list[i]))
			return true;
	return false;
}

/* Whether class c or a superclass allows at (MUST or MAY). */
static bool oc_allows(const struct schema_oc *c, const struct schema_attr *at)
{
	if (at_in(at, c->must_attrs) || at_in(at, c->may_attrs))
		return true;
	for (int i = 0; c->superclasses && c->superclasses[i]; i++)
		if (at_in(at, c->superclasses[i]->must_attrs) ||
		    at_in(at, c->superclasses[i]->may_attrs))
			return true;
	return false;
}

/* The entry's attributes: mods and the type of each (NULL where undefined). */
struct typed_mods {
	LDAPMod **mods;
	const struct schema_attr **types;
};

static const LDAPMod *mod_of(const struct typed_mods *tm, const struct schema_attr *at)
{
	for (int i = 0; tm->mods[i]; i++)
		if (tm->types[i] == at)
			return tm->mods[i];
	return NULL;
}

/* The MUSTs of c and its superclasses, each present in mods. */
static int check_musts(const struct typed_mods *tm, const struct schema_oc *c, int depth, char *why,
                       size_t whylen)
{
	for (int i = 0; c->must_attrs && c->must_attrs[i]; i++) {
		const struct schema_attr *at = c->must_attrs[i];
		if (!mod_of(tm, at)) {
			snprintf(why, whylen, "object class '%s' requires attribute '%s'", c->name,
			         at->name);
			return -1;
		}
	}
	for (int i = 0; depth < 16 && c->sups && c->sups[i]; i++) {
		const struct schema_oc *s = oc_named(c->sups[i]);
		if (s && check_musts(tm, s, depth + 1, why, whylen) < 0)
			return -1;
	}
	return 0;
}

/* Reads the objectClass values into classes; checks they are defined and the structural chain. */
static int check_classes(const struct typed_mods *tm, const struct schema_oc **classes, int *n,
                         struct schema_fault *fault, char *why, size_t whylen)
{
	const struct schema_attr *oc_at = schema_attr_find("objectClass", 11);
	const LDAPMod *m = mod_of(tm, oc_at);
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
		if (c->kind != SCHEMA_OC_STRUCTURAL ||
		    (structural && schema_oc_is_a(structural, c)))
			continue;
		if (structural && !schema_oc_is_a(c, structural)) {
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

/* entry_schema_check on mods whose types tm has resolved; with shape_known, the classes,
 * MUSTs and allowed types are known to pass (entry_schema_memo_check). */
static int check_typed(const struct typed_mods *tm, bool shape_known, struct schema_fault *fault,
                       char *why, size_t whylen)
{
	const struct schema_oc *classes[SCHEMA_MAX_CLASSES];
	int n = 0;
	if (!shape_known && check_classes(tm, classes, &n, fault, why, whylen) < 0)
		return -1;
	*fault = (struct schema_fault){NULL, 0};
	bool extensible = false;
	for (int i = 0; i < n; i++) {
		extensible |= strcasecmp(classes[i]->name, "extensibleObject") == 0;
		if (check_musts(tm, classes[i], 0, why, whylen) < 0)
			return -1;
	}
	LDAPMod **mods = tm->mods;
	for (int i = 0; mods[i]; i++) {
		const char *t = mods[i]->mod_type;
		const struct schema_attr *at = tm->types[i];
		*fault = (struct schema_fault){mods[i], 0};
		if (!at) {
			snprintf(why, whylen, "undefined attribute type '%s'", t);
			return -1;
		}
		/* Operational attributes are the server's, allowed whatever the classes; their
		 * values are checked as others are: the importer keeps entryUUID and the stamps
		 * (storage/entry_opattrs.h), which the server then answers. */
		bool allowed = extensible || shape_known || at->operational;
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

/* The objectClass values of tm (its first objectClass mod's) as memo->classes keeps them. */
static int class_key(const struct typed_mods *tm, size_t n, struct buf *key)
{
	const struct schema_attr *oc_at = schema_attr_find("objectClass", 11);
	key->off = key->len = 0;
	for (size_t i = 0; i < n; i++) {
		if (tm->types[i] != oc_at)
			continue;
		for (int j = 0; tm->mods[i]->mod_bvalues[j]; j++) {
			const struct berval *v = tm->mods[i]->mod_bvalues[j];
			uint32_t len = (uint32_t)v->bv_len;
			if (buf_append(key, &len, sizeof(len)) < 0 ||
			    buf_append(key, v->bv_val, v->bv_len) < 0)
				return -1;
		}
		break;
	}
	return 0;
}

/* Whether the entry tm (n mods) has memo's shape; remembers its shape in memo if not. */
static bool same_shape(struct entry_schema_memo *memo, const struct typed_mods *tm, size_t n,
                       struct buf *classes)
{
	if (class_key(tm, n, classes) < 0)
		return false;
	return n == memo->ntypes && memcmp(tm->types, memo->types, n * sizeof(*tm->types)) == 0 &&
	       classes->len == memo->classes.len &&
	       (classes->len == 0 || memcmp(classes->data, memo->classes.data, classes->len) == 0);
}

/* Remembers the shape of a passing entry. */
static void remember(struct entry_schema_memo *memo, const struct typed_mods *tm, size_t n,
                     struct buf *classes)
{
	memo->ntypes = 0;
	if (n > memo->cap) {
		const struct schema_attr **grown = realloc(memo->types, n * sizeof(*grown));
		if (!grown)
			return;
		memo->types = grown;
		memo->cap = n;
	}
	memcpy(memo->types, tm->types, n * sizeof(*tm->types));
	memo->classes.off = memo->classes.len = 0;
	if (classes->len == 0 || buf_append(&memo->classes, classes->data, classes->len) == 0)
		memo->ntypes = n;
}

/* Attributes an entry has without a memory allocation for their types. */
#define SCHEMA_TYPES_ON_STACK 64

int entry_schema_memo_check(struct entry_schema_memo *memo, LDAPMod **mods,
                            struct schema_fault *fault, char *why, size_t whylen)
{
	*fault = (struct schema_fault){NULL, 0};
	if (!schema_loaded() || !mods)
		return 0;
	size_t n = 0;
	while (mods[n])
		n++;
	const struct schema_attr *local[SCHEMA_TYPES_ON_STACK];
	struct typed_mods tm = {mods,
	                        n <= SCHEMA_TYPES_ON_STACK ? local : malloc(n * sizeof(*local))};
	if (!tm.types) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		tm.types[i] = schema_attr_find(mods[i]->mod_type, strlen(mods[i]->mod_type));
	struct buf none = {0}, *classes = memo ? &memo->scratch : &none;
	bool known = memo && n > 0 && same_shape(memo, &tm, n, classes);
	int rc = check_typed(&tm, known, fault, why, whylen);
	if (rc == 0 && memo && !known && n > 0)
		remember(memo, &tm, n, classes);
	buf_free(&none);
	if (tm.types != local)
		free(tm.types);
	return rc;
}

int entry_schema_check(LDAPMod **mods, struct schema_fault *fault, char *why, size_t whylen)
{
	return entry_schema_memo_check(NULL, mods, fault, why, whylen);
}

void entry_schema_memo_free(struct entry_schema_memo *memo)
{
	free(memo->types);
	buf_free(&memo->classes);
	buf_free(&memo->scratch);
	memset(memo, 0, sizeof(*memo));
}

const struct schema_oc *entry_structural_class(const struct entry_view *e)
{
	const struct schema_oc *best = NULL;
	int best_depth = -1;
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (!entry_find_attr(e, "objectClass", 11, &vals, &vlen))
		return NULL;
	for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &len);) {
		const struct schema_oc *oc = schema_oc_find((const char *)v, len);
		if (!oc || oc->kind != SCHEMA_OC_STRUCTURAL)
			continue;
		int depth = 0;
		for (const struct schema_oc *s = oc; s && s->sup && depth < 16; depth++)
			s = schema_oc_find(s->sup, strlen(s->sup));
		if (depth > best_depth) {
			best = oc;
			best_depth = depth;
		}
	}
	return best;
}
