/* What binds of every kind read of the entry they bind as (server/ops/account.h's state),
 * and the rootdn test: shared by simple, SASL EXTERNAL and SASL GSSAPI binds (op_bind.c,
 * op_bind_sasl.c) and chained password changes (op_chain.c). */
#include "server/ops/bind_account.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "protocol/dn.h"
#include "server/access_log.h"
#include "server/db/db.h"
#include "server/net/conn.h"
#include "server/ops/account.h"
#include "server/ops/ops.h"

/* The entry at the reversed DN key[0..keylen) into *id and *e, in c's worker's read
 * transaction, which the caller has begun: 0, DB_NOTFOUND (no such entry) or an LMDB
 * error. The one lookup of both binds' paths (a password checked, an account refused). */
int bind_read_entry(struct conn *c, const void *key, size_t keylen, entry_id *id,
                    struct entry_view *e)
{
	struct db_worker *dw = db_worker(c->w);
	int rc = db_dn2id(&dw->gen->db, dw->txn, key, keylen, id);
	return rc ? rc : db_get_entry(&dw->gen->db, dw->txn, *id, e);
}

/* The account state of entry id (read by read_entry) into *in, with the server's default
 * policy: 0, DB_NOTFOUND or an LMDB error (account_read). */
int bind_read_account(struct conn *c, entry_id id, const struct entry_view *e,
                      struct account_input *in)
{
	struct worker *w = c->w;
	return account_read(&db_worker(w)->gen->db, db_worker(w)->txn, id, e,
	                    w->srv->cfg.ppolicy_default, w->srv->cfg.suffix, in);
}

/* The access log's line of this operation says why the account was refused (a client is
 * told 49, and a Password Policy error at most). */
void bind_note_account(struct conn *c, const char *word, const char *attr)
{
	if (!c->trace.text.len || !access_log_on(c->w->srv))
		return;
	char t[96];
	int n = snprintf(t, sizeof(t), " account=%s attr=\"%s\"", word, attr ? attr : "-");
	if (n > 0)
		buf_append(&c->trace.text, t, (size_t)n < sizeof(t) ? (size_t)n : sizeof(t) - 1);
}

enum account_refusal op_account_refused(struct conn *c, const void *key, size_t keylen)
{
	struct account_input in;
	const char *attr = NULL;
	enum account_refusal r = ACCOUNT_USABLE;
	if (db_gen_txn_begin(c->w) != 0)
		return ACCOUNT_LOCKED; /* nothing can be read: no bind without its check */
	entry_id id;
	struct entry_view e;
	int rc = bind_read_entry(c, key, keylen, &id, &e);
	if (rc == 0)
		rc = bind_read_account(c, id, &e, &in);
	if (rc == 0) {
		r = account_refused(&in, time(NULL), &attr);
	} else if (rc != DB_NOTFOUND) {
		db_gen_txn_failed(c->w);
		r = ACCOUNT_LOCKED;
		attr = "(the entry could not be read)";
	}
	db_gen_txn_end(c->w);
	if (r != ACCOUNT_USABLE) {
		STAT_ADD(c->w->stats.binds_refused_account, 1);
		bind_note_account(c, account_refusal_word(r), attr);
	}
	return r;
}

bool op_is_rootdn(const struct server *srv, const struct buf *ndn)
{
	struct buf root = {0};
	bool same = srv->cfg.rootdn[0] &&
	            dn_normalize(srv->cfg.rootdn, strlen(srv->cfg.rootdn), &root, NULL) == 0 &&
	            root.len == ndn->len && memcmp(root.data, ndn->data, ndn->len) == 0;
	buf_free(&root);
	return same;
}
