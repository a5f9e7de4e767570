/*
 * What binds read of the entry they bind as, and the rootdn test (bind_account.c), for
 * server/ops's bind paths. Each runs on c's worker; the entry reads need c's worker's read
 * transaction begun by the caller (db_gen_txn_begin) but op_account_refused, which begins
 * and ends its own.
 */
#ifndef MINIDIR_SERVER_OPS_BIND_ACCOUNT_H
#define MINIDIR_SERVER_OPS_BIND_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "server/ops/account.h"
#include "storage/db.h"

struct conn;
struct server;

/* The entry at the reversed DN key[0..keylen) into *id and *e, in c's worker's read
 * transaction: 0, DB_NOTFOUND (no such entry) or an LMDB error. */
int bind_read_entry(struct conn *c, const void *key, size_t keylen, entry_id *id,
                    struct entry_view *e);
/* The account state of entry id (read by bind_read_entry) into *in, with the server's
 * default policy: 0, DB_NOTFOUND or an LMDB error (account_read). */
int bind_read_account(struct conn *c, entry_id id, const struct entry_view *e,
                      struct account_input *in);
/* The access log's line of c's operation says why the account was refused (word, attr). */
void bind_note_account(struct conn *c, const char *word, const char *attr);

/*
 * Whether the account of the entry at key[0..keylen) (a dn_normalize key) may act now
 * (server/ops/account.h): ACCOUNT_USABLE also when there is no such entry; else why not,
 * noted on the access log's line of c's operation (account=WORD attr="ATTR") and counted.
 * For SASL EXTERNAL binds and chained password changes (op_chain.c).
 */
enum account_refusal op_account_refused(struct conn *c, const void *key, size_t keylen);

/* True if ndn (a normal form, dn_normalize's) is the configured rootdn. */
bool op_is_rootdn(const struct server *srv, const struct buf *ndn);

#endif
