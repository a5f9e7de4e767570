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

#endif
