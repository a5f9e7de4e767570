/* Start-up and shut-down: database, listening sockets, worker threads. */
#include "server/start/startup.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/schema.h"
#include "conf/id_names.h"
#include "server/monitor/monitor.h"
#include "server/ops/ops.h"
#include "server/access_log.h"
#include "server/addr_conns.h"
#include "server/bind_limit.h"
#include "server/net/conn.h"
#include "server/net/listeners.h"
#include "server/net/net.h"
#include "server/net/net_worker.h"
#include "server/net/sasl.h"
#include "server/net/tls.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/replica/replica.h"
#include "server/change_feed.h"
#include "server/clock.h"
#include "storage/db_check.h"
#include "storage/dyngroup_update.h"
#include "storage/memberof_nested.h"

/* Logs the indexes the config names that the database at hand was imported without. */
static void log_missing_indexes(const struct config *cfg, const struct db *db)
{
	for (int i = 0; i < cfg->nindex; i++)
		if (!db_index_find(db, cfg->index[i], strlen(cfg->index[i])))
			log_info("index %s is configured but %s was imported without it; run "
			         "minidir-import again to build it",
			         cfg->index[i], cfg->database);
}

/* A file minidir-import made under another schema than the one this server loaded (its
 * digest differs; a file that records none is not checked): true, with
 * "imported with schema X, the server runs Y (schema = ...)" in why. */
static bool other_schema(const struct config *cfg, const struct db *db, char *why, size_t len)
{
	if (!db->schema[0] || strcmp(db->schema, schema_digest()) == 0)
		return false;
	snprintf(why, len, "imported with schema %s, the server runs %s (schema = %s)", db->schema,
	         schema_digest(), cfg->schema);
	return true;
}

/* How the memos of a file opened read-only split memo_bytes (storage/db.h, db_open_served). */
static void log_memos(const struct db *db)
{
	char budget[CONFIG_MEMO_TEXT];
	log_info("memos (memo_bytes = %s): records %zu bytes (%s), keys %zu bytes",
	         config_memo_bytes_text(db->memo_budget, budget), db_record_memo_bytes(db),
	         db->records_at                 ? "every ID"
	         : db_record_memo_bytes(db) > 0 ? "a table that evicts"
	                                        : "off",
	         db->index_memo.bytes);
}

/* memberof_nested as the file records it: a new replica's file takes the key (auto: no,
 * until its consumer finds a 389-ds provider); a file with entries keeps its closure
 * (direct or nested), and a yes or no differing is logged. */
static void check_nested(const struct config *cfg, struct db *db, bool writable)
{
	bool stored = false, want = cfg->memberof_nested == MEMBEROF_NESTED_YES;
	if (memberof_nested_follow(db, want, writable, &stored) != 0)
		log_error("%s: reading memberof_nested from the database failed", cfg->database);
	else if (stored != want && cfg->memberof_nested != MEMBEROF_NESTED_AUTO)
		log_info(
		    "memberof_nested = %s but %s holds %s memberOf: serving what it holds; "
		    "run minidir-import again (a replica: remove the file and resync) to change it",
		    want ? "yes" : "no", cfg->database, stored ? "nested" : "direct");
}

/* dynamic_groups the same way: a replica keeps them only in a file that records it. */
static void check_dynamic(const struct config *cfg, struct db *db, bool writable)
{
	bool stored = false;
	db->dynamic_groups_max = (size_t)cfg->dynamic_groups_max;
	if (db_meta_flag_follow(db, DYNGROUP_META, cfg->dynamic_groups, writable, &stored) != 0)
		log_error("%s: reading dynamic_groups from the database failed", cfg->database);
	else if (stored != cfg->dynamic_groups)
		log_info("dynamic_groups = %s but %s was made with it %s: %s; run minidir-import "
		         "again (a replica: remove the file and resync) to change it",
		         cfg->dynamic_groups ? "yes" : "no", cfg->database, stored ? "on" : "off",
		         stored ? "its dynamic groups are kept"
		                : "its groups are served as stored");
}

/*
 * A replica's database: opened read-write (created for the suffix when there is no
 * file yet) as the one and only generation; the consumer changes it in place.
 */
static struct db_gen *open_replica_database(const struct config *cfg, char *err, size_t errlen)
{
	struct db_gen *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "%.900s: out of memory", cfg->database);
		return NULL;
	}
	g->refs = 1;
	g->map_slot = -1;
	struct stat st;
	int fd;
	/* A new replica with seed=: a peer's copy first, so that it follows from its cookie. */
	if (cfg->syncrepl.seed[0] && stat(cfg->database, &st) < 0 && errno == ENOENT) {
		char why[1024];
		if (replica_seed(cfg, why, sizeof(why)) < 0)
			log_warning(
			    "syncrepl seed=%s: %s; a full refresh from the provider instead",
			    cfg->syncrepl.seed, why);
	}
	if (db_open_rw(&g->db, cfg->database, cfg->suffix, cfg->index, cfg->nindex, err, errlen) <
	    0) {
		free(g);
		return NULL;
	}
	/* A new replica's entries are made by the rootdn, as minidir-import records it. */
	if (!g->db.creator[0] && cfg->rootdn[0] && db_set_creator(&g->db, cfg->rootdn) != 0)
		log_error("%s: recording the database's creator failed", cfg->database);
	check_nested(cfg, &g->db, true);
	check_dynamic(cfg, &g->db, true);
	replica_source_follow(cfg, &g->db);
	if ((fd = db_file_fd(&g->db)) < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%.900s: cannot stat the database file", cfg->database);
		db_gen_release(g);
		return NULL;
	}
	g->dev = st.st_dev;
	g->ino = st.st_ino;
	return g;
}

/*
 * Why the server may not read its database, said so that the admin can fix it: the
 * file (or the directory that keeps the server from it), its owner and mode, the user
 * and group the server runs as, and the two fixes (chown, or an import as root with
 * `user` in the config, which gives the file to that user: minidir-import(8)). The
 * usual case: a database imported by root, 0600 root:root, under a unit whose User= is
 * minidir.
 *
 * True when this process cannot open cfg->database for reading because of permissions
 * (EACCES), with the message in out[0..outlen) ("cannot read the database PATH:
 * permission denied: it is owned by root:root, mode 0600, and minidir runs as
 * minidir:minidir (uid 998); ..."). False when it can be opened, or fails otherwise
 * (out untouched): the caller's own error says why.
 */
static bool db_denied_explain(const struct config *cfg, char *out, size_t outlen)
{
	const char *path = cfg->database;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (errno != EACCES)
		return false;
	/* The file itself, or (when it cannot even be looked at) its directory. */
	char dir[sizeof(cfg->database)];
	snprintf(dir, sizeof(dir), "%s", path);
	struct stat st;
	bool is_file = stat(path, &st) == 0;
	const char *what = is_file ? path : dirname(dir);
	if (!is_file && stat(what, &st) < 0)
		return false;
	char owner[160], me[160];
	id_names(st.st_uid, st.st_gid, owner, sizeof(owner));
	id_names(geteuid(), getegid(), me, sizeof(me));
	int user_len = (int)strcspn(me, ":");
	unsigned mode = (unsigned)(st.st_mode & 07777);
	long uid = (long)geteuid();
	int n;
	if (!is_file)
		n = snprintf(
		    out, outlen,
		    "cannot read the database %s: permission denied on its directory %s "
		    "(owned by %s, mode %04o), and minidir runs as %s (uid %ld); let that user "
		    "in: chown %s %s",
		    path, what, owner, mode, me, uid, me, what);
	else
		n = snprintf(
		    out, outlen,
		    "cannot read the database %s: permission denied: it is owned by %s, mode "
		    "%04o, and minidir runs as %s (uid %ld); give it to that user: chown %s %s "
		    "(minidir-import run as root does it itself when %s sets user = %.*s, or "
		    "when the database's directory belongs to %.*s)",
		    path, owner, mode, me, uid, me, path, cfg->path, user_len, me, user_len, me);
	if (n >= (int)outlen && outlen > 4)
		memcpy(out + outlen - 4, "...", 4); /* long paths: cut, and it says so */
	return true;
}

static int open_database(struct server *srv)
{
	char err[1024];
	struct config *cfg = &srv->cfg;
	bool replica = cfg->syncrepl.set;
	struct db_gen *g = replica ? open_replica_database(cfg, err, sizeof(err))
	                           : db_gen_open(cfg->database, cfg->suffix, cfg->memo_bytes,
	                                         cfg->database_readahead, err, sizeof(err));
	if (!g && replica) {
		log_error("%s", err);
		return -1;
	}
	char denied[2048];
	if (!g && db_denied_explain(cfg, denied, sizeof(denied))) {
		log_error("%s", denied); /* not "create it": it is there, for another user */
		return -1;
	}
	if (!g) {
		log_error("%s (create it with: minidir-import -f %s FILE.ldif)", err, cfg->path);
		return -1;
	}
	if (op_bind_prepare(srv, g) < 0) {
		db_gen_release(g);
		return -1;
	}
	log_missing_indexes(cfg, &g->db);
	char why[512];
	if (other_schema(cfg, &g->db, why, sizeof(why)))
		log_warning("%s was %s: a filter on a type only one of them defines matches "
		            "nothing; run minidir-import again with this configuration",
		            cfg->database, why);
	if (!replica) {
		check_nested(cfg, &g->db, false);
		check_dynamic(cfg, &g->db, false);
	}
	struct stat st;
	if (stat(cfg->database, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
		log_info("warning: %s is readable by others (mode %03o) and holds password "
		         "hashes; chmod 600 it",
		         cfg->database, (unsigned)(st.st_mode & 0777));
	db_gen_publish(srv, g);
	log_info("database %s: suffix %s, %zu entries", cfg->database, cfg->suffix, g->db.entries);
	if (!replica)
		log_memos(&g->db);
	if (replica)
		log_info("replica of %s: the consumer writes %s in place; it is not reloaded from "
		         "new imports",
		         cfg->syncrepl.provider, cfg->database);
	return 0;
}

/* True if st is the file refused last (as it was then). */
static bool is_refused(const struct server *srv, const struct stat *st)
{
	const struct db_refused *r = &srv->db_refused;
	return r->dev == st->st_dev && r->ino == st->st_ino && r->size == st->st_size &&
	       r->mtime.tv_sec == st->st_mtim.tv_sec && r->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Logs why the file st was refused (a and b: the reason's two parts) and keeps it from
 * being tried again as long as it stays as it is. */
static void refuse(struct server *srv, const struct stat *st, const char *a, const char *b)
{
	log_error("database not reloaded: %s%s; still serving the previous one", a, b);
	srv->db_refused = (struct db_refused){
	    .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size, .mtime = st->st_mtim};
}

void server_db_check(struct server *srv)
{
	if (srv->cfg.syncrepl.set)
		return; /* a replica's file changes in place, by its consumer */
	const char *path = srv->cfg.database;
	struct db_gen *cur = srv->gen; /* the main thread publishes: no lock to read it */
	struct stat st;
	if (stat(path, &st) < 0 || (st.st_dev == cur->dev && st.st_ino == cur->ino) ||
	    is_refused(srv, &st))
		return;
	/* The lease first: a file another process still writes is not read yet. */
	int fd, lease = db_watch_lease(path, st.st_dev, st.st_ino, &fd), lease_err = errno;
	char denied[2048];
	if (lease < 0 && lease_err == EACCES &&
	    db_denied_explain(&srv->cfg, denied, sizeof(denied))) {
		refuse(srv, &st, denied, "");
		return;
	}
	if (lease < 0 && lease_err != ESTALE) {
		refuse(srv, &st, path,
		       lease_err == EACCES ? ": permission denied" : ": cannot be opened");
		return;
	}
	if (lease < 0 || (lease > 0 && lease_err == EAGAIN)) {
		log_debug("%s: a new file, still open for writing (or replaced again); retrying",
		          path);
		return;
	}
	char err[1024];
	struct db_gen *g = db_gen_open(path, srv->cfg.suffix, server_memo_bytes(srv),
	                               srv->cfg.database_readahead, err, sizeof(err));
	if (g && (g->dev != st.st_dev || g->ino != st.st_ino)) {
		db_gen_release(g); /* replaced again since the stat: the next round takes it */
		if (fd >= 0)
			close(fd);
		return;
	}
	char why[600];
	if (g && other_schema(&srv->cfg, &g->db, why + 2, sizeof(why) - 2)) {
		/* Its entries were checked, and its types named, by another schema: served by this
		 * one, its new types' filters would match nothing. The schema is loaded once. */
		memcpy(why, ": ", 2);
		strcat(why, "; restart minidir");
		refuse(srv, &st, path, why);
		db_gen_release(g);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!g || op_bind_prepare(srv, g) < 0) {
		refuse(srv, &st, g ? path : err, g ? ": reading its passwords failed" : "");
		db_gen_release(g);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (lease > 0)
		log_info("%s: no lease on the new database file (%s)", path, strerror(lease_err));
	log_missing_indexes(&srv->cfg, &g->db);
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		log_info("warning: %s is readable by others (mode %03o) and holds password hashes; "
		         "chmod 600 it",
		         path, (unsigned)(st.st_mode & 0777));
	g->map_slot = db_watch_map_add(g->dev, g->ino, path);
	db_gen_publish(srv, g);
	db_watch_set(srv, fd); /* the old file's lease goes: its name is gone */
	__atomic_add_fetch(&srv->reloads, 1, __ATOMIC_RELAXED);
	log_info("database reloaded: %s (%zu entries, imported %s; generation %llu)", path,
	         g->db.entries, g->db.created[0] ? g->db.created : "at an unknown time",
	         (unsigned long long)g->number);
	log_memos(&g->db);
}

static int init_worker(struct server *srv, struct worker *w, int id)
{
	struct db_worker *dw = db_worker(w);
	w->id = id;
	w->srv = srv;
	if (conn_worker_init(w) < 0)
		return -1;
	dw->gen = db_gen_current(srv);
	cursor_pool_reset(&dw->cursors, &dw->gen->db);
	int rc = db_read_begin(&dw->gen->db, &dw->txn);
	if (rc) {
		log_error("worker %d: read transaction: %s", id, db_error_text(rc));
		return -1;
	}
	db_read_reset(dw->txn);
	return 0;
}

/*
 * struct runtime's fields but the policy (server.h): what SIGHUP may change, each copied
 * from the config at start-up (server_init) and stored again when a reload changes it
 * (server_reload, which logs it in this order): X(field, printf format, the value shown,
 * read from cfg).
 */
int server_init(struct server *srv)
{
	struct config *cfg = &srv->cfg;
	srv->started = time(NULL);
	srv->db_watch_fd = -1;
	srv->access_log = srv->access_log_old = -1;
	srv->dispatch = ops_dispatch;
	/* Writers first: the shedding at EMFILE gets it between two workers' accepts. */
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&srv->accept_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	pthread_mutex_init(&srv->gen_lock, NULL);
	srv->runtime.policy = policy_for(cfg->send_policy);
	srv->local_policy = policy_for(SEND_BATCH);
#define RUNTIME_FROM_CONFIG(type, field, fmt, shown) srv->runtime.field = cfg->field;
	SERVER_RUNTIME_VALUES(RUNTIME_FROM_CONFIG)
#undef RUNTIME_FROM_CONFIG
	char err[1024];
	if (schema_load(cfg->schema_dir, cfg->schema, err, sizeof(err)) < 0) {
		log_error("schema: %s (set schema_dir and schema in %s)", err, cfg->path);
		return -1;
	}
	if (cfg->schema_dir_from_tree)
		log_info("schema_dir: the source tree's %s (none installed)", cfg->schema_dir);
	/* SASL before ops_start, which starts the SASL threads where GSSAPI is offered, and
	 * the root DSE, which lists the mechanisms */
	if (sasl_setup(cfg, &srv->sasl) < 0)
		return -1;
	if (ops_start(srv) < 0) /* the access rules, compiled against the schema */
		return -1;
	(void)ops_rootpw_is_example(srv);     /* a warning only: make run's example admin */
	(void)listeners_proxy_from_open(cfg); /* a warning only: proxy_from 0.0.0.0/0 */
	if (open_database(srv) < 0)
		return -1;
	if (!cfg->syncrepl.set) /* a replica's file is written in place, by its consumer */
		srv->gen->map_slot = db_watch_start(srv, srv->gen->dev, srv->gen->ino);
	if (tls_setup(cfg, &srv->tls) < 0) /* before the root DSE, which lists StartTLS */
		return -1;
	/* minidir -t creates nothing: run as root, it would leave a root-owned log that the
	 * service's user could not open at its start. */
	if (srv->check_only)
		log_info("access log: %s (not opened by -t)", cfg->access_log);
	else if (access_log_open(srv, cfg->access_log) < 0)
		return -1;
	if (op_rootdse_build(srv) < 0 || op_subschema_build(srv) < 0) {
		log_error("building the root DSE: out of memory");
		return -1;
	}
	if ((cfg->bind_fail_limit &&
	     !(srv->bind_limit = bind_limit_new((unsigned)cfg->bind_fail_limit,
	                                        (unsigned)cfg->bind_fail_window))) ||
	    (cfg->max_conns_per_ip &&
	     !(srv->addr_conns = addr_conns_new((unsigned)cfg->max_conns_per_ip)))) {
		log_error("the abuse limits' tables: out of memory");
		return -1;
	}
	srv->nworkers = cfg->threads;
	srv->workers = calloc((size_t)srv->nworkers, sizeof(*srv->workers));
	if (!srv->workers)
		return -1;
	for (int i = 0; i < srv->nworkers; i++) {
		struct ops_worker *ow = calloc(1, sizeof(*ow)); /* every part of it, zeroed */
		if (!ow)
			return -1;
		srv->workers[i] = &ow->net.db.base;
	}
	for (int i = 0; i < srv->nworkers; i++)
		if (init_worker(srv, srv->workers[i], i) < 0)
			return -1;
	return 0;
}

/* The consumer's first refresh of this run has committed: held listeners open. */
static void first_refresh_done(struct server *srv)
{
	(void)listeners_open(srv, "syncrepl: the first refresh has committed: listening "
	                          "(listen_after_refresh)"); /* a failure is logged */
}

int server_start(struct server *srv)
{
	/* Before the workers, which read it; the consumer publishes its cookie first. */
	if (srv->cfg.sync_provider &&
	    !(srv->feed = change_feed_new((size_t)srv->cfg.sync_provider_log))) {
		log_error("sync_provider: out of memory");
		return -1;
	}
	for (int i = 0; i < srv->nworkers; i++) {
		int rc =
		    pthread_create(&srv->workers[i]->thread, NULL, worker_main, srv->workers[i]);
		if (rc) {
			log_error("starting worker %d: %s", i, strerror(rc));
			return -1;
		}
	}
	if (http_start(srv) < 0)
		return -1;
	if (srv->cfg.syncrepl.set && replica_start(srv, first_refresh_done) < 0)
		return -1;
	return chain_start(srv);
}

void server_stop(struct server *srv)
{
	http_stop(srv);    /* it reads the workers' counters and the replica's status */
	replica_stop(srv); /* before the workers: it writes the database they read */
	srv->stopping = 1;
	uint64_t one = 1;
	for (int i = 0; i < srv->nworkers; i++)
		if (srv->workers[i] && srv->workers[i]->thread &&
		    write(net_worker(srv->workers[i])->wakefd, &one, sizeof(one)) < 0)
			log_error("waking worker %d: %s", i, strerror(errno));
	/* Every worker stopped before any is freed: a worker reads the others' connection
	 * lists (cn=Connections, conn_list) under their locks, so worker i's lock may not be
	 * destroyed while worker j still runs (ThreadSanitizer saw it). */
	for (int i = 0; i < srv->nworkers; i++)
		if (srv->workers[i] && srv->workers[i]->thread)
			pthread_join(srv->workers[i]->thread, NULL);
	for (int i = 0; i < srv->nworkers; i++) {
		struct worker *w = srv->workers[i];
		if (!w)
			continue; /* init stopped at an allocation */
		struct db_worker *dw = db_worker(w);
		cursor_pool_reset(&dw->cursors, NULL);
		ops_worker_free(w);
		if (dw->txn)
			db_read_end(dw->txn);
		db_gen_release(dw->gen);
		buf_free(&w->scratch);
		conn_worker_free(w);
		arena_free(&w->req_mem); /* after the connections: a search hands its block back */
		access_log_flush(w);     /* the thread has stopped: its last lines */
		buf_free(&w->access_log);
	}
	for (int i = 0; srv->workers && i < srv->nworkers; i++)
		free(srv->workers[i]); /* the whole struct ops_worker: its base is its start */
	free(srv->workers);
	srv->workers = NULL;
	chain_stop(srv);   /* after the workers: they queue into it (jobs hold references) */
	replica_free(srv); /* after the workers: their searches read its status */
	change_feed_free(
	    srv->feed); /* after the workers and the consumer, its readers and writer */
	srv->feed = NULL;
	for (int a = 0; a < srv->cfg.nlisten; a++)
		if (srv->unix_bound[a])
			unlink(srv->cfg.listen[a].path); /* ours: bound by listeners_bind */
	tls_teardown(srv->tls);
	srv->tls = NULL;
	sasl_teardown(srv->sasl);
	srv->sasl = NULL;
	access_log_close(srv);
	ops_stop(srv);            /* the access rules, the root DSE and cn=Subschema */
	db_gen_release(srv->gen); /* the last reference: every worker has let go */
	srv->gen = NULL;
	db_watch_stop(srv);               /* after the map is gone: a writer held back may go on */
	bind_limit_free(srv->bind_limit); /* after the workers: their binds and conns use them */
	srv->bind_limit = NULL;
	addr_conns_free(srv->addr_conns);
	srv->addr_conns = NULL;
	config_free(&srv->cfg);
	pthread_rwlock_destroy(&srv->accept_lock);
	pthread_mutex_destroy(&srv->gen_lock);
	schema_free();
}

/* A key whose change a SIGHUP applies (the key table's reload column, conf/config.h): the
 * TLS keys only when TLS was on at start-up (tls_reload). */
static bool applied_by_reload(const char *key, bool tls_on)
{
	enum config_reload r = config_key_reload(key);
	return r == CONFIG_TLS ? tls_on : r != CONFIG_RESTART;
}

static void restart_needed(const char *key, void *arg)
{
	const bool *tls_on = arg;
	if (!applied_by_reload(key, *tls_on))
		log_info(
		    "SIGHUP: %s changed; restart minidir to apply it (the running server keeps "
		    "its value)",
		    key);
}

/* Logs each key whose value changed in the file and that a SIGHUP does not apply, whatever
 * the key: the file's lines are compared key by key (config_changed_keys), so no key is
 * kept silently. */
static void log_restart_needed(const struct server *srv, const struct config *n)
{
	bool tls_on = srv->tls != NULL;
	config_changed_keys(&srv->cfg, n, restart_needed, &tls_on);
}

int server_reload(struct server *srv)
{
	struct config n;
	char err[1024];
	if (config_load(&n, srv->cfg.path, err, sizeof(err)) < 0) {
		log_error("SIGHUP: %s; keeping the running configuration", err);
		return -1;
	}
	log_restart_needed(srv, &n);
	ops_reload_access(srv, &n); /* n's rules, if they changed, become the server's */
	if (srv->tls)
		tls_reload(srv->tls, &n); /* certificate rotation: the files are read again */
	else if (n.tls_cert_file[0])
		log_info("SIGHUP: TLS was off at start-up; restart minidir to turn it on");
	access_log_reopen(srv, n.access_log); /* after logrotate moved the file away */
	server_db_check(srv);                 /* a new import is picked up within a second anyway */
	const struct send_policy *old = server_policy(srv), *p = policy_for(n.send_policy);
	if (p != old) {
		__atomic_store_n(&srv->runtime.policy, p, __ATOMIC_RELEASE);
		log_info("SIGHUP: send_policy %s -> %s (for connections accepted from now on)",
		         policy_name(old), policy_name(p));
	}
	const struct config *cfg = &n; /* SERVER_RUNTIME_VALUES' shown values read cfg */
/* A runtime value that changed: stored for the workers, and said. */
#define RELOAD(type, field, fmt, shown)                                                            \
	if (n.field != server_##field(srv)) {                                                      \
		__atomic_store_n(&srv->runtime.field, n.field, __ATOMIC_RELAXED);                  \
		log_info("SIGHUP: " #field " = " fmt, shown);                                      \
	}
	SERVER_RUNTIME_VALUES(RELOAD)
#undef RELOAD
	log_info("SIGHUP: configuration %s reloaded", srv->cfg.path);
	config_free(&n);
	return 0;
}

int server_check_pages(struct server *srv)
{
	struct db_gen *g = srv->gen;
	if (!g)
		return 0;
	char why[512];
	size_t records = 0;
	uint64_t t0 = clock_ns();
	if (db_check_pages(&g->db, &records, why, sizeof(why)) != 0) {
		log_error("%s: a damaged page: %s (import the file again; a replica: delete it to "
		          "refresh it whole)",
		          srv->cfg.database, why);
		return -1;
	}
	log_info("%s: every page read: %zu records in %.0f ms", srv->cfg.database, records,
	         (double)(clock_ns() - t0) / 1e6);
	return 0;
}
