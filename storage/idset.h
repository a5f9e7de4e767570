/*
 * A set of entry IDs for the walks through groups (storage/memberof_nested.c,
 * storage/memberof_chain.c): which entries a walk has reached, so that each is followed
 * once however many ways lead to it (cycles included). Open addressing; 0, which is no
 * entry's ID, marks an empty slot. And the two helpers those walks read their lists of
 * IDs (struct buf of entry_id, native order) with.
 *
 * Ownership: the set's slots are malloc'd, freed by idset_free. Thread rules: one
 * thread at a time.
 */
#ifndef MINIDIR_STORAGE_IDSET_H
#define MINIDIR_STORAGE_IDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "protocol/buf.h"
#include "storage/entry.h"

struct idset {
	entry_id *slot;
	size_t cap, n;
};

/* Adds id (not 0) to s; *added says whether it was new. Returns 0 or ENOMEM (s unchanged). */
int idset_add(struct idset *s, entry_id id, bool *added);

/* Frees s's slots; s is an empty set again. */
void idset_free(struct idset *s);

/* The i-th ID of ids (i < ids_count(ids)). */
static inline entry_id ids_at(const struct buf *ids, size_t i)
{
	entry_id id;
	memcpy(&id, ids->data + i * sizeof(id), sizeof(id));
	return id;
}

/* The IDs ids holds. */
static inline size_t ids_count(const struct buf *ids)
{
	return ids->len / sizeof(entry_id);
}

#endif
