#include "storage/dyngroup.h"

#include <ldap.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/array.h"
#include "storage/db_impl.h"
#include "storage/dyngroup_url.h"
#include "storage/entry.h"
#include "storage/entry_mods.h"
#include "storage/memberof.h"
#include "storage/dyngroup_update.h"

/* A group and the DNs found for it (each: u32 length, then the DN as stored). */
struct dyn_group {
	entry_id id;
	struct buf found;
	size_t nfound;
};

struct dyn {
	struct db *db;
	MDB_txn *txn;
	struct dyngroup_urls urls;
	struct dyn_group *groups;
	size_t ngroups, cap_groups;
	char *err;
	size_t errlen;
};

/* Records in dynmembers that member (0: the group itself, as dynamic) is group's. */
static int put_dynmember(struct dyn *d, entry_id group, entry_id member)
{
	if (!d->db->has_dynmembers)
		return 0;
	MDB_val k = {sizeof(group), &group}, v = {sizeof(member), &member};
	int rc = mdb_put(d->txn, d->db->dynmembers, &k, &v, MDB_NODUPDATA);
	if (rc && rc != MDB_KEYEXIST) {
		snprintf(d->err, d->errlen, "dynmembers: %s", mdb_strerror(rc));
		return -1;
	}
	return 0;
}

/* First pass: the groups and their URLs. */
static int collect_urls(struct dyn *d, entry_id id, const struct entry_view *e)
{
	if (!dyngroup_is_dynamic(e))
		return 0;
	if (!ARRAY_ROOM_FOR(d->groups, d->cap_groups, d->ngroups, 16)) {
		snprintf(d->err, d->errlen, "out of memory");
		return -1;
	}
	d->groups[d->ngroups++] = (struct dyn_group){.id = id};
	int rc = dyngroup_urls_add(&d->urls, id, d->ngroups - 1, e);
	if (rc == DYNGROUP_URLS_FULL)
		snprintf(d->err, d->errlen,
		         "more than %zu memberURL values (dynamic_groups_max): raise it or remove "
		         "groups",
		         d->urls.max);
	else if (rc < 0)
		snprintf(d->err, d->errlen, "out of memory");
	return rc < 0 ? -1 : put_dynmember(d, id, 0);
}

/* Second pass: entry e (id) against every URL; a match goes into memberdn and the group's
 * found DNs (once per group, however many of its URLs find it), unless a static member
 * value names it already (memberdn holds the static values by now). */
static int match_entry(struct dyn *d, entry_id id, const struct entry_view *e)
{
	size_t last_group = SIZE_MAX;
	for (size_t i = 0; i < d->urls.n; i++) {
		const struct dyngroup_url *u = &d->urls.url[i];
		if (u->group_ix == last_group || !dyngroup_url_finds(&d->urls, u, e))
			continue;
		last_group = u->group_ix;
		struct dyn_group *g = &d->groups[u->group_ix];
		int rc = MDB_NOTFOUND;
		if (e->keylen <= (size_t)mdb_env_get_maxkeysize(d->db->env))
			rc = db_has_pair(d->txn, d->db->memberdn, e->key, e->keylen, &g->id,
			                 sizeof(g->id));
		if (rc == 0)
			continue;
		if (rc != MDB_NOTFOUND) {
			snprintf(d->err, d->errlen, "memberdn: %s", mdb_strerror(rc));
			return -1;
		}
		uint32_t len = (uint32_t)e->dnlen;
		rc = memberof_put_dn(d->db, db_write_of(d->txn), e->key, e->keylen, g->id);
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
		if (put_dynmember(d, g->id, id) < 0)
			return -1;
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
	int rc = db_get_entry(d->db, db_read_of(d->txn), g->id, &e);
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

int dyngroup_resolve(struct db *db, struct db_write *wr, size_t max_urls, FILE *warn,
                     const char *label, char *err, size_t errlen)
{
	MDB_txn *txn = db_write_txn(wr);
	struct dyn d = {.db = db, .txn = txn, .err = err, .errlen = errlen};
	dyngroup_urls_init(&d.urls, max_urls, warn, label);
	int rc = walk(&d, collect_urls);
	if (rc == 0 && d.urls.n > 0)
		rc = walk(&d, match_entry);
	for (size_t i = 0; i < d.ngroups; i++) {
		if (rc == 0 && d.groups[i].nfound > 0)
			rc = rewrite_group(&d, &d.groups[i]);
		buf_free(&d.groups[i].found);
	}
	int mrc = rc == 0 ? db_meta_flag_set(db, wr, DYNGROUP_META, true) : 0;
	if (mrc) {
		snprintf(err, errlen, "meta: %s", mdb_strerror(mrc));
		rc = -1;
	}
	free(d.groups);
	dyngroup_urls_free(&d.urls);
	return rc;
}
