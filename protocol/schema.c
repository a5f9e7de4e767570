#include "protocol/schema.h"

#include "protocol/schema_builtin.h"
#include "protocol/schema_macro.h"

#include <ctype.h>
#include <errno.h>
#include <lber.h>
#include <ldap.h>
#include <ldap_schema.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <strings.h>

/* Name -> type lookup: open addressing over lowercased names and OIDs. */
#define SCHEMA_SLOTS 4096

struct slot {
	char *key;
	size_t len; /* strlen(key) */
	const void *value;
};

static struct {
	bool loaded;
	struct schema_attr **attrs;
	size_t nattrs;
	struct schema_oc **ocs;
	size_t nocs;
	struct slot attr_slots[SCHEMA_SLOTS];
	struct slot oc_slots[SCHEMA_SLOTS];
	LDAPAttributeType **raw;  /* parsed definitions, for SUP resolution */
	LDAPObjectClass **raw_oc; /* parsed classes: their SUP, MUST and MAY lists */
	char digest[SCHEMA_DIGEST_SIZE];
} S;

static size_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)tolower((unsigned char)s[i])) * 1099511628211ULL;
	return (size_t)h;
}

static const void *lookup_table(const struct slot *t, const char *name, size_t len)
{
	for (size_t i = hash(name, len) % SCHEMA_SLOTS, n = 0; t[i].key && n < SCHEMA_SLOTS;
	     i = (i + 1) % SCHEMA_SLOTS, n++)
		if (t[i].len == len && strncasecmp(t[i].key, name, len) == 0)
			return t[i].value;
	return NULL;
}

/* Incremented by each schema_load: what a thread remembers of an older schema is void. */
static unsigned schema_generation;

/* Names remembered per thread, spelled as asked. */
#define LOOKUP_MEMO_SLOTS 64
#define LOOKUP_MEMO_NAME 24

/*
 * An import asks the same few names many times an entry (each attribute's type, each
 * objectClass value, by several checks), so each thread remembers its last answers by
 * the exact bytes asked: a hit is a memcmp, not a hash and a case-insensitive compare.
 */
static const void *lookup(const struct slot *t, const char *name, size_t len)
{
	static _Thread_local struct {
		const struct slot *table;
		unsigned generation;
		size_t len;
		char name[LOOKUP_MEMO_NAME];
		const void *value;
	} memo[LOOKUP_MEMO_SLOTS];
	if (!S.loaded || len == 0 || len > LOOKUP_MEMO_NAME)
		return lookup_table(t, name, len); /* while loading, names still come */
	size_t i = (len * 31 + (unsigned char)name[0] * 7 + (unsigned char)name[len - 1] +
	            (t == S.oc_slots)) %
	           LOOKUP_MEMO_SLOTS;
	if (memo[i].table == t && memo[i].generation == schema_generation && memo[i].len == len &&
	    memcmp(memo[i].name, name, len) == 0)
		return memo[i].value;
	const void *value = lookup_table(t, name, len);
	memo[i].table = t;
	memo[i].generation = schema_generation;
	memo[i].len = len;
	memcpy(memo[i].name, name, len);
	memo[i].value = value;
	return value;
}

static int insert(struct slot *t, const char *name, const void *value)
{
	size_t len = strlen(name);
	if (lookup(t, name, len))
		return 0; /* first definition wins */
	for (size_t i = hash(name, len) % SCHEMA_SLOTS, n = 0; n < SCHEMA_SLOTS;
	     i = (i + 1) % SCHEMA_SLOTS, n++) {
		if (!t[i].key) {
			t[i].key = strdup(name);
			t[i].len = len;
			t[i].value = value;
			return t[i].key ? 0 : -1;
		}
	}
	return -1;
}

/* Files value under its OID and each of its names (NULL-terminated, or NULL). */
static int insert_named(struct slot *t, const char *oid, char **names, const void *value)
{
	int rc = insert(t, oid, value);
	for (int i = 0; rc == 0 && names && names[i]; i++)
		rc = insert(t, names[i], value);
	return rc;
}

/*
 * Makes room for one more element at the end of array arr of n elements; evaluates to
 * true, or to false when memory ran out (arr is then as it was). Used for the schema's
 * parallel arrays (parsed and libldap's raw definitions), each of its own type.
 */
#define GROW_BY_ONE(arr, n)                                                                        \
	__extension__({                                                                            \
		__typeof__(arr) grown_ = realloc((arr), ((n) + 1) * sizeof(*grown_));              \
		if (grown_)                                                                        \
			(arr) = grown_;                                                            \
		grown_ != NULL;                                                                    \
	})

/* A definition libldap could not parse: "WHERE: reason near "..."", and -1. */
static int syntax_error(char *err, size_t errlen, const char *where, int code, const char *errp)
{
	snprintf(err, errlen, "%s: %s near \"%.20s\"", where, ldap_scherr2str(code), errp);
	return -1;
}

/* The attribute type AT into the tables, its slots grown already; A is its zeroed record.
 * Both become the schema's. */
static int add_attr(LDAPAttributeType *at, struct schema_attr *a)
{
	a->oid = at->at_oid;
	a->names = at->at_names;
	a->name = a->names && a->names[0] ? a->names[0] : a->oid;
	a->name_len = strlen(a->name);
	a->operational = at->at_usage != 0;
	a->single_value = at->at_single_value;
	a->eq = match_rule_named(at->at_equality_oid);
	a->ord = match_rule_named(at->at_ordering_oid);
	a->sub = match_rule_named(at->at_substr_oid);
	a->definition = ldap_attributetype2str(at);
	S.raw[S.nattrs] = at;
	S.attrs[S.nattrs++] = a;
	return insert_named(S.attr_slots, a->oid, a->names, a);
}

/* The object class OC into the tables, as add_attr. */
static int add_class(LDAPObjectClass *oc, struct schema_oc *c)
{
	c->oid = strdup(oc->oc_oid);
	c->name = strdup(oc->oc_names && oc->oc_names[0] ? oc->oc_names[0] : oc->oc_oid);
	c->sup = oc->oc_sup_oids && oc->oc_sup_oids[0] ? strdup(oc->oc_sup_oids[0]) : NULL;
	c->kind = oc->oc_kind == LDAP_SCHEMA_ABSTRACT    ? SCHEMA_OC_ABSTRACT
	          : oc->oc_kind == LDAP_SCHEMA_AUXILIARY ? SCHEMA_OC_AUXILIARY
	                                                 : SCHEMA_OC_STRUCTURAL;
	c->definition = ldap_objectclass2str(oc);
	c->sups = oc->oc_sup_oids;
	c->must = oc->oc_at_oids_must;
	c->may = oc->oc_at_oids_may;
	S.raw_oc[S.nocs] = oc;
	S.ocs[S.nocs++] = c;
	return insert_named(S.oc_slots, c->oid, oc->oc_names, c);
}

enum def_kind { DEF_ATTRIBUTE_TYPE = 1, DEF_OBJECT_CLASS, DEF_OID_MACRO };

/* The "FILE:LINE" of what t already files under name, NULL when nothing or a built-in. */
static const char *defined_in_file(const struct slot *t, const char *name)
{
	const void *v = lookup(t, name, strlen(name));
	if (!v)
		return NULL;
	return t == S.attr_slots ? ((const struct schema_attr *)v)->defined_at
	                         : ((const struct schema_oc *)v)->defined_at;
}

/* A live definition (live: not commented out) whose OID or a NAME an earlier file's live
 * definition has: "WHERE: ... is defined already at FILE:LINE", -1, as slapd refuses it
 * (before, the first silently won). A built-in's OID is no error: the files restate the
 * definitions slapd builds in. 0 otherwise. */
static int duplicate(bool live, const struct slot *t, const char *kind, const char *oid,
                     char **names, char *err, size_t errlen, const char *where)
{
	if (!live)
		return 0;
	const char *at = defined_in_file(t, oid), *name = oid;
	for (int i = 0; !at && names && names[i]; i++)
		if ((at = defined_in_file(t, names[i])))
			name = names[i];
	if (!at)
		return 0;
	snprintf(err, errlen,
	         "%s: %s %s (\"%s\") is defined already at %s (a duplicate definition)", where,
	         kind, oid, name, at);
	return -1;
}

/* Replaces *oid (libldap's string; NULL: none) written as an OID macro (schema_macro.h)
 * with the numeric OID it stands for, as slapd does for a definition's OID and SYNTAX.
 * A name no macro defined before: -1 with "WHERE: KIND WHAT "NAME" ..." in err. */
static int expand_oid(char **oid, const char *kind, const char *what, char *err, size_t errlen,
                      const char *where)
{
	char numeric[512];
	if (!*oid || isdigit((unsigned char)**oid))
		return 0; /* libldap checked a numeric OID */
	if (!schema_macro_expand(*oid, numeric, sizeof(numeric))) {
		snprintf(err, errlen,
		         "%s: %s %s \"%s\" is neither a numeric OID nor MACRO[:SUFFIX] of an "
		         "objectIdentifier defined before it",
		         where, kind, what, *oid);
		return -1;
	}
	char *copy = ber_strdup(numeric);
	if (!copy) {
		snprintf(err, errlen, "%s: out of memory", where);
		return -1;
	}
	ldap_memfree(*oid);
	*oid = copy;
	return 0;
}

/* The OIDs of a parsed definition (at or oc) expanded, as expand_oid: 0 or -1. One without
 * an OID, which libldap's LDAP_SCHEMA_ALLOW_ALL lets through and slapd refuses: -1. */
static int expand_definition(LDAPAttributeType *at, LDAPObjectClass *oc, char *err, size_t errlen,
                             const char *where)
{
	if (!(oc ? oc->oc_oid : at->at_oid)) {
		snprintf(err, errlen, "%s: %s without an OID", where,
		         oc ? "objectclass" : "attributetype");
		return -1;
	}
	if (oc)
		return expand_oid(&oc->oc_oid, "objectclass", "OID", err, errlen, where);
	if (expand_oid(&at->at_oid, "attributetype", "OID", err, errlen, where) < 0)
		return -1;
	return expand_oid(&at->at_syntax_oid, "attributetype", "SYNTAX", err, errlen, where);
}

/* Parses one definition of KIND (an RFC 4512 description) and adds it, unless its OID is
 * defined already (built-in or an earlier file): 0. A syntax error, a live definition that
 * repeats an earlier file's (duplicate) or no memory: -1 with "WHERE: reason" in err. */
static int add_definition(enum def_kind kind, const char *def, char *err, size_t errlen,
                          const char *where, bool live)
{
	int code;
	const char *errp;
	LDAPAttributeType *at = NULL;
	LDAPObjectClass *oc = NULL;
	if (kind == DEF_ATTRIBUTE_TYPE)
		at = ldap_str2attributetype(def, &code, &errp, LDAP_SCHEMA_ALLOW_ALL);
	else
		oc = ldap_str2objectclass(def, &code, &errp, LDAP_SCHEMA_ALLOW_ALL);
	if (!at && !oc)
		return syntax_error(err, errlen, where, code, errp);
	if (expand_definition(at, oc, err, errlen, where) < 0 ||
	    duplicate(live, at ? S.attr_slots : S.oc_slots, at ? "attributetype" : "objectclass",
	              at ? at->at_oid : oc->oc_oid, at ? at->at_names : oc->oc_names, err, errlen,
	              where) < 0) {
		if (at)
			ldap_attributetype_free(at);
		else
			ldap_objectclass_free(oc);
		return -1;
	}
	const char *oid = at ? at->at_oid : oc->oc_oid;
	bool known = lookup(at ? S.attr_slots : S.oc_slots, oid, strlen(oid)) != NULL;
	void *record = NULL;
	bool grown = false;
	if (!known) {
		record = calloc(1, at ? sizeof(struct schema_attr) : sizeof(struct schema_oc));
		grown = at ? GROW_BY_ONE(S.attrs, S.nattrs) & GROW_BY_ONE(S.raw, S.nattrs)
		           : GROW_BY_ONE(S.ocs, S.nocs) & GROW_BY_ONE(S.raw_oc, S.nocs);
	}
	if (record && grown) {
		char *place = live ? strdup(where) : NULL;
		if (at)
			((struct schema_attr *)record)->defined_at = place;
		else
			((struct schema_oc *)record)->defined_at = place;
		if ((!live || place) && (at ? add_attr(at, record) : add_class(oc, record)) == 0)
			return 0;
	} else {
		free(record);
		if (at)
			ldap_attributetype_free(at);
		else
			ldap_objectclass_free(oc);
		if (known)
			return 0;
	}
	snprintf(err, errlen, "%s: out of memory", where);
	return -1;
}

/* Fills rules a type lacks from its superior types (SUP chains are short). */
static void inherit_rules(void)
{
	for (size_t i = 0; i < S.nattrs; i++) {
		struct schema_attr *a = S.attrs[i];
		const char *sup = S.raw[i]->at_sup_oid;
		a->syntax = S.raw[i]->at_syntax_oid;
		a->sup = sup ? lookup(S.attr_slots, sup, strlen(sup)) : NULL;
		for (int depth = 0; sup && depth < 8; depth++) {
			const struct schema_attr *s = lookup(S.attr_slots, sup, strlen(sup));
			if (!s)
				break;
			if (a->eq == MATCH_NONE && !S.raw[i]->at_equality_oid)
				a->eq = s->eq;
			if (a->ord == MATCH_NONE && !S.raw[i]->at_ordering_oid)
				a->ord = s->ord;
			if (a->sub == MATCH_NONE && !S.raw[i]->at_substr_oid)
				a->sub = s->sub;
			size_t k = (size_t)(s - s); /* find s's raw definition for its own SUP */
			for (k = 0; k < S.nattrs && S.attrs[k] != s; k++)
				;
			if (!a->syntax && k < S.nattrs)
				a->syntax = S.raw[k]->at_syntax_oid;
			sup = k < S.nattrs ? S.raw[k]->at_sup_oid : NULL;
		}
		/* A DN-valued type without an equality rule (the root DSE's namingContexts, RFC
		 * 4512 5.1) is matched as a DN, as slapd matches it: (namingContexts=dc=x) finds
		 * the root DSE whatever the spaces and case. */
		if (a->eq == MATCH_NONE && a->syntax &&
		    strcmp(a->syntax, "1.3.6.1.4.1.1466.115.121.1.12") == 0)
			a->eq = MATCH_DN;
	}
}

/* "objectIdentifier NAME VALUE", its words after the keyword in stmt (changed): defined
 * (schema_macro.h), 0; -1 with "WHERE: reason" in err. */
static int define_macro(char *stmt, char *err, size_t errlen, const char *where)
{
	char *save = NULL, *name = strtok_r(stmt, " \t\r\n", &save);
	char *value = name ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	if (!value || strtok_r(NULL, " \t\r\n", &save)) {
		snprintf(err, errlen,
		         "%s: objectIdentifier takes two words: a macro's name and an OID (or "
		         "MACRO:SUFFIX)",
		         where);
		return -1;
	}
	return schema_macro_define(name, value, where, err, errlen);
}

/* The statement a line (p: after a leading '#') starts, with *rest set after its keyword;
 * 0 for any other line. A commented-out objectIdentifier defines nothing. */
static int statement_kind(char *p, bool commented, char **rest)
{
	static const struct {
		const char *word;
		size_t len;
		int kind;
	} words[] = {{"attributetype", 13, DEF_ATTRIBUTE_TYPE},
	             {"objectclass", 11, DEF_OBJECT_CLASS},
	             {"objectidentifier", 16, DEF_OID_MACRO}};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strncasecmp(p, words[i].word, words[i].len) == 0 &&
		    isspace((unsigned char)p[words[i].len]) &&
		    !(commented && words[i].kind == DEF_OID_MACRO)) {
			*rest = p + words[i].len;
			return words[i].kind;
		}
	return 0;
}

/*
 * Reads one .schema file: "attributetype ( ... )", "objectclass ( ... )" and
 * "objectIdentifier NAME OID" statements, continued on lines that start with white
 * space. Definitions that are commented out ("#attributetype") are the ones slapd
 * builds in; they are read too, after the built-ins (schema_builtin.c), so nothing is
 * missing.
 */
static int load_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char line[4096], where[4200];
	char *stmt = NULL;
	size_t len = 0, cap = 0;
	int kind = 0, lineno = 0, start = 0, rc = 0;
	bool commented = false;
	for (;;) {
		char *l = fgets(line, sizeof(line), f);
		if (l)
			lineno++;
		bool cont = false;
		if (l && kind) {
			if (commented && l[0] == '#' && (l[1] == '\t' || l[1] == ' '))
				l++, cont = true;
			else if (!commented && (l[0] == ' ' || l[0] == '\t'))
				cont = true;
		}
		if (!cont && kind) { /* the statement ended: parse it */
			snprintf(where, sizeof(where), "%s:%d", path, start);
			int r = kind == DEF_OID_MACRO
			            ? define_macro(stmt, err, errlen, where)
			            : add_definition(kind, stmt, err, errlen, where, !commented);
			if (r < 0 && !commented) {
				rc = -1;
				break;
			}
			kind = 0;
		}
		if (!l)
			break;
		if (!cont) {
			commented = l[0] == '#';
			kind = statement_kind(l + (commented ? 1 : 0), commented, &l);
			if (!kind)
				continue;
			while (isspace((unsigned char)*l))
				l++;
			start = lineno;
			len = 0;
		}
		size_t n = strlen(l);
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *grown = realloc(stmt, cap);
			if (!grown) {
				rc = -1;
				break;
			}
			stmt = grown;
		}
		memcpy(stmt + len, l, n + 1);
		len += n;
	}
	free(stmt);
	fclose(f);
	return rc;
}

/* Depth of SUP chains followed: deeper (or circular) definitions are cut there. */
#define SCHEMA_MAX_SUP_DEPTH 16

/* Marks every type that some type derives from. */
static void mark_supertypes(void)
{
	for (size_t i = 0; i < S.nattrs; i++) {
		const struct schema_attr *s = S.attrs[i]->sup;
		for (int depth = 0; s && depth < SCHEMA_MAX_SUP_DEPTH; depth++, s = s->sup)
			((struct schema_attr *)s)->has_subtypes = true;
	}
}

/* Appends oc's superclasses (breadth first, each once) to list[*n..cap). */
static void collect_superclasses(const struct schema_oc *oc, const struct schema_oc **list,
                                 size_t *n, size_t cap)
{
	size_t start = *n;
	const struct schema_oc *cur = oc;
	for (size_t next = start;; cur = list[next++]) {
		for (int i = 0; cur->sups && cur->sups[i]; i++) {
			const struct schema_oc *s =
			    lookup(S.oc_slots, cur->sups[i], strlen(cur->sups[i]));
			bool seen = !s || s == oc;
			for (size_t k = start; !seen && k < *n; k++)
				seen = list[k] == s;
			if (!seen && *n < cap)
				list[(*n)++] = s;
		}
		if (next >= *n || next - start >= SCHEMA_MAX_SUP_DEPTH * 4)
			break;
	}
}

/* Fills each class's superclasses (top included) and has_subclasses. */
static int resolve_superclasses(void)
{
	const struct schema_oc *top = lookup(S.oc_slots, "top", 3);
	for (size_t i = 0; i < S.nocs; i++) {
		struct schema_oc *oc = S.ocs[i];
		const struct schema_oc *list[SCHEMA_MAX_SUP_DEPTH * 4 + 2];
		size_t n = 0;
		collect_superclasses(oc, list, &n, SCHEMA_MAX_SUP_DEPTH * 4);
		bool has_top = oc == top;
		for (size_t k = 0; k < n && !has_top; k++)
			has_top = list[k] == top;
		if (!has_top && top)
			list[n++] = top;
		oc->superclasses = calloc(n + 1, sizeof(*oc->superclasses));
		if (!oc->superclasses)
			return -1;
		for (size_t k = 0; k < n; k++) {
			oc->superclasses[k] = list[k];
			((struct schema_oc *)list[k])->has_subclasses = true;
		}
	}
	return 0;
}

/* names resolved to types (unknown ones left out), NULL-terminated; NULL: no memory. */
static const struct schema_attr **resolve_attrs(char **names)
{
	size_t n = 0;
	while (names && names[n])
		n++;
	const struct schema_attr **list = calloc(n + 1, sizeof(*list));
	for (size_t i = 0, k = 0; list && i < n; i++) {
		const struct schema_attr *a = lookup(S.attr_slots, names[i], strlen(names[i]));
		if (a)
			list[k++] = a;
	}
	return list;
}

/* Fills each class's must_attrs and may_attrs. */
static int resolve_class_attrs(void)
{
	for (size_t i = 0; i < S.nocs; i++) {
		S.ocs[i]->must_attrs = resolve_attrs(S.ocs[i]->must);
		S.ocs[i]->may_attrs = resolve_attrs(S.ocs[i]->may);
		if (!S.ocs[i]->must_attrs || !S.ocs[i]->may_attrs)
			return -1;
	}
	return 0;
}

bool schema_attr_is_a(const struct schema_attr *at, const struct schema_attr *sup)
{
	for (int depth = 0; at && depth <= SCHEMA_MAX_SUP_DEPTH; depth++, at = at->sup)
		if (at == sup)
			return true;
	return false;
}

bool schema_oc_is_a(const struct schema_oc *oc, const struct schema_oc *sup)
{
	if (oc == sup)
		return true;
	for (size_t i = 0; oc->superclasses && oc->superclasses[i]; i++)
		if (oc->superclasses[i] == sup)
			return true;
	return false;
}

/* S.digest from the definitions loaded (schema_digest). */
static void make_digest(void)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < S.nattrs + S.nocs; i++) {
		const char *d =
		    i < S.nattrs ? S.attrs[i]->definition : S.ocs[i - S.nattrs]->definition;
		for (const char *p = d ? d : ""; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ '\n') * 1099511628211ULL;
	}
	snprintf(S.digest, sizeof(S.digest), "%016llx", (unsigned long long)h);
}

int schema_load(const char *dir, const char *files, char *err, size_t errlen)
{
	for (size_t i = 0; i < schema_builtin_nattrs; i++)
		if (add_definition(DEF_ATTRIBUTE_TYPE, schema_builtin_attrs[i], err, errlen,
		                   "built-in schema", false) < 0)
			return -1;
	for (size_t i = 0; i < schema_builtin_nclasses; i++)
		if (add_definition(DEF_OBJECT_CLASS, schema_builtin_classes[i], err, errlen,
		                   "built-in schema", false) < 0)
			return -1;
	char names[1024], path[4096];
	snprintf(names, sizeof(names), "%s", files);
	char *save = NULL;
	for (char *n = strtok_r(names, " ,\t", &save); n; n = strtok_r(NULL, " ,\t", &save)) {
		/* An absolute name is the file's path, as slapd's include takes it. */
		if (n[0] == '/')
			snprintf(path, sizeof(path), "%s", n);
		else
			snprintf(path, sizeof(path), "%s/%s.schema", dir, n);
		if (load_file(path, err, errlen) < 0)
			return -1;
	}
	inherit_rules();
	mark_supertypes();
	if (resolve_superclasses() < 0 || resolve_class_attrs() < 0) {
		snprintf(err, errlen, "schema: out of memory");
		return -1;
	}
	make_digest();
	schema_generation++;
	S.loaded = true;
	return 0;
}

size_t schema_canonical_desc(const char *in, size_t len, char *out, size_t cap)
{
	return schema_desc_as(schema_attr_find(in, len), in, len, out, cap);
}

size_t schema_desc_as(const struct schema_attr *at, const char *in, size_t len, char *out,
                      size_t cap)
{
	if (!at)
		return 0;
	const char *semi = memchr(in, ';', len);
	size_t base = at->name_len, opts = semi ? len - (size_t)(semi - in) : 0;
	if (base >= cap || opts >= cap - base) /* base + opts + 1 > cap, without overflow */
		return 0;
	memcpy(out, at->name, base);
	for (size_t i = 0; i < opts; i++)
		out[base + i] = (char)tolower((unsigned char)semi[i]);
	out[base + opts] = '\0';
	return base + opts;
}

bool schema_loaded(void)
{
	return S.loaded;
}

const char *schema_digest(void)
{
	return S.loaded ? S.digest : "";
}

const struct schema_attr *schema_attr_find(const char *name, size_t len)
{
	if (!S.loaded || len == 0)
		return NULL;
	const char *semi = memchr(name, ';', len);
	if (semi)
		len = (size_t)(semi - name);
	return lookup(S.attr_slots, name, len);
}

const struct schema_oc *schema_oc_find(const char *name, size_t len)
{
	return S.loaded && len ? lookup(S.oc_slots, name, len) : NULL;
}

size_t schema_attr_count(void)
{
	return S.nattrs;
}

const struct schema_attr *schema_attr_at(size_t i)
{
	return S.attrs[i];
}

size_t schema_oc_count(void)
{
	return S.nocs;
}

const struct schema_oc *schema_oc_at(size_t i)
{
	return S.ocs[i];
}

void schema_free(void)
{
	for (size_t i = 0; i < S.nattrs; i++) {
		ldap_memfree(S.attrs[i]->definition);
		free(S.attrs[i]->defined_at);
		free(S.attrs[i]);
		ldap_attributetype_free(S.raw[i]);
	}
	for (size_t i = 0; i < S.nocs; i++) {
		ldap_memfree(S.ocs[i]->definition);
		free(S.ocs[i]->defined_at);
		free(S.ocs[i]->name);
		free(S.ocs[i]->oid);
		free(S.ocs[i]->sup);
		free(S.ocs[i]->superclasses);
		free(S.ocs[i]->must_attrs);
		free(S.ocs[i]->may_attrs);
		free(S.ocs[i]);
		ldap_objectclass_free(S.raw_oc[i]);
	}
	for (size_t i = 0; i < SCHEMA_SLOTS; i++) {
		free(S.attr_slots[i].key);
		free(S.oc_slots[i].key);
	}
	free(S.attrs);
	free(S.ocs);
	free(S.raw);
	free(S.raw_oc);
	memset(&S, 0, sizeof(S));
	schema_macro_free();
}
