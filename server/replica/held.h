/*
 * Entries a refresh brought before their parent (server/replica/apply.c holds them): a
 * provider's refresh comes in its entry-ID order, so an older entry moved under a newer
 * one (slapd's ITS#6472 case) arrives before its new parent. Each is kept as it came
 * (entryUUID, DN, the PartialAttributeList's content) until the parent has been stored
 * or the refresh ends.
 *
 * The set owns its copies: held_add copies what it is given (borrowed for the call);
 * held_take hands one entry's buffers to the caller (who frees them with
 * held_entry_free); held_clear frees all. Thread rules: the consumer's thread only.
 */
#ifndef MINIDIR_SERVER_REPLICA_HELD_H
#define MINIDIR_SERVER_REPLICA_HELD_H

#include <stddef.h>

#include "protocol/sync.h"

struct held_entry {
	unsigned char uuid[SYNC_UUID_LEN];
	char *dn;             /* NUL-terminated */
	unsigned char *attrs; /* attrslen bytes */
	size_t attrslen;
};

struct held_set {
	struct held_entry *v;
	size_t n, cap;
	size_t bytes; /* of DNs and attributes held */
};

/* Adds a copy of the entry. 0, or -1 when out of memory (the set is unchanged). */
int held_add(struct held_set *s, const unsigned char *uuid, const char *dn,
             const unsigned char *attrs, size_t attrslen);

/* Removes entry i (i < s->n) into *out, the order of the others kept. */
void held_take(struct held_set *s, size_t i, struct held_entry *out);

/*
 * Offers every entry, in order, to take(arg, entry): one it took (1) is freed and leaves
 * the set, one it left (0) stays, the order of those that stay kept; -1 stops there (the
 * entries not yet offered stay). One pass, each entry moved at most once: a refresh that
 * held 50,000 entries (an Active Directory full load brings most objects before their
 * parent) does not move the rest at every one stored, as held_take would. Returns the
 * number taken, or -1.
 */
long held_sweep(struct held_set *s, int (*take)(void *arg, struct held_entry *e), void *arg);

void held_entry_free(struct held_entry *e);

/* Frees every entry; the set is empty and reusable (its array freed too). */
void held_clear(struct held_set *s);

#endif
