/* Alias dereferencing for searches (server/ops/search_alias.c). */
#ifndef MINIDIR_SERVER_OPS_SEARCH_ALIAS_H
#define MINIDIR_SERVER_OPS_SEARCH_ALIAS_H

#include <stdbool.h>

#include "storage/db.h"

/* True if e is of object class alias. */
bool search_is_alias(const struct entry_view *e);

/*
 * While e (entry *id) is an alias, replaces both with the entry its
 * aliasedObjectName names. Returns LDAP_SUCCESS, aliasProblem (33) when a
 * target is missing or not a DN, or aliasDereferencingProblem (36) for a loop.
 */
int search_deref(const struct db *db, struct db_read *txn, entry_id *id, struct entry_view *e);

#endif
