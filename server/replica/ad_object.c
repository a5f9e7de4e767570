/* An object an Active Directory DC sent, applied to the replica: see ad_object.h. */
#include "server/replica/ad_object.h"
#include "server/replica/ds389.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/dn.h"
#include "protocol/sync.h"
#include "protocol/tlv.h"
#include "server/log.h"
#include "storage/db_update.h"

void ad_scratch_free(struct ad_scratch *s)
{
	merged_free(&s->m);
	merged_free(&s->gm);
	buf_free(&s->rec);
	buf_free(&s->out);
	buf_free(&s->set);
	buf_free(&s->seq);
	buf_free(&s->grec);
	buf_free(&s->ids);
	buf_free(&s->key);
	buf_free(&s->vkey);
}

/* db_foreach_group's fn: the group's ID into the buf. */
static int collect_group(entry_id group, void *arg)
{
	return buf_append(arg, &group, sizeof(group)) < 0 ? 1 : 0;
}

/*
 * The groups whose member values name entry id (renamed to new_dn, or deleted: new_dn
 * NULL) rewritten: each value naming its DN now (compared in normal form) replaced by
 * new_dn, or removed. A DC changes its groups' links itself when a member is renamed,
 * moved or deleted, but says nothing of it (neither DirSync nor uSNChanged). Called before the
 * entry changes (the links name it until then). 0, or -1 with why set.
 */
static int rewrite_members(struct replica *r, struct ad_scratch *s, entry_id id, const char *new_dn,
                           char *why, size_t cap)
{
	struct db_read *rd = db_write_reads(r->txn);
	struct entry_view e;
	s->ids.off = s->ids.len = s->key.off = s->key.len = 0;
	int rc = db_foreach_group(r->db, rd, id, collect_group, &s->ids);
	if (rc == 0 && (rc = db_get_entry(r->db, rd, id, &e)) == 0 &&
	    dn_normalize((const char *)e.dn, e.dnlen, &s->key, NULL) < 0)
		rc = -1;
	if (rc) {
		snprintf(why, cap, "the groups of a renamed or deleted member: %s",
		         rc < 0 ? "its DN does not parse" : db_error_text(rc));
		return -1;
	}
	for (size_t i = 0; i < s->ids.len / sizeof(entry_id); i++) {
		entry_id g;
		memcpy(&g, s->ids.data + i * sizeof(g), sizeof(g));
		if (db_get_entry(r->db, rd, g, &e) != 0)
			continue; /* gone meanwhile */
		unsigned char uuid[SYNC_UUID_LEN];
		memcpy(uuid, e.uuid, SYNC_UUID_LEN);
		char *gdn = strndup((const char *)e.dn, e.dnlen);
		merged_clear(&s->gm);
		s->grec.off = s->grec.len = 0;
		struct merged_attr *a = NULL;
		int st = !gdn || buf_append(&s->grec, e.attrs, e.attrslen) < 0 ||
		                 merged_add(&s->gm, s->grec.data, s->grec.len, false) < 0 ||
		                 !(a = merged_attr_of(&s->gm, "member", 6))
		             ? -1
		             : 0;
		for (size_t j = 0; st == 0 && j < a->n;) {
			s->vkey.off = s->vkey.len = 0;
			if (dn_normalize(a->v[j].bv_val, a->v[j].bv_len, &s->vkey, NULL) == 0 &&
			    s->vkey.len == s->key.len &&
			    memcmp(s->vkey.data, s->key.data, s->key.len) == 0)
				a->v[j] = a->v[--a->n];
			else
				j++;
		}
		if (st == 0 && new_dn)
			st = merged_value_add(a, new_dn, strlen(new_dn));
		if (st == 0)
			st = merged_encode(&s->gm, &s->out, &s->set, &s->seq);
		if (st < 0)
			snprintf(why, cap, "rewriting the members of %.200s: out of memory",
			         gdn ? gdn : "?");
		else
			st = replica_put(r, uuid, gdn, s->out.data, s->out.len, why, cap);
		free(gdn);
		if (st < 0)
			return -1;
	}
	return 0;
}

bool ad_first_value(const unsigned char *p, size_t len, const char *name, const unsigned char **v,
                    size_t *vlen)
{
	if (!len) /* an object whose attributes the account may not read: p may be NULL */
		return false;
	const unsigned char *end = p + len, *seq, *t, *vals;
	size_t slen, tlen, setlen, nlen = strlen(name);
	unsigned char tag;
	while (p < end && tlv_read(&p, end, &tag, &seq, &slen)) {
		const unsigned char *q = seq, *r;
		if (!tlv_read(&q, seq + slen, &tag, &t, &tlen) ||
		    !tlv_read(&q, seq + slen, &tag, &vals, &setlen))
			return false;
		r = vals;
		if (tlen == nlen && strncasecmp((const char *)t, name, nlen) == 0)
			return tlv_read(&r, vals + setlen, &tag, v, vlen);
	}
	return false;
}

/*
 * Whether the object at dn (attributes a[0..len)) is not one the replica holds: a
 * tombstone (isDeleted: TRUE), or the head of another naming context below the one
 * replicated (instanceType's bit 1, IT_NC_HEAD: the DC sends CN=Configuration under the
 * domain's root, where a search of the domain answers a referral to it, not the object).
 */
static bool not_here(struct replica *r, struct ad_scratch *s, const char *dn,
                     const unsigned char *a, size_t len)
{
	const unsigned char *v;
	size_t vlen;
	if (ad_first_value(a, len, "isDeleted", &v, &vlen) && vlen == 4 &&
	    strncasecmp((const char *)v, "TRUE", 4) == 0)
		return true;
	long long type = ad_first_value(a, len, "instanceType", &v, &vlen)
	                     ? ds389_decimal((const char *)v, vlen)
	                     : -1;
	if (type < 0 || !(type & 1))
		return false;
	s->key.off = s->key.len = s->vkey.off = s->vkey.len = 0;
	const char *base = r->conf->searchbase;
	return dn_normalize(dn, strlen(dn), NULL, &s->key) == 0 &&
	       dn_normalize(base, strlen(base), NULL, &s->vkey) == 0 &&
	       (s->key.len != s->vkey.len || memcmp(s->key.data, s->vkey.data, s->key.len) != 0);
}

/*
 * The DC's attributes a (and the extra lists) merged into s->m (which holds the stored
 * copy's, or nothing), the naming attribute following the DN, encoded into s->out: the
 * entry to store at dn. 0, or -1 with why set.
 */
static int encode_object(struct ad_scratch *s, const char *dn, const char *old_dn,
                         const struct berval *a, const struct berval *extra, size_t n, char *why,
                         size_t cap)
{
	LDAPDN old_rdn = NULL, new_rdn = NULL;
	int st = 0;
	for (size_t i = 0; st == 0 && i <= n; i++) {
		const struct berval *b = i == 0 ? a : &extra[i - 1];
		st = merged_add(&s->m, (const unsigned char *)b->bv_val, b->bv_len, true);
	}
	if (st == 0 && (merged_set_rdn(&s->m, old_dn, dn, &old_rdn, &new_rdn) < 0 ||
	                merged_encode(&s->m, &s->out, &s->set, &s->seq) < 0))
		st = -1;
	if (st < 0)
		snprintf(why, cap, "object %.200s: its attributes or DN do not parse", dn);
	ldap_dnfree(old_rdn);
	ldap_dnfree(new_rdn);
	return st;
}

/*
 * A DC's object at dn (attributes a, whole or a DirSync change) stored: a change merged
 * into the stored copy; renamed or moved, the groups that name it rewritten first, while
 * their links hold. 0, or -1 with why set.
 */
static int store_object(struct replica *r, struct ad_scratch *s, const unsigned char *uuid,
                        const char *dn, const struct berval *a, const struct berval *extra,
                        size_t n, bool whole, char *why, size_t cap)
{
	entry_id id;
	struct entry_view stored;
	struct db_read *rd = db_write_reads(r->txn);
	bool held =
	    db_uuid2id(r->db, rd, uuid, &id) == 0 && db_get_entry(r->db, rd, id, &stored) == 0;
	const unsigned char *v;
	size_t vlen;
	if (!held && !ad_first_value((const unsigned char *)a->bv_val, a->bv_len, "objectClass", &v,
	                             &vlen)) {
		log_error("syncrepl rid=%03d: the DC sent a change of \"%s\", which the replica "
		          "does not hold (skipped before?), without its objectClass: not stored; a "
		          "full refresh (no database file) brings it",
		          r->conf->rid, dn);
		return 0;
	}
	merged_clear(&s->m);
	s->rec.off = s->rec.len = 0;
	/* Copied: the writes below may reuse the page the stored copy is on. */
	char *old_dn = held ? strndup((const char *)stored.dn, stored.dnlen) : NULL;
	int st = held && (!old_dn ||
	                  (!whole && (buf_append(&s->rec, stored.attrs, stored.attrslen) < 0 ||
	                              merged_add(&s->m, s->rec.data, s->rec.len, false) < 0)))
	             ? -1
	             : 0;
	if (st < 0)
		snprintf(why, cap, "object %.200s: out of memory", dn);
	if (st == 0 && held && strcmp(old_dn, dn) != 0)
		st = rewrite_members(r, s, id, dn, why, cap);
	if (st == 0)
		st = encode_object(s, dn, old_dn, a, extra, n, why, cap);
	free(old_dn);
	return st < 0 ? -1 : replica_put(r, uuid, dn, s->out.data, s->out.len, why, cap);
}

int ad_object_apply(struct replica *r, LDAPMessage *e, const struct berval *extra, size_t n,
                    bool whole, struct ad_scratch *s, char *why, size_t cap)
{
	char *dn = ldap_get_dn(r->ld, e);
	struct berval attrs;
	BerElement *ber = NULL;
	const unsigned char *guid;
	size_t glen;
	int status = -1;
	if (!dn || replica_entry_attrs(r->ld, e, &attrs, &ber) < 0) {
		snprintf(why, cap, "an object of the DC's answer does not parse");
		goto out;
	}
	const unsigned char *a = (const unsigned char *)attrs.bv_val;
	if (!ad_first_value(a, attrs.bv_len, "objectGUID", &guid, &glen) || glen != SYNC_UUID_LEN) {
		snprintf(why, cap, "object %.200s: no 16-byte objectGUID (is it asked for?)", dn);
		/* A whole object may hide it from an account that may list the object only. */
		status =
		    whole && !ad_first_value(a, attrs.bv_len, "objectGUID", &guid, &glen) ? 1 : -1;
		goto out;
	}
	unsigned char uuid[SYNC_UUID_LEN];
	memcpy(uuid, guid, SYNC_UUID_LEN);
	if (not_here(r, s, dn, a, attrs.bv_len)) {
		entry_id id;
		struct db_read *rd = db_write_reads(r->txn);
		struct entry_view held;
		status = db_uuid2id(r->db, rd, uuid, &id) == 0 &&
		                 db_get_entry(r->db, rd, id, &held) == 0 &&
		                 rewrite_members(r, s, id, NULL, why, cap) < 0
		             ? -1
		             : replica_delete(r, uuid, why, cap);
		goto out;
	}
	status = store_object(r, s, uuid, dn, &attrs, extra, n, whole, why, cap);
out:
	ber_free(ber, 0);
	ldap_memfree(dn);
	return status;
}
