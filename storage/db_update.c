#include "storage/db_update.h"

#include <errno.h>
#include <ldap.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "storage/db_impl.h"
#include "storage/db_passwords.h"
#include "storage/dyngroup_update.h"
#include "storage/entry_index.h"
#include "storage/entry_mods.h"
#include "storage/entry_opattrs.h"
#include "storage/entry_schema.h"
#include "storage/memberof_nested.h"
#include "storage/memberof_update.h"

/* One change being applied; the buffers are freed at its end. */
struct change {
	struct db *db;
	MDB_txn *txn; /* nested in the caller's */
	struct db_update_error *err;
	struct buf ndn, key, rec, old, val, ids, subkeys;
	struct buf opattrs; /* the provider's operational attributes (storage/entry_opattrs.h) */
	struct entry_mods mods;
	struct memberof_scratch ms;
	/* memberof_nested: the entries whose closure the change may move, and whether the
	 * file holds closures at all (storage/memberof_nested.h). */
	struct buf affected;
	bool nested;
	struct dyngroup_scratch dyn; /* dynamic groups (storage/dyngroup_update.h) */
};

__attribute__((format(printf, 3, 4))) static int say(struct change *c, int code, const char *fmt,
                                                     ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* An LMDB error (or ENOMEM) at step what. */
static int lmdb_fail(struct change *c, int rc, const char *what)
{
	c->err->mdb = rc;
	return say(c, LDAP_OTHER, "%s: %s", what, mdb_strerror(db_write_error(c->db, rc)));
}

static int del_pair(MDB_txn *txn, MDB_dbi dbi, const void *k, size_t klen, const void *v,
                    size_t vlen)
{
	MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
	int rc = mdb_del(txn, dbi, &key, v ? &val : NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int put_pair(MDB_txn *txn, MDB_dbi dbi, const void *k, size_t klen, const void *v,
                    size_t vlen, unsigned flags)
{
	MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
	return mdb_put(txn, dbi, &key, &val, flags);
}

static int add_count(struct change *c, long delta)
{
	size_t n;
	int rc = db_entry_count(c->db, db_read_of(c->txn), &n);
	n = (size_t)((long)n + delta);
	return rc ? rc : put_pair(c->txn, c->db->meta, "entries", 7, &n, sizeof(n), 0);
}

/* Reads entry id into c->old, a copy that writes do not move. */
static int read_old(struct change *c, entry_id id, struct entry_view *e)
{
	int rc = db_get_entry(c->db, db_read_of(c->txn), id, e);
	return rc ? rc : memberof_copy_record(e, &c->old);
}

/* The IDs of every entry whose key has key[0..len) as a prefix, but that one, into
 * c->ids, and their keys one after the other into c->subkeys (each after a u16 length). */
static int collect_subtree(struct change *c, const void *key, size_t len)
{
	MDB_cursor *cur;
	MDB_val k = {len, (void *)key}, v;
	c->ids.off = c->ids.len = c->subkeys.off = c->subkeys.len = 0;
	int rc = mdb_cursor_open(c->txn, c->db->dn2id, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (!dn_key_in_subtree(k.mv_data, k.mv_size, key, len))
			break;
		if (k.mv_size == len)
			continue;
		uint16_t kl = (uint16_t)k.mv_size;
		if (v.mv_size != sizeof(entry_id))
			rc = MDB_CORRUPTED;
		else if (buf_append(&c->ids, v.mv_data, sizeof(entry_id)) < 0 ||
		         buf_append(&c->subkeys, &kl, sizeof(kl)) < 0 ||
		         buf_append(&c->subkeys, k.mv_data, k.mv_size) < 0)
			rc = ENOMEM;
		if (rc)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static size_t nids(const struct change *c)
{
	return c->ids.len / sizeof(entry_id);
}

static entry_id id_at(const struct change *c, size_t i)
{
	entry_id id;
	memcpy(&id, c->ids.data + i * sizeof(id), sizeof(id));
	return id;
}

/* Where the first n RDNs of dn[0..len) end (the separating comma), RFC 4514 escapes
 * and LDAPv2 quotes skipped; len when dn has no more RDNs. */
static size_t rdns_end(const unsigned char *dn, size_t len, size_t n)
{
	bool quoted = false;
	for (size_t i = 0; i < len; i++) {
		if (dn[i] == '\\')
			i++;
		else if (dn[i] == '"')
			quoted = !quoted;
		else if (!quoted && (dn[i] == ',' || dn[i] == ';') && --n == 0)
			return i;
	}
	return len;
}

/* Rewrites descendant d (old key okey[0..oklen)) of an entry moved from key oldlen bytes
 * long to c->key, DN dn: its record gets the new key and DN, dn2id follows. */
static int move_one(struct change *c, entry_id d, const unsigned char *okey, size_t oklen,
                    size_t oldlen, const struct berval *dn)
{
	struct entry_view e;
	int rc = read_old(c, d, &e);
	if (rc)
		return rc;
	size_t below = 0; /* RDNs between d and the moved entry */
	for (size_t i = oldlen; i < oklen; i++)
		below += okey[i] == '\0';
	size_t keep = rdns_end(e.dn, e.dnlen, below);
	c->ndn.off = c->ndn.len = c->val.off = c->val.len = 0;
	if (buf_append(&c->ndn, e.dn, keep) < 0 || buf_append(&c->ndn, ",", 1) < 0 ||
	    buf_append(&c->ndn, dn->bv_val, dn->bv_len) < 0 ||
	    buf_append(&c->val, c->key.data, c->key.len) < 0 ||
	    buf_append(&c->val, okey + oldlen, oklen - oldlen) < 0)
		return ENOMEM;
	if (entry_mods_decode(&c->mods, e.attrs, e.attrslen) != 0)
		return MDB_CORRUPTED;
	struct berval ndn = {c->ndn.len, (char *)c->ndn.data};
	c->rec.off = c->rec.len = 0;
	if (entry_encode_uuid(&c->rec, e.parent, e.uuid, c->val.data, c->val.len, &ndn,
	                      c->mods.mods) < 0)
		return ENOMEM;
	if ((rc = put_pair(c->txn, c->db->id2entry, &d, sizeof(d), c->rec.data, c->rec.len, 0)) ||
	    (rc = del_pair(c->txn, c->db->dn2id, okey, oklen, NULL, 0)))
		return rc;
	return put_pair(c->txn, c->db->dn2id, c->val.data, c->val.len, &d, sizeof(d),
	                MDB_NOOVERWRITE);
}

/* Moves every descendant collected in c->ids (all but the first) under the new key. */
static int move_below(struct change *c, size_t oldlen, const struct berval *dn)
{
	const unsigned char *p = c->subkeys.data;
	for (size_t i = 1; i < nids(c); i++) {
		uint16_t kl;
		memcpy(&kl, p, sizeof(kl));
		int rc = move_one(c, id_at(c, i), p + sizeof(kl), kl, oldlen, dn);
		if (rc)
			return rc;
		p += sizeof(kl) + kl;
	}
	return 0;
}

/* Index keys and member values of record e of entry id, added or removed: an entryUUID
 * index's key the UUID the entry answers (its kept one: read before the opattrs table
 * changes when removing, after when adding). */
static int write_keys(struct change *c, entry_id id, const struct entry_view *e, bool add)
{
	struct entry_view kept = {0}, served = *e;
	unsigned char buf[16];
	static const unsigned char none[16];
	int rc = entry_opattrs_get(c->db, db_read_of(c->txn), id, &kept);
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	served.uuid = entry_opattrs_uuid(rc == 0 ? &kept : NULL, e->uuid, buf);
	if (!served.uuid)
		served.uuid = none;
	rc = entry_index_write(c->db, db_write_of(c->txn), id, &served, add, &c->val, c->err->msg,
	                       sizeof(c->err->msg));
	if (rc == ENTRY_INDEX_BAD_VALUE)
		return -LDAP_INVALID_SYNTAX;
	return rc ? rc : memberof_write_dns(c->db, db_write_of(c->txn), id, e, add, &c->ms);
}

/* With nested memberOf: collects, before (unlink) the links of c->ids are taken apart,
 * the entries they and everything below them are; after, adds what is below them now and
 * remakes the closure of each. Direct memberOf: nothing. */
static int nested_pass(struct change *c, bool before)
{
	int rc = 0;
	if (before) {
		c->affected.off = c->affected.len = 0;
		if ((rc = memberof_nested_get(c->db, db_read_of(c->txn), &c->nested)) != 0 ||
		    !c->nested)
			return rc;
		if (buf_append(&c->affected, c->ids.data, c->ids.len) < 0)
			return ENOMEM;
		return memberof_nested_below(c->db, db_read_of(c->txn), &c->affected, &c->ms);
	}
	if (!c->nested)
		return 0;
	if (buf_append(&c->affected, c->ids.data, c->ids.len) < 0)
		return ENOMEM;
	if ((rc = memberof_nested_below(c->db, db_read_of(c->txn), &c->affected, &c->ms)) != 0)
		return rc;
	return memberof_nested_relink(c->db, db_write_of(c->txn), &c->affected, &c->ms, stderr);
}

static int link_all(struct change *c, bool unlink)
{
	int rc = unlink ? nested_pass(c, true) : 0;
	if (rc)
		return rc;
	for (size_t i = 0; i < nids(c); i++) {
		rc = unlink ? memberof_unlink(c->db, db_write_of(c->txn), id_at(c, i), &c->ms)
		            : memberof_link(c->db, db_write_of(c->txn), id_at(c, i), &c->ms);
		if (rc)
			return rc;
	}
	return unlink ? 0 : nested_pass(c, false);
}

/* Stores c->rec as entry id under parent; old is its record before (NULL: a new entry).
 * Returns 0, an LMDB error, or -LDAP code with the message set. */
static int store(struct change *c, entry_id id, entry_id parent, const struct entry_view *old,
                 const struct berval *dn)
{
	bool moved =
	    old && (old->keylen != c->key.len || memcmp(old->key, c->key.data, c->key.len));
	int rc = 0;
	c->ids.off = c->ids.len = c->subkeys.off = c->subkeys.len = 0;
	if (moved && (rc = collect_subtree(c, old->key, old->keylen)) != 0)
		return rc;
	/* The entry itself first in c->ids, then what lies below it. */
	size_t below = c->ids.len;
	if (buf_append(&c->ids, &id, sizeof(id)) < 0)
		return ENOMEM;
	memmove(c->ids.data + sizeof(id), c->ids.data, below);
	memcpy(c->ids.data, &id, sizeof(id));
	if ((rc = dyngroup_update_before(c->db, db_write_of(c->txn), &c->ids, &c->dyn)) != 0)
		return rc;
	if (old && ((rc = link_all(c, true)) || (rc = write_keys(c, id, old, false))))
		return rc;
	if (!old && (rc = nested_pass(c, true)) != 0)
		return rc;
	if (moved && ((rc = del_pair(c->txn, c->db->dn2id, old->key, old->keylen, NULL, 0)) ||
	              (rc = del_pair(c->txn, c->db->children, &old->parent, sizeof(old->parent),
	                             &id, sizeof(id)))))
		return rc;
	if ((rc = put_pair(c->txn, c->db->id2entry, &id, sizeof(id), c->rec.data, c->rec.len, 0)) ||
	    (rc = entry_opattrs_put(c->db, db_write_of(c->txn), id, &c->opattrs)))
		return rc;
	if (!old || moved) {
		if ((rc = put_pair(c->txn, c->db->dn2id, c->key.data, c->key.len, &id, sizeof(id),
		                   MDB_NOOVERWRITE)) ||
		    (rc = put_pair(c->txn, c->db->children, &parent, sizeof(parent), &id,
		                   sizeof(id), MDB_NODUPDATA)))
			return rc;
	}
	struct entry_view e;
	if (entry_parse(c->rec.data, c->rec.len, &e) < 0)
		return MDB_CORRUPTED;
	if ((rc = write_keys(c, id, &e, true)) ||
	    (rc = db_passwords_update(c->db, db_write_of(c->txn), old, &e)))
		return rc;
	if (moved && (rc = move_below(c, old->keylen, dn)))
		return rc;
	/* Before the links: memberOf follows the member values made here. */
	rc = dyngroup_update_after(c->db, db_write_of(c->txn), &c->ids, true, &c->dyn, stderr,
	                           c->err->msg, sizeof(c->err->msg));
	if (rc == DYNGROUP_TOO_LARGE)
		return -LDAP_ADMINLIMIT_EXCEEDED;
	return rc ? rc : link_all(c, false);
}

/* The next entry ID: one more than the highest. */
static int next_id(struct change *c, entry_id *id)
{
	MDB_cursor *cur;
	MDB_val k, v;
	int rc = mdb_cursor_open(c->txn, c->db->id2entry, &cur);
	if (rc)
		return rc;
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	mdb_cursor_close(cur);
	*id = 0;
	if (rc == 0 && k.mv_size == sizeof(*id))
		memcpy(id, k.mv_data, sizeof(*id));
	++*id;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static bool has_objectclass(LDAPMod **mods)
{
	for (int i = 0; mods && mods[i]; i++)
		if (strcasecmp(mods[i]->mod_type, "objectClass") == 0)
			return true;
	return false;
}

/* Checks the DN and the attributes, and encodes the record into c->rec. */
static int prepare(struct change *c, const unsigned char uuid[16], const struct berval *dn,
                   const unsigned char *attrs, size_t attrslen, unsigned flags, entry_id parent)
{
	int rc = entry_mods_decode(&c->mods, attrs, attrslen);
	if (rc == -2)
		return lmdb_fail(c, ENOMEM, "decoding attributes");
	if (rc < 0)
		return say(c, LDAP_PROTOCOL_ERROR,
		           "entry \"%s\": attributes are not a BER "
		           "PartialAttributeList",
		           dn->bv_val);
	if (!has_objectclass(c->mods.mods))
		return say(c, LDAP_OBJECT_CLASS_VIOLATION, "entry \"%s\" has no objectClass",
		           dn->bv_val);
	char why[400];
	struct schema_fault fault;
	if (!(flags & DB_UPDATE_NO_SCHEMA) &&
	    entry_schema_check(c->mods.mods, &fault, why, sizeof(why)) < 0)
		return say(c, LDAP_OBJECT_CLASS_VIOLATION, "entry \"%s\": %s", dn->bv_val, why);
	/* Before they are dropped: the provider's timestamps, kept beside the entry. */
	if (c->db->has_opattrs && entry_opattrs_encode(c->mods.mods, uuid, &c->opattrs) < 0)
		return lmdb_fail(c, ENOMEM, "operational attributes");
	if (entry_mods_canonical(c->mods.mods, &c->mods.names) < 0)
		return lmdb_fail(c, ENOMEM, "naming attributes");
	c->rec.off = c->rec.len = 0;
	if (entry_encode_uuid(&c->rec, parent, uuid, c->key.data, c->key.len, dn, c->mods.mods) < 0)
		return say(c, LDAP_ADMINLIMIT_EXCEEDED, "entry \"%s\" is too large to encode",
		           dn->bv_val);
	if (c->rec.len > ENTRY_MAX_BYTES)
		return say(c, LDAP_ADMINLIMIT_EXCEEDED,
		           "entry \"%s\" is too large: %zu bytes encoded, more than %d (16 MiB)",
		           dn->bv_val, c->rec.len, ENTRY_MAX_BYTES);
	return 0;
}

/* Where the entry named c->key goes: its parent's ID. */
static int find_parent(struct change *c, const struct berval *dn, entry_id *parent)
{
	const struct buf *sk = &c->db->suffix_key;
	*parent = 0;
	if (!dn_key_in_subtree(c->key.data, c->key.len, sk->data, sk->len))
		return say(c, LDAP_UNWILLING_TO_PERFORM, "DN \"%s\" is outside the suffix \"%.*s\"",
		           dn->bv_val, (int)c->db->suffix.len, (char *)c->db->suffix.data);
	if (c->key.len == sk->len)
		return 0;
	size_t plen = dn_key_parent_len(c->key.data, c->key.len);
	int rc = db_dn2id(c->db, db_read_of(c->txn), c->key.data, plen, parent);
	if (rc == MDB_NOTFOUND)
		return say(c, LDAP_NO_SUCH_OBJECT, "parent entry of \"%s\" does not exist",
		           dn->bv_val);
	return rc ? lmdb_fail(c, rc, "looking up the parent") : 0;
}

static int put_change(struct change *c, const unsigned char uuid[16], const struct berval *dn,
                      const unsigned char *attrs, size_t attrslen, unsigned flags)
{
	if (dn_normalize(dn->bv_val, dn->bv_len, &c->ndn, &c->key) < 0 || c->key.len == 0)
		return say(c, LDAP_INVALID_DN_SYNTAX, "invalid DN \"%s\"", dn->bv_val);
	if (c->key.len > db_max_dn_key(c->db))
		return say(c, LDAP_ADMINLIMIT_EXCEEDED,
		           "entry \"%.200s...\": its DN is %zu bytes as a key, more than the %zu "
		           "minidir can store (LMDB's key size)",
		           dn->bv_val, c->key.len, db_max_dn_key(c->db));
	entry_id id = 0, parent, other;
	int rc = find_parent(c, dn, &parent);
	if (rc)
		return rc;
	if ((rc = db_uuid2id(c->db, db_read_of(c->txn), uuid, &id)) != 0 && rc != MDB_NOTFOUND)
		return lmdb_fail(c, rc, "looking up the entryUUID");
	bool exists = rc == 0;
	if ((rc = db_dn2id(c->db, db_read_of(c->txn), c->key.data, c->key.len, &other)) == 0 &&
	    (!exists || other != id))
		return say(c, LDAP_ALREADY_EXISTS, "entry \"%s\" exists with another entryUUID",
		           dn->bv_val);
	if (rc && rc != MDB_NOTFOUND)
		return lmdb_fail(c, rc, "looking up the DN");
	struct entry_view old;
	if (exists && (rc = read_old(c, id, &old)) != 0)
		return lmdb_fail(c, rc, "reading the entry");
	if (exists && (old.keylen != c->key.len || memcmp(old.key, c->key.data, c->key.len))) {
		if (old.parent == 0)
			return say(c, LDAP_UNWILLING_TO_PERFORM,
			           "the suffix entry cannot be renamed");
		if (dn_key_in_subtree(c->key.data, c->key.len, old.key, old.keylen))
			return say(c, LDAP_UNWILLING_TO_PERFORM,
			           "entry cannot move to \"%s\", below itself", dn->bv_val);
	}
	if ((rc = prepare(c, uuid, dn, attrs, attrslen, flags, parent)) != 0)
		return rc;
	if (!exists && ((rc = next_id(c, &id)) ||
	                (rc = put_pair(c->txn, c->db->uuid2id, uuid, 16, &id, sizeof(id), 0)) ||
	                (rc = add_count(c, 1))))
		return lmdb_fail(c, rc, "adding the entry");
	rc = store(c, id, parent, exists ? &old : NULL, dn);
	if (rc == -LDAP_INVALID_SYNTAX || rc == -LDAP_ADMINLIMIT_EXCEEDED)
		return -rc;
	if (rc == MDB_KEYEXIST)
		return say(c, LDAP_ALREADY_EXISTS, "an entry below \"%s\" would take a DN in use",
		           dn->bv_val);
	return rc ? lmdb_fail(c, rc, "storing the entry") : 0;
}

static void change_free(struct change *c)
{
	buf_free(&c->ndn);
	buf_free(&c->key);
	buf_free(&c->rec);
	buf_free(&c->old);
	buf_free(&c->val);
	buf_free(&c->ids);
	buf_free(&c->subkeys);
	buf_free(&c->opattrs);
	buf_free(&c->affected);
	entry_mods_free(&c->mods);
	memberof_scratch_free(&c->ms);
	dyngroup_scratch_free(&c->dyn);
}

/* Runs fn in a transaction nested in txn: committed when it returns 0, else aborted. */
static int nested(struct change *c, MDB_txn *txn, int (*fn)(struct change *c, void *arg), void *arg)
{
	c->err->mdb = 0;
	c->err->msg[0] = '\0';
	int rc = mdb_txn_begin(c->db->env, txn, 0, &c->txn);
	if (rc)
		return lmdb_fail(c, rc, "starting a nested transaction");
	rc = fn(c, arg);
	if (rc == 0 && (rc = mdb_txn_commit(c->txn)) != 0)
		rc = lmdb_fail(c, rc, "committing the change");
	else if (rc)
		mdb_txn_abort(c->txn);
	c->txn = NULL;
	change_free(c);
	return rc;
}

struct put_args {
	const unsigned char *uuid;
	struct berval dn;
	const unsigned char *attrs;
	size_t attrslen;
	unsigned flags;
};

static int run_put(struct change *c, void *arg)
{
	struct put_args *a = arg;
	return put_change(c, a->uuid, &a->dn, a->attrs, a->attrslen, a->flags);
}

int db_update_put(struct db *db, struct db_write *wr, const unsigned char uuid[16], const char *dn,
                  size_t dnlen, const unsigned char *attrs, size_t attrslen, unsigned flags,
                  struct db_update_error *err)
{
	MDB_txn *txn = db_write_txn(wr);
	struct change c = {.db = db, .err = err};
	struct buf name = {0}; /* the DN NUL-terminated, for messages */
	if (buf_append(&name, dn, dnlen) < 0 || buf_append(&name, "", 1) < 0) {
		buf_free(&name);
		err->mdb = ENOMEM;
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return LDAP_OTHER;
	}
	struct put_args a = {uuid, {dnlen, (char *)name.data}, attrs, attrslen, flags};
	int rc = nested(&c, txn, run_put, &a);
	buf_free(&name);
	return rc;
}

static int delete_change(struct change *c, const unsigned char *uuid, unsigned flags)
{
	entry_id id;
	struct entry_view e;
	int rc = db_uuid2id(c->db, db_read_of(c->txn), uuid, &id);
	char text[37];
	entry_uuid_format(uuid, text);
	if (rc == MDB_NOTFOUND)
		return say(c, LDAP_NO_SUCH_OBJECT, "no entry has entryUUID %s", text);
	if (rc || (rc = read_old(c, id, &e)) || (rc = collect_subtree(c, e.key, e.keylen)))
		return lmdb_fail(c, rc, "reading the entry");
	if (nids(c) && !(flags & DB_UPDATE_SUBTREE))
		return say(c, LDAP_NOT_ALLOWED_ON_NONLEAF, "entry \"%.*s\" has entries below it",
		           (int)e.dnlen, (const char *)e.dn);
	if (buf_append(&c->ids, &id, sizeof(id)) < 0)
		return lmdb_fail(c, ENOMEM, "deleting");
	if ((rc = dyngroup_update_before(c->db, db_write_of(c->txn), &c->ids, &c->dyn)) != 0 ||
	    (rc = link_all(c, true)) != 0)
		return lmdb_fail(c, rc, "memberOf");
	for (size_t i = 0; i < nids(c); i++) {
		entry_id d = id_at(c, i);
		if ((rc = read_old(c, d, &e)) || (rc = write_keys(c, d, &e, false)) ||
		    (rc = db_passwords_update(c->db, db_write_of(c->txn), &e, NULL)) ||
		    (rc = del_pair(c->txn, c->db->dn2id, e.key, e.keylen, NULL, 0)) ||
		    (rc = del_pair(c->txn, c->db->children, &e.parent, sizeof(e.parent), &d,
		                   sizeof(d))) ||
		    (rc = del_pair(c->txn, c->db->uuid2id, e.uuid, 16, NULL, 0)) ||
		    (rc = del_pair(c->txn, c->db->id2entry, &d, sizeof(d), NULL, 0)) ||
		    (rc = entry_opattrs_delete(c->db, db_write_of(c->txn), d)))
			return rc == -LDAP_INVALID_SYNTAX ? LDAP_INVALID_SYNTAX
			                                  : lmdb_fail(c, rc, "deleting");
	}
	if ((rc = add_count(c, -(long)nids(c))) != 0)
		return lmdb_fail(c, rc, "counting");
	if ((rc = dyngroup_update_after(c->db, db_write_of(c->txn), &c->ids, false, &c->dyn, stderr,
	                                NULL, 0)))
		return lmdb_fail(c, rc, "dynamic groups");
	if (c->nested &&
	    (rc = memberof_nested_relink(c->db, db_write_of(c->txn), &c->affected, &c->ms, stderr)))
		return lmdb_fail(c, rc, "memberOf");
	return 0;
}

struct delete_args {
	const unsigned char *uuid;
	unsigned flags;
};

static int run_delete(struct change *c, void *arg)
{
	struct delete_args *a = arg;
	return delete_change(c, a->uuid, a->flags);
}

int db_update_delete(struct db *db, struct db_write *wr, const unsigned char uuid[16],
                     unsigned flags, struct db_update_error *err)
{
	MDB_txn *txn = db_write_txn(wr);
	struct change c = {.db = db, .err = err};
	struct delete_args a = {uuid, flags};
	return nested(&c, txn, run_delete, &a);
}

static int meta_get_value(const struct db *db, MDB_txn *txn, const char *name, const void **data,
                          size_t *len)
{
	MDB_val k = {strlen(name), (void *)name}, v;
	int rc = mdb_get(txn, db->meta, &k, &v);
	if (rc == 0) {
		*data = v.mv_data;
		*len = v.mv_size;
	}
	return rc;
}

/* A meta value of the replica's (name: "cookie", "skipped", "source"); len 0 removes it. */
static int set_meta(struct db *db, struct db_write *wr, const char *name, const void *data,
                    size_t len)
{
	MDB_txn *txn = db_write_txn(wr);
	if (len == 0)
		return del_pair(txn, db->meta, name, strlen(name), NULL, 0);
	return put_pair(txn, db->meta, name, strlen(name), data, len, 0);
}

int db_update_set_cookie(struct db *db, struct db_write *wr, const void *data, size_t len)
{
	return set_meta(db, wr, "cookie", data, len);
}

int db_update_get_cookie(const struct db *db, struct db_read *rd, const void **data, size_t *len)
{
	MDB_txn *txn = db_read_txn(rd);
	return meta_get_value(db, txn, "cookie", data, len);
}

int db_update_set_skipped(struct db *db, struct db_write *wr, const void *data, size_t len)
{
	return set_meta(db, wr, "skipped", data, len);
}

int db_update_get_skipped(const struct db *db, struct db_read *rd, const void **data, size_t *len)
{
	MDB_txn *txn = db_read_txn(rd);
	return meta_get_value(db, txn, "skipped", data, len);
}

int db_update_set_source(struct db *db, struct db_write *wr, const void *data, size_t len)
{
	return set_meta(db, wr, "source", data, len);
}

int db_update_get_source(const struct db *db, struct db_read *rd, const void **data, size_t *len)
{
	return meta_get_value(db, db_read_txn(rd), "source", data, len);
}
