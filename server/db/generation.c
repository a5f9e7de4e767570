/* Database generations: open and check, hold and release, the workers' moves (generation.h). */
#include "server/db/generation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/config_set.h"
#include "protocol/buf.h"
#include "protocol/dn.h"
#include "server/clock.h"
#include "server/db/db_watch.h"
#include "server/db/memo_auto.h"
#include "server/db/readahead.h"
#include "server/dlist.h"
#include "server/log.h"
#include "storage/memo_counts.h"

struct db_gen *db_gen_open(const char *path, const char *suffix, size_t memo_bytes,
                           enum db_readahead readahead, char *err, size_t errlen)
{
	struct db_gen *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	g->refs = 1;
	g->map_slot = -1;
	struct stat before;
	char why[256];
	bool off = db_readahead_off(
	    readahead, stat(path, &before) == 0 ? (uint64_t)before.st_size : 0, why, sizeof(why));
	char auto_why[4600] = "";
	if (memo_bytes == CONFIG_MEMO_AUTO)
		memo_bytes = memo_auto_bytes(auto_why, sizeof(auto_why));
	if (db_open_served(&g->db, path, memo_bytes, off ? DB_NO_READAHEAD : 0, err, errlen) < 0) {
		free(g);
		return NULL;
	}
	log_info("%s: read-ahead %s (%s)", path, off ? "off" : "on", why);
	if (auto_why[0])
		log_info("%s: memo_bytes = auto: %zu bytes, %s", path, memo_bytes, auto_why);
	/* The file LMDB mapped, not the one the path names by now. */
	int fd;
	struct stat st;
	if ((fd = db_file_fd(&g->db)) < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot stat the database file", path);
		db_gen_release(g);
		return NULL;
	}
	g->dev = st.st_dev;
	g->ino = st.st_ino;
	struct buf key = {0};
	dn_normalize(suffix, strlen(suffix), NULL, &key);
	bool same = key.len == g->db.suffix_key.len &&
	            memcmp(key.data, g->db.suffix_key.data, key.len) == 0;
	buf_free(&key);
	if (!same) {
		snprintf(err, errlen,
		         "%s holds suffix \"%.*s\" but the configuration says suffix = %s", path,
		         (int)g->db.suffix.len, (char *)g->db.suffix.data, suffix);
		db_gen_release(g);
		return NULL;
	}
	return g;
}

void db_gen_release(struct db_gen *g)
{
	if (!g || __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	db_watch_map_remove(g->map_slot); /* before the map goes */
	db_close(&g->db);
	free(g->bind_decoy);
	free(g);
}

void db_gen_publish(struct server *srv, struct db_gen *g)
{
	pthread_mutex_lock(&srv->gen_lock);
	struct db_gen *old = srv->gen;
	g->number = old ? old->number + 1 : 1;
	__atomic_store_n(&srv->gen, g, __ATOMIC_RELEASE); /* workers compare it unlocked */
	pthread_mutex_unlock(&srv->gen_lock);
	/* The previous generation stays readable by the searches that started on it. */
	__atomic_store_n(&srv->gen_min, old ? old->number : 1, __ATOMIC_RELAXED);
	db_gen_release(old);
}

struct db_gen *db_gen_current(struct server *srv)
{
	pthread_mutex_lock(&srv->gen_lock);
	struct db_gen *g = srv->gen;
	db_gen_hold(g);
	pthread_mutex_unlock(&srv->gen_lock);
	return g;
}

void db_hold_begin(struct worker *w, struct db_hold *h, void (*expire)(struct db_hold *h))
{
	h->gen = db_worker(w)->gen;
	h->owned = false;
	h->expire = expire;
	h->pinned_since = 0;
	DLIST_PUSH(db_worker(w)->holds, h);
}

void db_hold_end(struct worker *w, struct db_hold *h)
{
	if (!h->gen)
		return;
	DLIST_UNLINK(db_worker(w)->holds, h);
	if (h->owned)
		db_gen_release(h->gen);
	h->gen = NULL;
	h->prev = h->next = NULL;
}

bool db_hold_expired(struct server *srv, const struct db_hold *h)
{
	return h->gen->number < __atomic_load_n(&srv->gen_min, __ATOMIC_RELAXED) ||
	       (h->pinned_since && clock_seconds() - h->pinned_since > DB_SNAPSHOT_MAX_SECONDS);
}

void db_gen_worker_start(struct worker *w)
{
	db_memo_counts = &w->stats.memo;
}

void db_gen_worker_switch(struct worker *w)
{
	struct db_worker *dw = db_worker(w);
	struct server *srv = w->srv;
	/* A pointer compare: the usual path reads one word and takes no lock. */
	if (__atomic_load_n(&srv->gen, __ATOMIC_RELAXED) == dw->gen)
		return;
	struct db_gen *g = db_gen_current(srv);
	struct db_read *txn;
	int rc = db_read_begin(&g->db, &txn);
	if (rc) {
		log_error("worker %d: read transaction on the new database: %s", w->id,
		          db_error_text(rc));
		db_gen_release(g);
		return;
	}
	db_read_reset(txn);
	/* Operations still reading the old generation keep it open on their own. */
	for (struct db_hold *h = dw->holds; h; h = h->next)
		if (h->gen == dw->gen && !h->owned) {
			db_gen_hold(h->gen);
			h->owned = true;
		}
	cursor_pool_reset(&dw->cursors, &g->db); /* the old environment's cursors go */
	if (dw->txn)
		db_read_end(dw->txn);
	db_gen_release(dw->gen);
	dw->gen = g;
	dw->txn = txn;
	dw->txn_open = false;
	dw->txn_failed = false;
}

bool db_changes_in_place(const struct db *db)
{
	return db->changes_in_place;
}

int db_gen_txn_begin(struct worker *w)
{
	struct db_worker *dw = db_worker(w);
	/* A flag, not a question to LMDB: this is every operation's path. */
	if (dw->txn_open && !dw->txn_failed)
		return 0;
	if (dw->txn_open) {
		/* A read in it met a damaged page: LMDB refuses the transaction from then on,
		 * and kept open it would fail every later operation of this worker. That one
		 * request failed; the next ones renew. */
		log_error("worker %d: a read failed on a damaged page of the database file; its "
		          "transaction is renewed (minidir -t checks every page)",
		          w->id);
		db_read_reset(dw->txn);
		dw->txn_open = false;
	}
	dw->txn_failed = false;
	int rc = db_read_renew(dw->txn);
	dw->txn_open = rc == 0;
	return rc;
}

void db_gen_txn_failed(struct worker *w)
{
	db_worker(w)->txn_failed = true;
}

void db_gen_txn_end(struct worker *w)
{
	struct db_worker *dw = db_worker(w);
	if (dw->txn_open && db_changes_in_place(&dw->gen->db)) {
		db_read_reset(dw->txn);
		dw->txn_open = false;
	}
}

void db_gen_worker_sweep(struct worker *w)
{
	for (struct db_hold *h = db_worker(w)->holds, *next; h; h = next) {
		next = h->next; /* expire may end h */
		if (db_hold_expired(w->srv, h))
			h->expire(h);
	}
}
