/*
 * Candidate sets of a search: the IDs storage offers to the filter, read with
 * an LMDB cursor. A candidate set is resumable: its position survives the end
 * of the read transaction, so a search that pauses (full socket, long result)
 * continues in a new transaction exactly after the last ID it returned.
 *
 *   CAND_ONE       a single ID (base scope)
 *   CAND_CHILDREN  the children of an ID (one-level scope)
 *   CAND_SUBTREE   every dn2id key with a given prefix (subtree scope)
 *   CAND_INDEX     the IDs under one key of an equality index
 *   CAND_LIST      the IDs of a sorted array (an in-chain item's answer, memberof_chain.h)
 */
#ifndef MINIDIR_STORAGE_CANDIDATES_H
#define MINIDIR_STORAGE_CANDIDATES_H

#include <stdbool.h>

#include "protocol/buf.h"
#include "storage/cursor_pool.h"
#include "storage/db.h"

enum cand_kind { CAND_ONE, CAND_CHILDREN, CAND_SUBTREE, CAND_INDEX, CAND_LIST };

struct candidates {
	enum cand_kind kind;
	db_table dbi;
	/* subtree: the key prefix; index: the value (borrowed: it must outlive the set) */
	const void *key;
	size_t keylen;
	entry_id parent;      /* children: the parent's ID, their key */
	const entry_id *list; /* list: the IDs (borrowed), keylen of them */
	size_t at;            /* list: the next one's index */
	struct buf pos;       /* subtree: the last key returned */
	entry_id last;        /* one: the ID; children/index: the last ID returned */
	bool started;
	bool done;
	bool positioned;             /* the cursor sits on the last ID returned (this cand_begin) */
	bool single;                 /* index: the key holds one ID, the one returned */
	const struct key_memo *memo; /* index: the file's memo of one-ID keys, or NULL */
	/* Between cand_begin and cand_end: the transaction, and the cursor, taken from pool
	 * when first needed (an index key the memo holds needs none). */
	struct MDB_txn *txn; /* storage's: the handle cand_begin was given */
	struct cursor_pool *pool;
	struct MDB_cursor *cursor;
};

/* A set to read: one ID, the children of parent, the dn2id keys below key[0..keylen), or the
 * IDs under value[0..len) in index ix of db. key and value are borrowed, not copied (the set
 * allocates nothing here): they must outlive it. */
void cand_init_one(struct candidates *c, entry_id id);
void cand_init_children(struct candidates *c, const struct db *db, entry_id parent);
void cand_init_subtree(struct candidates *c, const struct db *db, const void *key, size_t keylen);
void cand_init_index(struct candidates *c, const struct db *db, const struct db_index *ix,
                     const void *value, size_t len);
/* The IDs ids[0..n) (borrowed: they must outlive the set), in their order. */
void cand_init_list(struct candidates *c, const entry_id *ids, size_t n);

/*
 * Number of candidates for an index, children or list set, an estimate used to
 * choose the cheapest set (0 when none; SIZE_MAX when unknown).
 */
size_t cand_count(struct candidates *c, struct db_read *txn);

/* Attaches c to a read transaction, its cursor to come from pool (NULL: none, a cursor
 * of its own) when first needed: cand_next reports an error in taking it. */
void cand_begin(struct candidates *c, struct db_read *txn, struct cursor_pool *pool);
/* Next candidate: 0 with *id set, DB_NOTFOUND at the end, or an LMDB error. */
int cand_next(struct candidates *c, entry_id *id);
/* Detaches c from its transaction (call before the transaction ends), its cursor back
 * to pool (the one cand_begin had it from). */
void cand_end(struct candidates *c, struct cursor_pool *pool);
void cand_free(struct candidates *c);

/* Where c stands, for a log line about a read that failed in it (LMDB names no page): its
 * table as the file names it and its last key or ID, e.g. "table dn2id, after key
 * \"dc=org,dc=test,ou=people,uid=user.17\"" (printable bytes only), into out[0..cap). */
void cand_where(const struct candidates *c, const struct db *db, char *out, size_t cap);

#endif
