/*
 * The syncrepl consumer (RFC 4533): a replica follows its provider as the config's
 * syncrepl key says (conf/syncrepl.h). One thread of its own, a libldap client: it
 * connects, binds, searches with the Sync Request control (its stored cookie, if any, so
 * that a restart resumes where it stopped) and applies every entry, delete and Sync Info
 * message to the database (storage/db_update.h), the single LMDB writer. Each change
 * commits in the same write transaction as the cookie that covers it (several changes
 * that arrive together share one); changes without their cookie yet (a refresh under
 * way) wait in the open transaction, so a crash loses neither and repeats nothing that
 * was committed. Readers (the workers' read transactions) see each commit at their next
 * operation. The end of a present phase deletes every entry the provider did not report
 * present; e-syncRefreshRequired drops the cookie and reloads in full. An entry a refresh
 * brings before its parent is held until the parent has come (held.h); one whose
 * parent never comes, or over ENTRY_MAX_BYTES, is skipped (logged, counted in the status)
 * and the stream goes on. A session that failed writing the database (a full disk) is
 * retried with a backoff.
 *
 * refreshOnly: a refresh, then the next after the configured interval. Errors and a lost
 * provider: retried on the retry schedule; each failure logged once per change of state
 * or reason, not once per attempt.
 *
 * Thread rules: replica_start, replica_stop and replica_free on the main thread;
 * replica_status and replica_context_csn from any thread (a mutex guards the status).
 */
#ifndef MINIDIR_SERVER_REPLICA_REPLICA_H
#define MINIDIR_SERVER_REPLICA_REPLICA_H

#include <ldap.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "server/replica/status.h"
#include "server/server.h"

/*
 * Starts the consumer for srv->cfg.syncrepl on srv->gen's database (opened with
 * db_open_rw), after the workers. on_first_refresh (may be NULL) is called once, on the
 * consumer's thread, right after the first refresh of this run has committed (its
 * refresh stage done, refreshOnly or refreshAndPersist). Returns 0, or -1 after logging
 * why.
 */
int replica_start(struct server *srv, void (*on_first_refresh)(struct server *srv));

/* Stops it (abandons the search, unbinds, joins the thread, commits what its cookie
 * covers); nothing when none runs. Its status stays readable until replica_free. */
void replica_stop(struct server *srv);
/* Frees the stopped consumer; once no worker runs (their searches read its status). */
void replica_free(struct server *srv);

/* A copy of the consumer's status; false when srv is no replica. */
bool replica_status(struct server *srv, struct replica_status *out);

/*
 * A libldap handle to s's provider, as the consumer makes it: protocol 3, s's network
 * timeout for the connect, timeout_s for each result, no referrals chased, ldaps:// or
 * StartTLS with s's TLS words; not bound. Returns 0, or -1 with why (*ldp, when not
 * NULL, is then the caller's to ldap_unbind_ext).
 */
int replica_ldap_open(const struct syncrepl_conf *s, int timeout_s, LDAP **ldp, char *why,
                      size_t cap);

/* ---- seed.c: a new replica's first copy of its file, from a peer --------------------- */

/*
 * The syncrepl key's seed=URL (a peer's /snapshot, server/monitor/snapshot.h) fetched into
 * cfg->database, which must not exist yet: written to DATABASE.seed, its length and
 * checksum checked against the peer's trailers, opened and checked to be a database of
 * this suffix holding a cookie and replicating what cfg's syncrepl key says
 * (replica_source_text), then renamed into place. The consumer then follows the provider
 * from that cookie; a provider that refuses it (too old) makes it reload in full, as for
 * any cookie. On the main thread, before the database is opened. Returns 0 (logged), or
 * -1 with why (nothing left behind: the caller starts from no file).
 */
int replica_seed(const struct config *cfg, char *why, size_t cap);

/* What replica_seed_file took. */
struct seed_result {
	uint64_t bytes; /* the copy's length */
	size_t entries;
	char suffix[1024]; /* the copy's suffix, normalized */
	char source[4096]; /* what it replicates (replica_source_text's form; cut if longer) */
};
/*
 * replica_seed's work, for it and for minidir-seed (tools/minidir_seed.c): url's copy
 * fetched into path, which must not exist (never replaced, even if made meanwhile), through
 * PATH.seed, checked as replica_seed says (the suffix compared only when cfg has one, the
 * source only when cfg has a syncrepl key: minidir-seed without a config checks neither,
 * and the server started on the file drops its cookie if its key replicates other
 * content, replica_source_follow). An https:// peer's certificate must chain to the syncrepl key's
 * tls_cacert, else to tls_ca_file (else to the system's CAs; tls_reqcert=never: not
 * checked). With owner (not NULL) and owner->chown, PATH.seed is given to owner->uid:gid
 * before it is synced and renamed. 0 (*got set), or -1 with why, nothing left behind.
 */
struct file_owner; /* conf/file_owner.h */
int replica_seed_file(const struct config *cfg, const char *url, const char *path,
                      const struct file_owner *owner, struct seed_result *got, char *why,
                      size_t cap);

/* What a replica replicates, as its file records it (storage/db_update.h's "source"):
 * "provider=... searchbase=... scope=N filter=... attrs=... type=..." into out[0..cap).
 * Returns its length, or -1 when it does not fit. */
int replica_source_text(const struct syncrepl_conf *s, char *out, size_t cap);

/* Records in db (a replica's, opened read-write) what cfg's syncrepl key replicates, when
 * the file says nothing or something else (logged: the key changed). Errors are logged. */
void replica_source_follow(const struct config *cfg, struct db *db);

/* ---- chain.c: password changes forwarded to the provider (chain_passwd), binds
 * replayed to it (chain_bind_failures) ------------------------------------------------ */

/* Jobs queued or running at most; one more is refused (chain_submit: busy). */
#define CHAIN_MAX_JOBS 16
/* Jobs of one identity (the bound DN) queued or running at most, so that one user cannot
 * hold every slot (before: one bound client held all 16, others got busy for minutes). */
#define CHAIN_MAX_JOBS_PER_USER 2
/* The longest bind password a connection keeps for chain_passwd (bytes): a longer one
 * binds as before but its changes are not forwarded (unwillingToPerform). Bounds what the
 * kept passwords cost: 256 bytes a bound connection (before: up to max_pdu_bytes each,
 * 1,000 connections with a 200 KB password took 193 MB). */
#define CHAIN_MAX_PASSWORD 256
/* Threads that forward them, each one job at a time. */
#define CHAIN_THREADS 2
/* Seconds a forwarded job waits for each of the provider's answers (its bind, its result)
 * at most; the connect waits the syncrepl key's network-timeout. */
#define CHAIN_TIMEOUT_S 10

/* CHAIN_BIND: a bind replayed (chain_bind_failures), nothing sent after it; CHAIN_VERIFY:
 * a bind whose result the client waits for (bind_passthrough), nothing sent after it. */
enum chain_kind { CHAIN_PASSWD, CHAIN_MODIFY, CHAIN_BIND, CHAIN_VERIFY };

/*
 * One forwarded change, made by a worker (chain_job_new), shared with the thread that
 * forwards it: two references, each side drops its own (chain_job_put), the last frees.
 * What the worker fills before chain_submit, all owned by the job: kind, dn and cred
 * (the client's simple bind; cred is wiped when the job is freed), and the change: for
 * CHAIN_PASSWD the Password Modify request value (has_value false: none), for
 * CHAIN_MODIFY the target and mods (an LDAPMod array ldap_mods_free frees). What the
 * thread fills, read by the worker only once done is true (acquire): rc (an LDAP result
 * code; libldap's own errors mapped: unreachable, timed out: unavailable), matched and
 * msg (may be NULL), data (the response value, may be NULL).
 */
struct chain_job {
	enum chain_kind kind;
	char *dn;
	struct berval cred;
	bool has_value;
	struct berval value;
	char *target;
	LDAPMod **mods;
	int rc;
	char *matched, *msg;
	struct berval *data;
	atomic_bool done;
	atomic_int refs;
	uint64_t user;          /* whose it is (a key of the bound DN, nonzero), for the share */
	bool from_cache;        /* CHAIN_VERIFY answered by bind_passthrough_cache (bind_cache.h) */
	struct chain_job *next; /* the queue */
};

/* A job with its two references and copies of dn[0..dnlen) and cred[0..credlen), or
 * NULL when out of memory. */
struct chain_job *chain_job_new(enum chain_kind kind, const void *dn, size_t dnlen,
                                const void *cred, size_t credlen);
/* Drops one reference to job (NULL: nothing); the last frees it. */
void chain_job_put(struct chain_job *job);

/* Starts the threads when srv->cfg.chain_passwd or chain_bind_failures is on (nothing
 * otherwise). Returns 0, or
 * -1 after logging why. On the main thread, after replica_start. */
int chain_start(struct server *srv);
/* Stops them and frees the pool: jobs still queued end unavailable, a running one ends
 * within CHAIN_TIMEOUT_S; joined. On the main thread, once no worker runs (they call
 * chain_submit). */
void chain_stop(struct server *srv);
/*
 * Queues job for a thread (from any worker: a mutex guards the queue, which no lookup
 * takes). Returns 0; CHAIN_FULL when CHAIN_MAX_JOBS are queued or running or the pool is
 * stopped, CHAIN_USER_FULL when job->user has CHAIN_MAX_JOBS_PER_USER (the caller answers
 * busy and drops both references).
 */
enum { CHAIN_FULL = -1, CHAIN_USER_FULL = -2 };
int chain_submit(struct server *srv, struct chain_job *job);

#endif
