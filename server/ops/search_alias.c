/*
 * Alias dereferencing (RFC 4511 4.5.1.3, RFC 4512 2.6): an entry of class
 * alias stands for the entry its aliasedObjectName names. Chains are followed
 * up to SEARCH_ALIAS_MAX_HOPS.
 */
#include <ldap.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "server/ops/search_alias.h"

#define SEARCH_ALIAS_MAX_HOPS 8

bool search_is_alias(const struct entry_view *e)
{
	return entry_has_class(e, "alias", 5);
}

int search_deref(const struct db *db, struct db_read *txn, entry_id *id, struct entry_view *e)
{
	struct buf key = {0};
	int rc = LDAP_SUCCESS;
	for (int hops = 0; search_is_alias(e); hops++) {
		const unsigned char *vals, *v;
		size_t vlen, len;
		key.off = key.len = 0;
		if (hops == SEARCH_ALIAS_MAX_HOPS) {
			rc = LDAP_ALIAS_DEREF_PROBLEM; /* a loop, or a chain too long */
			break;
		}
		if (!entry_find_attr(e, "aliasedObjectName", 17, &vals, &vlen) ||
		    !entry_next_value(&vals, vals + vlen, &v, &len) ||
		    dn_normalize((const char *)v, len, NULL, &key) < 0 ||
		    db_dn2id(db, txn, key.data, key.len, id) != 0 ||
		    db_get_entry(db, txn, *id, e) != 0) {
			rc = LDAP_ALIAS_PROBLEM; /* no target, or it does not exist */
			break;
		}
	}
	buf_free(&key);
	return rc;
}
