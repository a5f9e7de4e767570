/*
 * Operational attributes of stored entries (RFC 4512, 4530, 5020): computed
 * when a search asks for them with "+" or by name, never stored in the entry
 * (entryUUID lives in the record header, or a provider's in the opattrs table).
 */
#include <ldap.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/array.h"
#include "protocol/buf.h"
#include "protocol/response.h"
#include "protocol/schema.h"
#include "protocol/sid.h"
#include "server/ops/access.h"
#include "server/ops/account.h"
#include "server/ops/ops.h"
#include "storage/db_fault.h"
#include "storage/entry_opattrs.h"
#include "storage/entry_schema.h"

/* The groups tokenGroups lists at most: about what a Windows access token holds (1,015
 * SIDs); bounds the walk a client can ask for with one name. */
#define TOKEN_GROUPS_MAX 1024

/* The computed attributes, X(name) each: their names, and the mask of their lengths that
 * filter_uses passes most filter items over by. */
#define OP_ATTR_NAMES(X)                                                                           \
	X("createTimestamp")                                                                       \
	X("modifyTimestamp")                                                                       \
	X("creatorsName")                                                                          \
	X("modifiersName")                                                                         \
	X("structuralObjectClass")                                                                 \
	X("entryDN")                                                                               \
	X("entryUUID")                                                                             \
	X("subschemaSubentry")                                                                     \
	X("hasSubordinates")                                                                       \
	X("numSubordinates")                                                                       \
	X("memberOf")                                                                              \
	X("entryCSN")                                                                              \
	X("pwdChangedTime")                                                                        \
	X("pwdAccountLockedTime")                                                                  \
	X("pwdFailureTime")                                                                        \
	X("pwdHistory")                                                                            \
	X("pwdGraceUseTime")                                                                       \
	X("pwdReset")                                                                              \
	X("pwdPolicySubentry")                                                                     \
	X("pwdStartTime")                                                                          \
	X("pwdEndTime")                                                                            \
	X("pwdLastSuccess")                                                                        \
	X("pwdAccountTmpLockoutEnd")                                                               \
	X("nsAccountLock")                                                                         \
	X("accountUnlockTime")                                                                     \
	X("nsUniqueId")
#define OP_ATTR_NAME(s) s,
#define OP_ATTR_LEN_BIT(s) | FILTER_NAME_LEN_BIT(sizeof(s) - 1)
static const char *const op_attr_names[] = {OP_ATTR_NAMES(OP_ATTR_NAME)};
static const uint64_t op_attr_lens = 0 OP_ATTR_NAMES(OP_ATTR_LEN_BIT);

bool computed_attrs_in_filter(const struct filter *f)
{
	return filter_uses(f, op_attr_names, sizeof(op_attr_names) / sizeof(op_attr_names[0]),
	                   op_attr_lens);
}

int computed_attrs_all(struct buf *out, const struct db *db, struct db_read *txn, entry_id id,
                       const struct entry_view *e, struct access_op *aop)
{
	struct attr_select all = {.all_operational = true};
	return computed_attrs_build(out, &all, db, txn, id, e, aop);
}

bool computed_attrs_requested(const struct attr_select *sel)
{
	if (!sel->all_operational && sel->n == 0)
		return false; /* the common request: user attributes only */
	for (size_t i = 0; i < sizeof(op_attr_names) / sizeof(op_attr_names[0]); i++)
		if (attr_select_wants(sel, op_attr_names[i]))
			return true;
	return sel->ranged || (sel->n && attr_select_named(sel, "tokenGroups"));
}

size_t computed_attrs_all_children(const struct db *db, struct db_read *txn, entry_id id)
{
	return db_child_count(db, txn, id);
}

/*
 * The children of id that aop's client may see: those a one-level search would return.
 * Every child when aop is NULL (a rule's filter, access.c); else as aop's rules say
 * (access.c's visible_children). With first_only it may stop at the first
 * (hasSubordinates).
 */
static size_t count_children(const struct db *db, struct db_read *txn, entry_id id,
                             struct access_op *aop, bool first_only)
{
	return aop ? aop->visible_children(aop, db, txn, id, first_only)
	           : computed_attrs_all_children(db, txn, id);
}

/* memberOf values being gathered: the DNs of the groups, as imported. */
struct groups {
	const struct db *db;
	struct db_read *txn;
	struct berval *dns;
	size_t n, cap;
	bool failed;
};

static int add_group(entry_id group, void *arg)
{
	struct groups *g = arg;
	struct entry_view e;
	if (db_get_entry(g->db, g->txn, group, &e) != 0)
		return 0; /* a group that went missing: nothing to say */
	if (!ARRAY_ROOM_FOR(g->dns, g->cap, g->n, 16)) {
		g->failed = true;
		return 1;
	}
	g->dns[g->n].bv_val = (char *)e.dn; /* into the map: valid for the transaction */
	g->dns[g->n++].bv_len = e.dnlen;
	return 0;
}

/* memberOf (the groups whose member or uniqueMember names the entry), if it has any. */
static int put_member_of(struct buf *out, const struct db *db, struct db_read *txn, entry_id id,
                         bool types_only)
{
	struct groups g = {.db = db, .txn = txn};
	int rc = db_foreach_group(db, txn, id, add_group, &g);
	if (rc == 0 && !g.failed && g.n)
		rc = response_put_attr(out, "memberOf", g.dns, (int)g.n, types_only);
	free(g.dns);
	return rc || g.failed ? -1 : 0;
}

/* tokenGroups' groups being gathered, breadth first: their IDs, a group once. */
struct token_walk {
	entry_id *ids;
	size_t n, cap;
	bool failed;
};

static int add_token_group(entry_id group, void *arg)
{
	struct token_walk *t = arg;
	for (size_t i = 0; i < t->n; i++)
		if (t->ids[i] == group)
			return 0; /* reached twice (a group in two groups, a cycle) */
	if (t->n == TOKEN_GROUPS_MAX)
		return 1; /* as many as a token holds: the rest left out */
	if (!ARRAY_ROOM_FOR(t->ids, t->cap, t->n, 16)) {
		t->failed = true;
		return 1;
	}
	t->ids[t->n++] = group;
	return 0;
}

/* The first value of name in e as a berval pointing into it; false when e has none. */
static bool first_of(const struct entry_view *e, const char *name, struct berval *out)
{
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (!entry_find_attr(e, name, strlen(name), &vals, &vlen) ||
	    !entry_next_value(&vals, vals + vlen, &v, &len))
		return false;
	*out = (struct berval){len, (char *)v};
	return true;
}

/*
 * tokenGroups, as an Active Directory DC constructs it for an entry asked by name: the
 * objectSid of every group it is a member of, groups in groups followed (each once, at
 * most TOKEN_GROUPS_MAX), and of its primary group (its own objectSid with the last
 * sub-authority primaryGroupID: AD lists no member value for it). Nothing when the entry
 * has none of them.
 */
static int put_token_groups(struct buf *out, const struct db *db, struct db_read *txn, entry_id id,
                            const struct entry_view *e, bool types_only)
{
	struct token_walk t = {0};
	/* (a walk cut short by an error answers what it reached) */
	(void)db_foreach_group(db, txn, id, add_token_group, &t);
	for (size_t i = 0; !t.failed && i < t.n && t.n < TOKEN_GROUPS_MAX; i++)
		(void)db_foreach_group(db, txn, t.ids[i], add_token_group, &t);
	struct berval *sids = t.failed ? NULL : calloc(t.n + 1, sizeof(*sids));
	size_t n = 0;
	for (size_t i = 0; sids && i < t.n; i++) {
		struct entry_view g;
		if (db_get_entry(db, txn, t.ids[i], &g) == 0 && first_of(&g, "objectSid", &sids[n]))
			n++;
	}
	/* The primary group: the entry's domain SID and primaryGroupID as the last RID. */
	unsigned char primary[SID_MAX_BYTES];
	struct berval own, rid;
	int64_t r;
	if (sids && first_of(e, "objectSid", &own) && own.bv_len >= 12 &&
	    own.bv_len <= SID_MAX_BYTES && first_of(e, "primaryGroupID", &rid) &&
	    account_integer(&rid, &r) && r >= 0 && r <= 0xffffffff) {
		memcpy(primary, own.bv_val, own.bv_len);
		for (int b = 0; b < 4; b++)
			primary[own.bv_len - 4 + (size_t)b] = (unsigned char)(r >> (8 * b));
		bool listed = false;
		for (size_t i = 0; i < n && !listed; i++)
			listed = sids[i].bv_len == own.bv_len &&
			         memcmp(sids[i].bv_val, primary, own.bv_len) == 0;
		if (!listed)
			sids[n++] = (struct berval){own.bv_len, (char *)primary};
	}
	int rc = sids ? 0 : -1;
	if (rc == 0 && n)
		rc = response_put_attr(out, "tokenGroups", sids, (int)n, types_only);
	free(sids);
	free(t.ids);
	return rc;
}

/* A ";range=FIRST-LAST" option (LAST a number or "*") at p[0..end), the whole of a
 * requested description's options: *first, *last (ULONG_MAX for "*"). False when it is
 * not one. */
static bool range_option(const char *p, const char *end, unsigned long *first, unsigned long *last)
{
	if (end - p < 10 || strncasecmp(p, ";range=", 7) != 0)
		return false;
	char text[48];
	size_t n = (size_t)(end - p - 7);
	if (n >= sizeof(text))
		return false;
	memcpy(text, p + 7, n);
	text[n] = '\0';
	char *dash, *rest;
	*first = strtoul(text, &dash, 10);
	if (dash == text || *dash != '-' || text[0] == '-')
		return false;
	if (strcmp(dash + 1, "*") == 0) {
		*last = ULONG_MAX;
		return true;
	}
	*last = strtoul(dash + 1, &rest, 10);
	return rest != dash + 1 && !*rest && dash[1] != '-' && *last >= *first;
}

/*
 * Ranged retrieval, as Active Directory answers it: a requested "member;range=0-1499"
 * gets the values FIRST..LAST of the entry's member (counted from 0, as stored), sent as
 * "member;range=FIRST-LAST", or "member;range=FIRST-*" when they reach the last value (a
 * client reading a large group a window at a time stops there). A window past the last
 * value sends nothing. Without the option every value goes as usual.
 */
static int put_ranged(struct buf *out, const struct attr_select *sel, const struct entry_view *e)
{
	int rc = 0;
	for (int i = 0; i < sel->n && rc == 0; i++) {
		const char *name = sel->names[i].bv_val, *end = name + sel->names[i].bv_len;
		const char *semi = memchr(name, ';', (size_t)(end - name));
		unsigned long first, last;
		const unsigned char *vals, *v;
		size_t vlen, len, tlen = semi ? (size_t)(semi - name) : 0;
		if (!semi || !range_option(semi, end, &first, &last) ||
		    !attr_gate_allows(sel->gate, name, tlen) ||
		    !entry_find_attr(e, name, tlen, &vals, &vlen))
			continue;
		struct berval *bv = NULL;
		size_t n = 0, cap = 0;
		unsigned long k = 0;
		for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &len);
		     k++) {
			if (k < first || k > last)
				continue;
			if (!ARRAY_ROOM_FOR(bv, cap, n, 64)) {
				rc = -1;
				break;
			}
			bv[n++] = (struct berval){len, (char *)v};
		}
		if (rc == 0 && n) {
			char type[300], upto[24] = "*";
			if (last < k - 1)
				snprintf(upto, sizeof(upto), "%lu", last);
			snprintf(type, sizeof(type), "%.*s;range=%lu-%s",
			         (int)(tlen < 256 ? tlen : 256), name, first, upto);
			rc = response_put_attr(out, type, bv, (int)n, sel->types_only);
		}
		free(bv);
	}
	return rc;
}

/*
 * createTimestamp, modifyTimestamp, creatorsName, modifiersName, entryCSN and the account
 * state (storage/entry_opattrs.h's list): the values
 * kept for the entry (a replica's provider's, an imported LDIF's: storage/entry_opattrs.h);
 * otherwise the import made the entry, and its time and identity are theirs.
 */
static int put_stamps(struct buf *out, const struct attr_select *sel, const struct db *db,
                      const struct entry_view *kept)
{
	int rc = 0;
	for (int i = 0; entry_opattrs_names[i]; i++) {
		if (i == ENTRY_OPATTRS_UUID)
			continue; /* entryUUID: entry_opattrs_uuid, below */
		const char *name = entry_opattrs_names[i];
		/* The rules may hide them as any attribute (pwdHistory holds old hashes). */
		if (!attr_select_wants(sel, name) ||
		    !attr_gate_allows(sel->gate, name, strlen(name)))
			continue;
		struct berval bv[ENTRY_OPATTRS_VALUES_MAX];
		int n = entry_opattrs_values(db, kept, i, bv, ENTRY_OPATTRS_VALUES_MAX);
		if (n)
			rc |= response_put_attr(out, name, bv, n, sel->types_only);
	}
	return rc;
}

int computed_attrs_build(struct buf *out, const struct attr_select *sel, const struct db *db,
                         struct db_read *txn, entry_id id, const struct entry_view *e,
                         struct access_op *aop)
{
	bool to = sel->types_only;
	char text[64];
	struct berval v;
	int rc = 0;
	if (attr_select_wants(sel, "structuralObjectClass")) {
		const struct schema_oc *oc = entry_structural_class(e);
		if (oc) {
			v.bv_val = oc->name;
			v.bv_len = strlen(oc->name);
			rc |= response_put_attr(out, "structuralObjectClass", &v, 1, to);
		}
	}
	struct entry_view kept = {0};
	bool have = entry_opattrs_get(db, txn, id, &kept) == 0;
	rc |= put_stamps(out, sel, db, have ? &kept : NULL);
	if (!sel->sync && attr_select_wants(sel, "entryDN")) {
		v.bv_val = (char *)e->dn;
		v.bv_len = e->dnlen;
		rc |= response_put_attr(out, "entryDN", &v, 1, to);
	}
	unsigned char buf[16];
	const unsigned char *uuid;
	if (attr_select_wants(sel, "entryUUID") &&
	    (uuid = entry_opattrs_uuid(have ? &kept : NULL, e->uuid, buf))) {
		entry_uuid_format(uuid, text);
		v.bv_val = text;
		v.bv_len = strlen(text);
		rc |= response_put_attr(out, "entryUUID", &v, 1, to);
	}
	if (sel->sync) /* replicated: what the provider kept, none computed (response.h) */
		return rc ? -1 : 0;
	if (attr_select_wants(sel, "subschemaSubentry")) {
		v.bv_val = SUBSCHEMA_DN;
		v.bv_len = strlen(SUBSCHEMA_DN);
		rc |= response_put_attr(out, "subschemaSubentry", &v, 1, to);
	}
	if (attr_select_wants(sel, "memberOf"))
		rc |= put_member_of(out, db, txn, id, to);
	if (sel->n && attr_select_named(sel, "tokenGroups")) /* by name only, as AD */
		rc |= put_token_groups(out, db, txn, id, e, to);
	if (sel->ranged)
		rc |= put_ranged(out, sel, e);
	bool has = attr_select_wants(sel, "hasSubordinates"),
	     num = attr_select_wants(sel, "numSubordinates");
	if (has || num) {
		size_t n = count_children(db, txn, id, aop, !num);
		if (has) {
			v.bv_val = n ? "TRUE" : "FALSE";
			v.bv_len = strlen(v.bv_val);
			rc |= response_put_attr(out, "hasSubordinates", &v, 1, to);
		}
		if (num) {
			snprintf(text, sizeof(text), "%zu", n);
			v.bv_val = text;
			v.bv_len = strlen(text);
			rc |= response_put_attr(out, "numSubordinates", &v, 1, to);
		}
	}
	return rc ? -1 : 0;
}
