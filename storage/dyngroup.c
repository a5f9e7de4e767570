#include "storage/dyngroup.h"

#include <ldap.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/arena.h"
#include "protocol/array.h"
#include "protocol/dn.h"
#include "protocol/filter.h"
#include "storage/entry.h"
#include "storage/entry_mods.h"
#include "storage/memberof.h"

/* One memberURL that parsed: its search. */
struct dyn_url {
	entry_id group;
	size_t group_ix; /* its group in struct dyn.groups */
	size_t base_off; /* its base's reversed key in struct dyn.bases */
	size_t base_len;
	int scope;             /* LDAP_SCOPE_* */
	struct filter *filter; /* in struct dyn.mem */
};

/* A group and the DNs found for it (each: u32 length, then the DN as stored). */
struct dyn_group {
	entry_id id;
	struct buf found;
	size_t nfound;
};

struct dyn {
	struct db *db;
	MDB_txn *txn;
	struct arena mem;
	struct buf bases, scratch;
	struct dyn_url *urls;
	size_t nurls, cap_urls;
	struct dyn_group *groups;
	size_t ngroups, cap_groups;
	size_t max_urls;
	FILE *warn;
	const char *label;
	char *err;
	size_t errlen;
};

static bool has_class(const struct entry_view *e, const char *name)
{
	const unsigned char *p, *end, *v;
	size_t len, vlen;
	if (!entry_find_attr(e, "objectClass", 11, &p, &len))
		return false;
	for (end = p + len; entry_next_value(&p, end, &v, &vlen);)
		if (vlen == strlen(name) && strncasecmp((const char *)v, name, vlen) == 0)
			return true;
	return false;
}

static void warn_url(struct dyn *d, const struct entry_view *e, const unsigned char *v, size_t vlen,
                     const char *why)
{
	if (d->warn)
		fprintf(d->warn, "%s: entry \"%.*s\": memberURL \"%.*s\" ignored: %s\n", d->label,
		        (int)e->dnlen, (const char *)e->dn, (int)vlen, (const char *)v, why);
}

/* Adds one memberURL value of group e (id), or warns and leaves it out. Returns 0 or -1. */
static int add_url(struct dyn *d, entry_id id, const struct entry_view *e, const unsigned char *v,
                   size_t vlen)
{
	char *text = strndup((const char *)v, vlen);
	LDAPURLDesc *lud = NULL;
	if (!text) {
		snprintf(d->err, d->errlen, "out of memory");
		return -1;
	}
	int rc = ldap_url_parse(text, &lud);
	free(text);
	if (rc != LDAP_URL_SUCCESS) {
		warn_url(d, e, v, vlen, "not an LDAP URL");
		return 0;
	}
	size_t off = d->bases.len;
	const char *base = lud->lud_dn ? lud->lud_dn : "";
	struct filter *f = NULL;
	if (dn_normalize(base, strlen(base), NULL, &d->bases) < 0)
		warn_url(d, e, v, vlen, "its base is not a DN");
	else if (!(f = filter_from_string(lud->lud_filter ? lud->lud_filter : "(objectClass=*)",
	                                  &d->mem)))
		warn_url(d, e, v, vlen, "its filter is not a filter");
	int scope = lud->lud_scope == LDAP_SCOPE_DEFAULT ? LDAP_SCOPE_BASE : lud->lud_scope;
	ldap_free_urldesc(lud);
	if (!f) {
		d->bases.len = off;
		return 0;
	}
	if (d->nurls == d->max_urls) {
		snprintf(d->err, d->errlen,
		         "more than %zu memberURL values (dynamic_groups_max): raise it or remove "
		         "groups",
		         d->max_urls);
		return -1;
	}
	if (!ARRAY_ROOM_FOR(d->urls, d->cap_urls, d->nurls, 16)) {
		snprintf(d->err, d->errlen, "out of memory");
		return -1;
	}
	d->urls[d->nurls++] =
	    (struct dyn_url){id, d->ngroups - 1, off, d->bases.len - off, scope, f};
	return 0;
}

static int add_group(struct dyn *d, entry_id id)
{
	if (!ARRAY_ROOM_FOR(d->groups, d->cap_groups, d->ngroups, 16)) {
		snprintf(d->err, d->errlen, "out of memory");
		return -1;
	}
	d->groups[d->ngroups++] = (struct dyn_group){.id = id};
	return 0;
}

/* First pass: the groups and their URLs. */
static int collect_urls(struct dyn *d, entry_id id, const struct entry_view *e)
{
	const unsigned char *p, *end, *v;
	size_t len, vlen;
	if (!has_class(e, "groupOfURLs") || !entry_find_attr(e, "memberURL", 9, &p, &len))
		return 0;
	if (add_group(d, id) < 0)
		return -1;
	for (end = p + len; entry_next_value(&p, end, &v, &vlen);)
		if (add_url(d, id, e, v, vlen) < 0)
			return -1;
	return 0;
}

static bool in_scope(const struct dyn *d, const struct dyn_url *u, const struct entry_view *e)
{
	const unsigned char *base = (const unsigned char *)d->bases.data + u->base_off;
	if (!dn_key_in_subtree(e->key, e->keylen, base, u->base_len))
		return false;
	switch (u->scope) {
	case LDAP_SCOPE_BASE:
		return e->keylen == u->base_len;
	case LDAP_SCOPE_ONELEVEL:
		return e->keylen > u->base_len &&
		       dn_key_parent_len(e->key, e->keylen) == u->base_len;
	case LDAP_SCOPE_SUBORDINATE:
		return e->keylen > u->base_len;
	default:
		return true;
	}
}

/* Second pass: entry e (id) against every URL; a match goes into memberdn and the group's
 * found DNs (once per group, however many of its URLs find it). */
static int match_entry(struct dyn *d, entry_id id, const struct entry_view *e)
{
	(void)id;
	size_t last_group = SIZE_MAX;
	for (size_t i = 0; i < d->nurls; i++) {
		const struct dyn_url *u = &d->urls[i];
		if (u->group_ix == last_group || !in_scope(d, u, e))
			continue;
		struct filter_ctx ctx = {.dn = e->dn, .dnlen = e->dnlen, .scratch = &d->scratch};
		if (filter_eval_ctx(u->filter, e->attrs, e->attrslen, &ctx) != FILTER_TRUE)
			continue;
		last_group = u->group_ix;
		struct dyn_group *g = &d->groups[u->group_ix];
		uint32_t len = (uint32_t)e->dnlen;
		int rc = memberof_put_dn(d->db, d->txn, e->key, e->keylen, g->id);
		if (rc) {
			snprintf(d->err, d->errlen, "memberdn: %s", mdb_strerror(rc));
			return -1;
		}
		if (buf_append(&g->found, &len, sizeof(len)) < 0 ||
		    buf_append(&g->found, e->dn, e->dnlen) < 0) {
			snprintf(d->err, d->errlen, "out of memory");
			return -1;
		}
		g->nfound++;
	}
	return 0;
}

/* Walks id2entry in txn, calling fn on each entry. */
static int walk(struct dyn *d, int (*fn)(struct dyn *, entry_id, const struct entry_view *))
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc = mdb_cursor_open(d->txn, d->db->id2entry, &cur);
	for (int op = MDB_FIRST; rc == 0; op = MDB_NEXT) {
		struct entry_view e;
		entry_id id;
		if ((rc = mdb_cursor_get(cur, &k, &v, op)) != 0)
			break;
		if (k.mv_size != sizeof(id) || entry_parse(v.mv_data, v.mv_size, &e) < 0) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(&id, k.mv_data, sizeof(id));
		if (fn(d, id, &e) < 0) {
			mdb_cursor_close(cur);
			return -1;
		}
	}
	if (cur)
		mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return 0;
	snprintf(d->err, d->errlen, "reading entries: %s", mdb_strerror(rc));
	return -1;
}

/* The member values found for g, added to its record (and to eq.member if indexed). */
static int rewrite_group(struct dyn *d, struct dyn_group *g)
{
	struct entry_view e;
	struct entry_mods m = {0};
	struct buf rec = {0}, key = {0};
	struct berval *vals = calloc(g->nfound, sizeof(*vals));
	struct berval **vp = calloc(g->nfound + 1, sizeof(*vp));
	LDAPMod **mods = NULL;
	int rc = db_get_entry(d->db, d->txn, g->id, &e);
	if (!vals || !vp || rc || entry_mods_decode(&m, e.attrs, e.attrslen) < 0) {
		snprintf(d->err, d->errlen, "group \"%.*s\": %s", rc ? 0 : (int)e.dnlen,
		         rc ? "" : (const char *)e.dn, rc ? mdb_strerror(rc) : "out of memory");
		rc = -1;
		goto out;
	}
	const unsigned char *p = (const unsigned char *)g->found.data;
	for (size_t i = 0; i < g->nfound; i++) {
		uint32_t len;
		memcpy(&len, p, sizeof(len));
		vals[i] = (struct berval){len, (char *)p + sizeof(len)};
		vp[i] = &vals[i];
		p += sizeof(len) + len;
	}
	size_t n = 0;
	while (m.mods && m.mods[n])
		n++;
	LDAPMod member = {.mod_op = LDAP_MOD_BVALUES, .mod_type = "member", .mod_bvalues = vp};
	if (!(mods = calloc(n + 2, sizeof(*mods)))) {
		snprintf(d->err, d->errlen, "out of memory");
		rc = -1;
		goto out;
	}
	memcpy(mods, m.mods, n * sizeof(*mods));
	mods[n] = &member;
	struct berval dn = {e.dnlen, (char *)e.dn};
	if (entry_encode_uuid(&rec, e.parent, e.uuid, e.key, e.keylen, &dn, mods) < 0 ||
	    rec.len > ENTRY_MAX_BYTES) {
		snprintf(d->err, d->errlen, "group \"%.*s\": %s", (int)e.dnlen, (const char *)e.dn,
		         rec.len > ENTRY_MAX_BYTES ? "its members pass the largest entry (16 MiB)"
		                                   : "out of memory");
		rc = -1;
		goto out;
	}
	const struct db_index *ix = db_index_find(d->db, "member", 6);
	for (size_t i = 0; ix && i < g->nfound && rc == 0; i++) {
		key.len = key.off = 0;
		if (match_normalize(ix->rule, vals[i].bv_val, vals[i].bv_len, &key) < 0)
			continue; /* as import: a value the rule cannot normalize is not indexed */
		MDB_val k = {db_index_keylen(key.len), key.data}, v = {sizeof(g->id), &g->id};
		if ((rc = mdb_put(d->txn, ix->dbi, &k, &v, MDB_NODUPDATA)) == MDB_KEYEXIST)
			rc = 0;
	}
	MDB_val k = {sizeof(g->id), &g->id}, v = {rec.len, rec.data};
	if (rc == 0)
		rc = mdb_put(d->txn, d->db->id2entry, &k, &v, 0);
	if (rc) {
		snprintf(d->err, d->errlen, "group \"%.*s\": %s", (int)e.dnlen, (const char *)e.dn,
		         mdb_strerror(rc));
		rc = -1;
	}
out:
	free(mods);
	free(vals);
	free(vp);
	entry_mods_free(&m);
	buf_free(&rec);
	buf_free(&key);
	return rc;
}

int dyngroup_resolve(struct db *db, MDB_txn *txn, size_t max_urls, FILE *warn, const char *label,
                     char *err, size_t errlen)
{
	struct dyn d = {.db = db,
	                .txn = txn,
	                .max_urls = max_urls,
	                .warn = warn,
	                .label = label,
	                .err = err,
	                .errlen = errlen};
	arena_init(&d.mem, NULL, 0);
	int rc = walk(&d, collect_urls);
	if (rc == 0 && d.nurls > 0)
		rc = walk(&d, match_entry);
	for (size_t i = 0; i < d.ngroups; i++) {
		if (rc == 0 && d.groups[i].nfound > 0)
			rc = rewrite_group(&d, &d.groups[i]);
		buf_free(&d.groups[i].found);
	}
	free(d.groups);
	free(d.urls);
	buf_free(&d.bases);
	buf_free(&d.scratch);
	arena_free(&d.mem);
	return rc;
}
