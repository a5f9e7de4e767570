#include "storage/dyngroup_update.h"

#include <errno.h>
#include <ldap.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/dn.h"
#include "storage/db_impl.h"
#include "storage/dyngroup_url.h"
#include "storage/idset.h"
#include "storage/memberof.h"
#include "storage/memberof_update.h"

void dyngroup_scratch_free(struct dyngroup_scratch *s)
{
	buf_free(&s->before);
	buf_free(&s->groups);
	buf_free(&s->found);
	buf_free(&s->rec);
	buf_free(&s->old);
	buf_free(&s->key);
	buf_free(&s->dns);
}

/* Sets groups to the dynamic groups dynmembers lists. */
static int registered(const struct db *db, MDB_txn *txn, struct buf *groups)
{
	MDB_cursor *cur;
	MDB_val k, v;
	groups->off = groups->len = 0;
	int rc = mdb_cursor_open(txn, db->dynmembers, &cur);
	if (rc)
		return rc;
	for (int op = MDB_FIRST; rc == 0; op = MDB_NEXT_NODUP)
		if ((rc = mdb_cursor_get(cur, &k, &v, op)) == 0 && k.mv_size != sizeof(entry_id))
			rc = MDB_CORRUPTED;
		else if (rc == 0 && buf_append(groups, k.mv_data, k.mv_size) < 0)
			rc = ENOMEM;
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int dynmember(const struct db *db, MDB_txn *txn, entry_id group, entry_id member, bool add)
{
	MDB_val k = {sizeof(group), &group}, v = {sizeof(member), &member};
	int rc = add ? mdb_put(txn, db->dynmembers, &k, &v, MDB_NODUPDATA)
	             : mdb_del(txn, db->dynmembers, &k, &v);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Before-list records: u32 index in ids, the group, then the member's DN (dn_add). */
int dyngroup_update_before(const struct db *db, struct db_write *wr, const struct buf *ids,
                           struct dyngroup_scratch *s)
{
	MDB_txn *txn = db_write_txn(wr);
	s->before.off = s->before.len = 0;
	s->on = false;
	int rc = db->has_dynmembers
	             ? db_meta_flag_get(db, db_write_reads(wr), DYNGROUP_META, &s->on)
	             : 0;
	if (rc || !s->on || (rc = registered(db, txn, &s->groups)) != 0)
		return rc;
	for (size_t g = 0; rc == 0 && g < ids_count(&s->groups); g++) {
		entry_id group = ids_at(&s->groups, g);
		for (size_t i = 0; rc == 0 && i < ids_count(ids); i++) {
			entry_id id = ids_at(ids, i);
			struct entry_view e;
			uint32_t ix = (uint32_t)i;
			rc = db_has_pair(txn, db->dynmembers, &group, sizeof(group), &id,
			                 sizeof(id));
			if (rc == MDB_NOTFOUND) {
				rc = 0;
				continue;
			}
			if (rc == 0 && (rc = db_get_entry(db, db_write_reads(wr), id, &e)) == 0 &&
			    (buf_append(&s->before, &ix, sizeof(ix)) < 0 ||
			     buf_append(&s->before, &group, sizeof(group)) < 0))
				rc = ENOMEM;
			if (rc == 0)
				rc = dyngroup_dn_add(&s->before, e.dn, e.dnlen);
		}
	}
	return rc;
}

/* The DN the before-list gives entry ids[i] in group, or false. *off walks the list: its
 * records are by group, then by i, so a caller asking for one group with i going up reads
 * it once. */
static bool was_member(const struct dyngroup_scratch *s, size_t *off, size_t i, entry_id group,
                       struct berval *dn)
{
	while (*off < s->before.len) {
		uint32_t ix;
		entry_id g;
		size_t next = *off + sizeof(ix) + sizeof(g);
		memcpy(&ix, s->before.data + *off, sizeof(ix));
		memcpy(&g, s->before.data + *off + sizeof(ix), sizeof(g));
		if (!dyngroup_dn_next(&s->before, &next, dn))
			return false;
		if (g == group && ix > i)
			return false;
		*off = next;
		if (g == group && ix == i)
			return true;
	}
	return false;
}

/* Whether a static value of group names key (memberdn holds every value's key). */
static int named_static(const struct db *db, MDB_txn *txn, entry_id group, const void *key,
                        size_t len, bool *named)
{
	*named = false;
	if (len > (size_t)mdb_env_get_maxkeysize(db->env))
		return 0;
	int rc = db_has_pair(txn, db->memberdn, key, len, &group, sizeof(group));
	*named = rc == 0;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The URLs of u with group_ix gi: whether one finds e. */
static bool finds(struct dyngroup_urls *u, size_t gi, const struct entry_view *e)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->url[i].group_ix == gi && dyngroup_url_finds(u, &u->url[i], e))
			return true;
	return false;
}

/* Collects into s->found (IDs) and s->dns (DNs) what url finds in dn2id, but the entries a
 * static value of group names. */
static int search(const struct db *db, MDB_txn *txn, struct dyngroup_urls *u,
                  const struct dyngroup_url *url, entry_id group, struct dyngroup_scratch *s)
{
	MDB_cursor *cur;
	const void *base = u->bases.data + url->base_off;
	MDB_val k = {url->base_len, (void *)base}, v;
	int rc = mdb_cursor_open(txn, db->dn2id, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		entry_id id;
		struct entry_view e;
		bool named;
		if (!dn_key_in_subtree(k.mv_data, k.mv_size, base, url->base_len) ||
		    (url->scope == LDAP_SCOPE_BASE && k.mv_size != url->base_len))
			break;
		if (v.mv_size != sizeof(id)) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(&id, v.mv_data, sizeof(id));
		if ((rc = db_get_entry(db, db_read_of(txn), id, &e)) != 0)
			break;
		if (!dyngroup_url_finds(u, url, &e))
			continue;
		if ((rc = named_static(db, txn, group, e.key, e.keylen, &named)) != 0)
			break;
		if (!named && (buf_append(&s->found, &id, sizeof(id)) < 0 ||
		               (rc = dyngroup_dn_add(&s->dns, e.dn, e.dnlen)) != 0)) {
			rc = ENOMEM;
			break;
		}
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* A put's entry self: its computed members anew (none when it is no dynamic group).
 * others: the other groups' URLs, for the bound. */
static int refresh_group(const struct db *db, MDB_txn *txn, entry_id self,
                         const struct dyngroup_urls *others, struct dyngroup_scratch *s, FILE *warn,
                         char *err, size_t errlen)
{
	MDB_val k = {sizeof(self), &self};
	struct entry_view e;
	int rc = mdb_del(txn, db->dynmembers, &k, NULL);
	if ((rc && rc != MDB_NOTFOUND) || (rc = db_get_entry(db, db_read_of(txn), self, &e)) != 0)
		return rc;
	if (!dyngroup_is_dynamic(&e))
		return 0;
	size_t max = others->max > others->n ? others->max - others->n : 0;
	struct dyngroup_urls u;
	dyngroup_urls_init(&u, max, warn, "dynamic groups");
	rc = dyngroup_urls_add(&u, self, 0, &e);
	if (rc == DYNGROUP_URLS_FULL && warn)
		fprintf(warn,
		        "dynamic groups: entry \"%.*s\": more than %zu memberURL values in all "
		        "(dynamic_groups_max): kept as a static group\n",
		        (int)e.dnlen, (const char *)e.dn, others->max);
	if (rc < 0) {
		dyngroup_urls_free(&u);
		return rc == DYNGROUP_URLS_FULL ? 0 : ENOMEM;
	}
	/* Its DN for a message: the writes below may move the page e points into. */
	char name[256];
	snprintf(name, sizeof(name), "%.*s", (int)e.dnlen, (const char *)e.dn);
	rc = dynmember(db, txn, self, 0, true);
	s->dns.off = s->dns.len = 0;
	struct buf keep = {0}, none = {0};
	for (size_t i = 0; rc == 0 && i < u.n; i++) {
		size_t off = 0;
		struct berval bv;
		s->found.off = s->found.len = 0;
		s->dns.off = s->dns.len = 0;
		if ((rc = search(db, txn, &u, &u.url[i], self, s)) != 0)
			break;
		/* Once, however many of its URLs find it. */
		for (size_t j = 0; rc == 0 && dyngroup_dn_next(&s->dns, &off, &bv); j++) {
			rc = dynmember(db, txn, self, ids_at(&s->found, j), true);
			if (rc == 0)
				rc = dyngroup_dn_add(&keep, bv.bv_val, bv.bv_len);
			else if (rc == MDB_KEYEXIST)
				rc = 0;
		}
	}
	if (rc == 0 && keep.len &&
	    (rc = dyngroup_edit(db, db_write_of(txn), self, &none, &keep, &s->old, &s->rec,
	                        &s->key)) != 0 &&
	    rc == DYNGROUP_TOO_LARGE)
		snprintf(err, errlen, "group \"%s\": its members pass the largest entry (16 MiB)",
		         name);
	buf_free(&keep);
	dyngroup_urls_free(&u);
	return rc;
}

/* Every entry of ids against group (gi in u): its value joins, leaves or follows its DN. */
static int update_members(const struct db *db, MDB_txn *txn, const struct buf *ids,
                          struct dyngroup_urls *u, size_t gi, entry_id group,
                          struct dyngroup_scratch *s, FILE *warn)
{
	struct buf removes = {0}, adds = {0}, gone = {0}, joined = {0};
	int rc = 0;
	size_t before = 0;
	for (size_t i = 0; rc == 0 && i < ids_count(ids); i++) {
		entry_id id = ids_at(ids, i);
		struct berval old;
		struct entry_view e;
		bool was = was_member(s, &before, i, group, &old), now = false, named = false;
		if ((rc = db_get_entry(db, db_read_of(txn), id, &e)) == MDB_NOTFOUND)
			rc = 0;
		else if (rc == 0 && (now = finds(u, gi, &e))) {
			/* Its own value keeps its key; another key may be a static value's. */
			struct buf *key = &s->key;
			key->off = key->len = 0;
			bool same = false;
			if (was && memberof_value_key(&old, false, key) == 0)
				same =
				    key->len == e.keylen && memcmp(key->data, e.key, e.keylen) == 0;
			if (!same)
				rc = named_static(db, txn, group, e.key, e.keylen, &named);
			now = !named;
		}
		if (rc ||
		    (was && now && old.bv_len == e.dnlen && memcmp(old.bv_val, e.dn, e.dnlen) == 0))
			continue;
		if (was && ((rc = dyngroup_dn_add(&removes, old.bv_val, old.bv_len)) != 0 ||
		            (!now && buf_append(&gone, &id, sizeof(id)) < 0)))
			rc = rc ? rc : ENOMEM;
		if (rc == 0 && now &&
		    ((rc = dyngroup_dn_add(&adds, e.dn, e.dnlen)) != 0 ||
		     (!was && buf_append(&joined, &id, sizeof(id)) < 0)))
			rc = rc ? rc : ENOMEM;
	}
	if (rc == 0 && (removes.len || adds.len) &&
	    (rc = dyngroup_edit(db, db_write_of(txn), group, &removes, &adds, &s->old, &s->rec,
	                        &s->key)) == DYNGROUP_TOO_LARGE) {
		struct entry_view g;
		if (warn && db_get_entry(db, db_read_of(txn), group, &g) == 0)
			fprintf(warn,
			        "dynamic groups: group \"%.*s\" would pass the largest entry "
			        "(16 MiB): the entries joining it are left out\n",
			        (int)g.dnlen, (const char *)g.dn);
		joined.len = adds.len = 0;
		rc = removes.len ? dyngroup_edit(db, db_write_of(txn), group, &removes, &adds,
		                                 &s->old, &s->rec, &s->key)
		                 : 0;
	}
	for (size_t i = 0; rc == 0 && i < ids_count(&gone); i++)
		rc = dynmember(db, txn, group, ids_at(&gone, i), false);
	for (size_t i = 0; rc == 0 && i < ids_count(&joined); i++)
		rc = dynmember(db, txn, group, ids_at(&joined, i), true);
	buf_free(&removes);
	buf_free(&adds);
	buf_free(&gone);
	buf_free(&joined);
	return rc;
}

int dyngroup_update_after(const struct db *db, struct db_write *wr, const struct buf *ids, bool put,
                          struct dyngroup_scratch *s, FILE *warn, char *err, size_t errlen)
{
	MDB_txn *txn = db_write_txn(wr);
	if (!s->on)
		return 0;
	entry_id self = put && ids_count(ids) ? ids_at(ids, 0) : 0;
	struct dyngroup_urls u;
	dyngroup_urls_init(&u, db->dynamic_groups_max ? db->dynamic_groups_max : DYNGROUP_MAX_URLS,
	                   NULL, "dynamic groups");
	/* The other groups and their URLs; a group gone takes its rows with it. */
	int rc = registered(db, txn, &s->groups);
	size_t ngroups = ids_count(&s->groups);
	bool *live = calloc(ngroups + 1, sizeof(*live));
	if (rc == 0 && !live)
		rc = ENOMEM;
	for (size_t g = 0; rc == 0 && g < ngroups; g++) {
		entry_id group = ids_at(&s->groups, g);
		struct entry_view e;
		MDB_val k = {sizeof(group), &group};
		if (group == self)
			continue;
		if ((rc = db_get_entry(db, db_write_reads(wr), group, &e)) == MDB_NOTFOUND) {
			if ((rc = mdb_del(txn, db->dynmembers, &k, NULL)) == MDB_NOTFOUND)
				rc = 0;
			continue;
		}
		if (rc == 0 && (rc = dyngroup_urls_add(&u, group, g, &e)) == DYNGROUP_URLS_FULL)
			rc = 0; /* past the bound since it was lowered: left as it is */
		else if (rc < 0)
			rc = ENOMEM;
		live[g] = rc == 0;
	}
	if (rc == 0 && self)
		rc = refresh_group(db, txn, self, &u, s, warn, err, errlen);
	for (size_t g = 0; rc == 0 && g < ngroups; g++)
		if (live[g])
			rc = update_members(db, txn, ids, &u, g, ids_at(&s->groups, g), s, warn);
	free(live);
	dyngroup_urls_free(&u);
	return rc;
}
