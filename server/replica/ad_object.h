/*
 * One object an Active Directory DC sent, applied to the replica: the part DirSync
 * (dirsync.h) and uSNChanged polling (usn.h) share. The object is named by its
 * objectGUID (the replica's entry UUID). A tombstone (isDeleted: TRUE), or the head of
 * another naming context below the one replicated (instanceType's bit 1), deletes the
 * entry; anything else is stored, a DirSync change merged into the stored copy, a whole
 * object (uSNChanged) replacing it. When the object was renamed or moved (its DN is not
 * the stored one), or deleted, the groups whose member values name it are rewritten
 * first: a DC changes its groups' links itself and says nothing of it.
 *
 * Owns: the scratch's buffers (ad_scratch_free). Borrows: the message and the extra
 * attribute lists, for the call. Thread rules: the consumer's thread (replica.c), inside
 * r's open write transaction.
 */
#ifndef MINIDIR_SERVER_REPLICA_AD_OBJECT_H
#define MINIDIR_SERVER_REPLICA_AD_OBJECT_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "server/replica/apply.h"
#include "server/replica/dirsync_merge.h"

/* A poll's buffers, reused object after object (g*: a group's, rewritten). Zeroed
 * before the first use. */
struct ad_scratch {
	struct merged m, gm;
	struct buf rec, out, set, seq, grec, ids, key, vkey;
};

void ad_scratch_free(struct ad_scratch *s);

/*
 * Applies object e of the DC's answer. whole: e is the whole object (a uSNChanged
 * search), which replaces the stored copy; else a DirSync change merged into it. extra
 * (n of them; may be NULL when 0): further contents of PartialAttributeLists merged
 * after e's, the rest of a ranged attribute's values ("member;range=1500-*"). An object
 * the replica does not hold that comes without its objectClass (a change of one it
 * skipped) is logged and skipped. 0; 1 when a whole object came without objectGUID (the
 * account may list it but not read that: not stored, why says which); or -1 with why
 * set.
 */
int ad_object_apply(struct replica *r, LDAPMessage *e, const struct berval *extra, size_t n,
                    bool whole, struct ad_scratch *s, char *why, size_t cap);

/* The first value of type name (its case ignored) in the content of a
 * PartialAttributeList p[0..len): true with *v, *vlen set, or false. */
bool ad_first_value(const unsigned char *p, size_t len, const char *name, const unsigned char **v,
                    size_t *vlen);

#endif
