/*
 * Which member values of a dynamic group the server computed (storage/dyngroup.h at
 * import, storage/dyngroup_update.h on a replica), told apart from the values the LDIF or
 * the provider gave: the dynmembers table lists the group's computed members by ID, and
 * each such value is its member's DN as stored, byte for byte. minidir-export
 * (ldif/ldif_export.c) leaves them out, so that what it writes is what was given and an
 * import of it computes the members again from the memberURL values.
 *
 * Thread rules: one struct per thread; the DNs point into txn's map (valid until it ends).
 */
#ifndef MINIDIR_STORAGE_DYNGROUP_COMPUTED_H
#define MINIDIR_STORAGE_DYNGROUP_COMPUTED_H

#include <lber.h>
#include <stdbool.h>
#include <stddef.h>

#include "storage/db.h"

struct dyngroup_computed {
	struct berval *dn; /* the computed values, sorted (length, then bytes) */
	bool *taken;       /* dn[i] matched a value already (each is taken once) */
	size_t n, cap;
};

/*
 * Sets c to group's computed member values (none: not a dynamic group, a file without the
 * dynmembers table, or a group whose URLs found nothing). c is reused between groups and
 * freed with dyngroup_computed_free. Returns 0, ENOMEM or an LMDB error (DB_CORRUPTED for
 * a record that does not parse).
 */
int dyngroup_computed_load(const struct db *db, struct db_read *txn, entry_id group,
                           struct dyngroup_computed *c);

/* Whether member value v is one of c's not taken yet; takes it. O(log n). */
bool dyngroup_computed_take(struct dyngroup_computed *c, const struct berval *v);

void dyngroup_computed_free(struct dyngroup_computed *c);

#endif
