/*
 * matchedDN (RFC 4511 4.1.9) for a base that does not exist: the nearest superior entry
 * the client may know of (ops.h, op_matched_dn). Searches and compares use it.
 */
#include <stdbool.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "server/db/db.h"
#include "server/ops/access.h"
#include "server/ops/ops.h"
#include "storage/db.h"

void op_matched_dn(struct worker *w, struct access_op *aop, const struct buf *key, struct buf *out)
{
	const struct db *db = &db_worker(w)->gen->db;
	size_t len = dn_key_parent_len(key->data, key->len);
	bool all = access_entry_granted(aop, ACCESS_DISCLOSE);
	while (len >= db->suffix_key.len && len > 0) {
		entry_id id;
		struct entry_view e;
		struct access_entry ae;
		/* An entry the client may not know of is passed by as if it were not there, so
		 * that nothing below it tells it exists (slapd names none, which does tell). */
		if (db_dn2id(db, db_worker(w)->txn, key->data, len, &id) == 0 &&
		    db_get_entry(db, db_worker(w)->txn, id, &e) == 0 &&
		    (all || (access_entry_init(&ae, aop, id, &e), ae.entry >= ACCESS_DISCLOSE))) {
			buf_append(out, e.dn, e.dnlen);
			break;
		}
		len = dn_key_parent_len(key->data, len);
	}
	buf_append(out, "", 1);
}
