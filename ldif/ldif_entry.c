#include "ldif/ldif_entry.h"

#include <stdint.h>
#include <string.h>

/* Distinct types of an entry found by a linear scan; more go through a hash table. */
#define LDIF_LINEAR_TYPES 16

/* A hash of a type, the same for every spelling of it (type characters fold with 0x20). */
static uint32_t type_hash(const char *t, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)(t[i] | 0x20)) * 16777619u;
	return h;
}

/* Files every type of the hash's groups again, in a table of slots entries. */
static int hash_rebuild(struct ldif_entry *e, const struct attr_group *g, size_t ng, size_t slots)
{
	e->hash.len = 0;
	if (buf_reserve(&e->hash, slots * sizeof(uint32_t)) < 0)
		return -1;
	uint32_t *h = (uint32_t *)e->hash.data;
	memset(h, 0, slots * sizeof(uint32_t));
	e->hash.len = slots * sizeof(uint32_t);
	for (size_t i = 0; i < ng; i++) {
		size_t at = type_hash(g[i].type, g[i].tlen) & (slots - 1);
		while (h[at])
			at = (at + 1) & (slots - 1);
		h[at] = (uint32_t)(i + 1);
	}
	return 0;
}

/* The group of a's type: a new one at the end when there is none yet. */
static int find_group(struct ldif_entry *e, const struct attr_line *a, size_t *ng, size_t *g)
{
	struct attr_group *groups = (struct attr_group *)e->groups.data;
	size_t n = *ng;
	if (n <= LDIF_LINEAR_TYPES) {
		for (size_t i = 0; i < n; i++)
			if (same_type(groups[i].type, groups[i].tlen, a->type, a->tlen)) {
				*g = i;
				return 0;
			}
	} else {
		size_t slots = e->hash.len / sizeof(uint32_t);
		const uint32_t *h = (const uint32_t *)e->hash.data;
		size_t at = type_hash(a->type, a->tlen) & (slots - 1);
		for (; h[at]; at = (at + 1) & (slots - 1))
			if (same_type(groups[h[at] - 1].type, groups[h[at] - 1].tlen, a->type,
			              a->tlen)) {
				*g = h[at] - 1;
				return 0;
			}
	}
	if (e->groups.cap - e->groups.len < sizeof(struct attr_group) &&
	    buf_reserve(&e->groups, sizeof(struct attr_group)) < 0)
		return -1;
	groups = (struct attr_group *)e->groups.data;
	groups[n] = (struct attr_group){a->type, a->tlen, 0, 0};
	e->groups.len += sizeof(struct attr_group);
	*g = n;
	*ng = ++n;
	size_t slots = e->hash.len / sizeof(uint32_t);
	if (n > LDIF_LINEAR_TYPES && (n == LDIF_LINEAR_TYPES + 1 || 2 * n > slots))
		return hash_rebuild(e, groups, n, n == LDIF_LINEAR_TYPES + 1 ? 128 : 2 * slots);
	if (n > LDIF_LINEAR_TYPES) {
		uint32_t *h = (uint32_t *)e->hash.data;
		size_t at = type_hash(a->type, a->tlen) & (slots - 1);
		while (h[at])
			at = (at + 1) & (slots - 1);
		h[at] = (uint32_t)n;
	}
	return 0;
}

int ldif_entry_build_mods(struct ldif_entry *e, size_t nl)
{
	struct attr_line *lines = (struct attr_line *)e->lines.data;
	e->groups.len = 0;
	size_t ng = 0, last = 0;
	for (size_t i = 0; i < nl; i++) {
		struct attr_group *groups = (struct attr_group *)e->groups.data;
		if (ng &&
		    same_type(groups[last].type, groups[last].tlen, lines[i].type, lines[i].tlen))
			lines[i].group = last;
		else if (find_group(e, &lines[i], &ng, &lines[i].group) < 0)
			return -1;
		last = lines[i].group;
		((struct attr_group *)e->groups.data)[last].count++;
	}
	struct attr_group *groups = (struct attr_group *)e->groups.data;
	size_t nv = nl + ng; /* values and each mod's NULL */
	size_t bytes = ng * sizeof(LDAPMod) + (ng + 1) * sizeof(LDAPMod *) +
	               nv * (sizeof(struct berval *) + sizeof(unsigned long)) + ng * sizeof(size_t);
	e->arrays.len = 0;
	if (buf_reserve(&e->arrays, bytes) < 0)
		return -1;
	LDAPMod *mod = (LDAPMod *)e->arrays.data;
	LDAPMod **mods = (LDAPMod **)(mod + ng);
	struct berval **vals = (struct berval **)(mods + ng + 1);
	unsigned long *vlines = (unsigned long *)(vals + nv);
	size_t *vfirst = (size_t *)(vlines + nv);
	size_t off = 0;
	for (size_t g = 0; g < ng; g++) {
		mod[g].mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
		mod[g].mod_type = (char *)groups[g].type;
		mod[g].mod_bvalues = vals + off;
		mods[g] = &mod[g];
		vfirst[g] = groups[g].fill = off;
		off += groups[g].count + 1;
		vals[off - 1] = NULL;
		vlines[off - 1] = 0;
	}
	mods[ng] = NULL;
	for (size_t i = 0; i < nl; i++) {
		size_t at = groups[lines[i].group].fill++;
		vals[at] = &lines[i].val;
		vlines[at] = lines[i].line;
	}
	e->mods = mods;
	e->mod0 = mod;
	e->value_lines = vlines;
	e->value_first = vfirst;
	return 0;
}

unsigned long ldif_entry_value_line(const struct ldif_entry *e, const LDAPMod *mod, int n)
{
	size_t ng = e->groups.len / sizeof(struct attr_group);
	if (!e->mod0 || mod < e->mod0 || mod >= e->mod0 + ng || n < 0)
		return 0;
	size_t g = (size_t)(mod - e->mod0);
	const struct attr_group *groups = (const struct attr_group *)e->groups.data;
	return (size_t)n < groups[g].count ? e->value_lines[e->value_first[g] + (size_t)n] : 0;
}

void ldif_entry_free(struct ldif_entry *e)
{
	struct buf *bufs[] = {&e->bytes, &e->lines, &e->groups, &e->arrays, &e->hash, &e->files};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		buf_free(bufs[i]);
	memset(e, 0, sizeof(*e));
}
