/*
 * The equality index keys of one stored entry (the eq.<attr> tables of storage/db.h),
 * written or removed together, the same way by import and by storage/db_update.h so
 * that both give the same tables: every value of each indexed attribute of the record,
 * normalized by the index's rule and truncated to DB_MAX_INDEX_KEY (an empty normal form
 * is not indexed), plus, for objectClass, the OID of every superclass of each class the
 * loaded schema knows (RFC 4512 2.4.1), and for an entryUUID index the record's UUID as
 * RFC 4122 text. eq.memberof is not written here (storage/memberof.h).
 *
 * Thread rules: the caller's write transaction (entry_index_write); scratch is the caller's.
 */
#ifndef MINIDIR_STORAGE_ENTRY_INDEX_H
#define MINIDIR_STORAGE_ENTRY_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "storage/db.h"

/* What entry_index_write returns for a value its index's rule cannot normalize. */
#define ENTRY_INDEX_BAD_VALUE (-1)

/*
 * Called with each key of an entry in index ix: key[0..len) (valid during the call only;
 * already truncated to DB_MAX_INDEX_KEY). Returns 0 to go on, or a nonzero code that
 * entry_index_keys returns at once.
 */
typedef int entry_index_fn(void *arg, const struct db_index *ix, const void *key, size_t len);

/*
 * Calls fn for every key of e (a parsed record) in db's indexes, in record order: the
 * keys entry_index_write adds or removes, computed without a transaction (db's index list
 * is only read, so any thread may call this while another writes). Returns 0,
 * ENTRY_INDEX_BAD_VALUE with "value of TYPE is not valid: "..."" in err, or what fn
 * returned.
 */
int entry_index_keys(const struct db *db, const struct entry_view *e, entry_index_fn *fn, void *arg,
                     struct buf *scratch, char *err, size_t errlen);

/*
 * The keys of the last objectClass attribute entry_index_keys_memo saw, and its values:
 * entries of one kind (most of an import) have the same classes, whose keys (each class
 * and its superclasses, by OID) then need no normalizing and no schema look-ups. Zeroed
 * before its first use; one per thread; entry_index_memo_free frees it.
 */
struct entry_index_memo {
	const struct db_index *ix; /* the objectClass index the keys are of; NULL: none yet */
	struct buf vals;           /* the attribute's SET OF content, as in the record */
	struct buf keys;           /* u16 length and the key, for each key in order */
};

/* entry_index_keys, fn called with the same keys in the same order, faster with memo. */
int entry_index_keys_memo(const struct db *db, const struct entry_view *e, entry_index_fn *fn,
                          void *arg, struct entry_index_memo *memo, struct buf *scratch, char *err,
                          size_t errlen);
void entry_index_memo_free(struct entry_index_memo *memo);

/*
 * Adds (add true) or removes (add false) entry id under every key of e (a record of
 * id, parsed with entry_parse; it must not point into pages txn writes: copy a record
 * read from txn before changing it). Removing a key that is not there is no error.
 * Returns 0; ENTRY_INDEX_BAD_VALUE with "value of TYPE is not valid: "..."" in err; or
 * an LMDB error with "index ATTR: reason" in err.
 */
int entry_index_write(const struct db *db, struct db_write *txn, entry_id id,
                      const struct entry_view *e, bool add, struct buf *scratch, char *err,
                      size_t errlen);

#endif
