/* An entry's RDN values added to its attributes, as slapadd does (see entry_rdn.h). */
#include "storage/entry_rdn.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "protocol/match.h"
#include "protocol/schema.h"

/* An AVA of the RDN the entry lacks. */
struct missing {
	struct berval type, value; /* in the parsed RDN */
	int mod;                   /* the index in mods of its attribute, or -1: a new one */
	size_t first;              /* the first missing AVA of the same attribute */
};

/* Whether type (a mod's) is the attribute attr[0..alen) (at: its schema type, or NULL),
 * without options. */
static bool same_attr(const char *type, size_t tlen, const char *attr, size_t alen,
                      const struct schema_attr *at)
{
	if (memchr(type, ';', tlen))
		return false;
	if (tlen == alen && strncasecmp(type, attr, alen) == 0)
		return true;
	return at && schema_attr_find(type, tlen) == at;
}

/* Whether m holds v: the same bytes, or the same normal form under rule. */
static bool has_value(struct entry_rdn *r, enum match_rule rule, const LDAPMod *m,
                      const struct berval *v)
{
	struct berval **vals = m->mod_bvalues;
	for (int i = 0; vals && vals[i]; i++)
		if (vals[i]->bv_len == v->bv_len &&
		    (v->bv_len == 0 || memcmp(vals[i]->bv_val, v->bv_val, v->bv_len) == 0))
			return true;
	r->norm.len = r->norm.off = 0;
	if (rule == MATCH_NONE || !vals ||
	    match_normalize(rule, v->bv_val, v->bv_len, &r->norm) < 0)
		return false;
	size_t n = r->norm.len;
	for (int i = 0; vals[i]; i++) {
		r->norm.len = n;
		if (match_normalize(rule, vals[i]->bv_val, vals[i]->bv_len, &r->norm) == 0 &&
		    r->norm.len - n == n && memcmp(r->norm.data, r->norm.data + n, n) == 0)
			return true;
	}
	return false;
}

/* The AVAs of rdn that mods[0..n) lack, into r->miss; their count, or -1 (out of memory). */
static long find_missing(struct entry_rdn *r, LDAPRDN rdn, LDAPMod **mods, int n)
{
	size_t nmiss = 0;
	for (int i = 0; rdn[i]; i++) {
		const LDAPAVA *ava = rdn[i];
		if (ava->la_flags & LDAP_AVA_BINARY)
			continue;
		const struct berval *a = &ava->la_attr;
		const struct schema_attr *at = schema_attr_find(a->bv_val, a->bv_len);
		int j = 0;
		while (j < n && !same_attr(mods[j]->mod_type, strlen(mods[j]->mod_type), a->bv_val,
		                           a->bv_len, at))
			j++;
		if (j < n &&
		    has_value(r, match_rule_for(a->bv_val, a->bv_len), mods[j], &ava->la_value))
			continue;
		struct missing m = {*a, ava->la_value, j < n ? j : -1, nmiss};
		const struct missing *prev = (const struct missing *)r->miss.data;
		for (size_t k = 0; k < nmiss && m.first == nmiss; k++)
			if (m.mod >= 0 ? prev[k].mod == m.mod
			               : prev[k].mod < 0 &&
			                     same_attr(prev[k].type.bv_val, prev[k].type.bv_len,
			                               a->bv_val, a->bv_len, at))
				m.first = prev[k].first;
		if (buf_append(&r->miss, &m, sizeof(m)) < 0)
			return -1;
		nmiss++;
	}
	return (long)nmiss;
}

/* Builds the new mods array in r from mods[0..n) and the nmiss AVAs missing: one copy per
 * attribute that gains values (a new one for an attribute the entry lacks). */
static int build(struct entry_rdn *r, LDAPMod **mods, int n, size_t nmiss, LDAPMod ***out)
{
	const struct missing *miss = (const struct missing *)r->miss.data;
	size_t ncopies = 0, nnew = 0, nvals = nmiss, bytes = 0;
	for (size_t k = 0; k < nmiss; k++) {
		bytes += miss[k].value.bv_len + 1;
		if (miss[k].first != k)
			continue;
		ncopies++;
		nvals++; /* its NULL */
		if (miss[k].mod < 0) {
			nnew++;
			bytes += miss[k].type.bv_len + 1;
		}
		for (struct berval **v = miss[k].mod >= 0 ? mods[miss[k].mod]->mod_bvalues : NULL;
		     v && *v; v++)
			nvals++;
	}
	size_t nlist = (size_t)n + nnew + 1;
	size_t size = ncopies * (sizeof(LDAPMod) + sizeof(LDAPMod *)) + nlist * sizeof(LDAPMod *) +
	              nvals * sizeof(struct berval *) + nmiss * sizeof(struct berval);
	r->arrays.len = r->arrays.off = r->bytes.len = r->bytes.off = 0;
	if (buf_reserve(&r->arrays, size) < 0 || buf_reserve(&r->bytes, bytes) < 0)
		return -1;
	/* One block, pointers first-sized: LDAPMod copies, their originals, the list, the
	 * value arrays, the added bervals. */
	LDAPMod *copies = (LDAPMod *)r->arrays.data;
	const LDAPMod **orig = (const LDAPMod **)(copies + ncopies);
	LDAPMod **list = (LDAPMod **)(orig + ncopies);
	struct berval **vals = (struct berval **)(list + nlist);
	struct berval *added = (struct berval *)(vals + nvals);
	char *w = (char *)r->bytes.data;
	for (int i = 0; i < n; i++)
		list[i] = mods[i];
	size_t c = 0, end = (size_t)n;
	for (size_t k = 0; k < nmiss; k++) {
		if (miss[k].first != k)
			continue;
		LDAPMod *m = &copies[c];
		size_t nv = 0;
		if (miss[k].mod >= 0) {
			*m = *mods[miss[k].mod];
			orig[c] = mods[miss[k].mod];
			list[miss[k].mod] = m;
			for (struct berval **v = orig[c]->mod_bvalues; v && *v; v++)
				vals[nv++] = *v;
		} else {
			memcpy(w, miss[k].type.bv_val, miss[k].type.bv_len);
			w[miss[k].type.bv_len] = '\0';
			m->mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
			m->mod_type = w;
			w += miss[k].type.bv_len + 1;
			orig[c] = NULL;
			list[end++] = m;
		}
		for (size_t i = k; i < nmiss; i++) {
			if (miss[i].first != k)
				continue;
			memcpy(w, miss[i].value.bv_val, miss[i].value.bv_len);
			w[miss[i].value.bv_len] = '\0';
			*added = (struct berval){miss[i].value.bv_len, w};
			w += miss[i].value.bv_len + 1;
			vals[nv++] = added++;
		}
		vals[nv++] = NULL;
		m->mod_bvalues = vals;
		vals += nv;
		c++;
	}
	list[end] = NULL;
	r->copies = copies;
	r->orig = orig;
	r->ncopies = c;
	*out = list;
	return 0;
}

/*
 * The common case, answered without parsing the RDN: one AVA, no character an escape or
 * a multi-valued RDN could hide behind, and the entry holds its value as written in the
 * attribute named as written (bytes equal: equal under any rule). False: parse it.
 */
static bool plain_rdn_present(const char *dn, LDAPMod **mods)
{
	size_t tlen = strcspn(dn, "=,+\\\"");
	if (dn[tlen] != '=' || tlen == 0)
		return false;
	const char *v = dn + tlen + 1;
	size_t vlen = strcspn(v, ",+\\\"<>;#=");
	if ((v[vlen] != ',' && v[vlen] != '\0') || vlen == 0 || v[0] == ' ' || v[vlen - 1] == ' ')
		return false;
	for (int i = 0; mods && mods[i]; i++) {
		const char *t = mods[i]->mod_type;
		if (strncasecmp(t, dn, tlen) != 0 || t[tlen] != '\0')
			continue;
		for (struct berval **b = mods[i]->mod_bvalues; b && *b; b++)
			if ((*b)->bv_len == vlen && memcmp((*b)->bv_val, v, vlen) == 0)
				return true;
		return false;
	}
	return false;
}

int entry_rdn_complete(struct entry_rdn *r, const char *dn, LDAPMod **mods, LDAPMod ***out)
{
	*out = mods;
	r->ncopies = 0;
	if (plain_rdn_present(dn, mods))
		return 0;
	size_t len = strlen(dn);
	/* libldap may point the AVAs into its input: a copy it may keep pointing into. */
	r->text.len = r->text.off = 0;
	if (len == 0 || buf_append(&r->text, dn, len + 1) < 0)
		return -1;
	struct berval bv = {len, (char *)r->text.data};
	LDAPRDN rdn = NULL;
	char *next = NULL;
	if (ldap_bv2rdn(&bv, &rdn, &next, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS || !rdn)
		return -1;
	int n = 0;
	while (mods && mods[n])
		n++;
	r->miss.len = r->miss.off = 0;
	long nmiss = find_missing(r, rdn, mods, n);
	int rc = nmiss < 0 ? -1 : nmiss == 0 ? 0 : build(r, mods, n, (size_t)nmiss, out);
	ldap_rdnfree(rdn);
	return rc;
}

const LDAPMod *entry_rdn_original(const struct entry_rdn *r, const LDAPMod *mod)
{
	if (r->ncopies && mod >= r->copies && mod < r->copies + r->ncopies)
		return r->orig[mod - r->copies];
	return mod;
}

void entry_rdn_free(struct entry_rdn *r)
{
	struct buf *bufs[] = {&r->arrays, &r->bytes, &r->norm, &r->text, &r->miss};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		buf_free(bufs[i]);
	memset(r, 0, sizeof(*r));
}
