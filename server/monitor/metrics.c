/* /metrics and /readyz: see metrics.h (and docs/monitoring.md for each metric). */
#include "server/monitor/metrics.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/clock.h"
#include "server/db/db.h"
#include "server/server.h"
#include "server/replica/replica.h"
#include "server/stats_sum.h"

/* out's writer: a failed append is remembered and reported once, at the end. */
struct text {
	struct buf *out;
	int failed;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || buf_append(t->out, line, (size_t)n) < 0)
		t->failed = 1;
}

/* A metric's HELP and TYPE lines. */
static void head(struct text *t, const char *name, const char *type, const char *help)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(struct text *t, const char *name, const char *type, const char *help, uint64_t v)
{
	head(t, name, type, help);
	put(t, "%s %llu\n", name, (unsigned long long)v);
}

static const char *const op_names[STAT_OP_N] = {"bind",    "search",  "unbind", "abandon",
                                                "compare", "modify",  "modrdn", "add",
                                                "delete",  "extended"};
static const char *const res_names[STAT_RES_N] = {"bind", "search", "other"};

static void operations(struct text *t, const struct worker_stats *s)
{
	head(t, "minidir_operations_total", "counter", "Operations received, by type.");
	for (int o = 0; o < STAT_OP_N; o++)
		put(t, "minidir_operations_total{type=\"%s\"} %llu\n", op_names[o],
		    (unsigned long long)s->ops[o]);
	head(t, "minidir_results_total", "counter",
	     "Results sent, by operation type and LDAP result code (code 0 always shown; "
	     "code=\"other\": 127 and above).");
	for (int k = 0; k < STAT_RES_N; k++)
		for (int r = 0; r < STAT_RESULT_CODES; r++) {
			if (r && !s->results[k][r])
				continue;
			if (r == STAT_RESULT_CODES - 1)
				put(t, "minidir_results_total{type=\"%s\",code=\"other\"} %llu\n",
				    res_names[k], (unsigned long long)s->results[k][r]);
			else
				put(t, "minidir_results_total{type=\"%s\",code=\"%d\"} %llu\n",
				    res_names[k], r, (unsigned long long)s->results[k][r]);
		}
	/* stats.h's bucket i counts operations under 2^i us (and not under 2^(i-1)): its
	 * upper bound is le; the last bucket's operations are only in +Inf. */
	head(t, "minidir_operation_duration_seconds", "histogram",
	     "Time from a request read to its final response queued for sending.");
	uint64_t cum = 0;
	for (int b = 0; b < STAT_LATENCY_BUCKETS - 1; b++) {
		cum += s->latency[b];
		put(t, "minidir_operation_duration_seconds_bucket{le=\"%g\"} %llu\n",
		    (double)((uint64_t)1 << b) / 1e6, (unsigned long long)cum);
	}
	cum += s->latency[STAT_LATENCY_BUCKETS - 1];
	put(t, "minidir_operation_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
	    (unsigned long long)cum);
	put(t, "minidir_operation_duration_seconds_sum %.9f\n", (double)s->latency_sum_ns / 1e9);
	put(t, "minidir_operation_duration_seconds_count %llu\n", (unsigned long long)cum);
	head(t, "minidir_operation_duration_max_seconds", "gauge",
	     "The slowest operation since start-up.");
	put(t, "minidir_operation_duration_max_seconds %.9f\n", (double)s->latency_max_ns / 1e9);
	one(t, "minidir_entries_sent_total", "counter", "Search result entries sent.",
	    s->entries_sent);
}

static void connections(struct text *t, const struct worker_stats *s)
{
	one(t, "minidir_connections", "gauge", "LDAP connections open now.",
	    s->connections_current);
	one(t, "minidir_connections_total", "counter", "LDAP connections accepted.",
	    s->connections_total);
	one(t, "minidir_connections_shed_total", "counter",
	    "Connections closed unserved: out of file descriptors.", s->connections_shed);
	one(t, "minidir_pdu_timeouts_total", "counter",
	    "Connections closed: a request not whole within pdu_timeout.", s->pdu_timeouts);
	one(t, "minidir_input_shed_total", "counter",
	    "Connections closed: their worker buffered max_input_bytes_per_worker.", s->input_shed);
	one(t, "minidir_conns_per_ip_refused_total", "counter",
	    "Connections closed at accept: their address held max_conns_per_ip.",
	    s->conns_per_ip_refused);
	one(t, "minidir_binds_limited_total", "counter",
	    "Binds answered 49 unchecked: their DN or address reached bind_fail_limit.",
	    s->binds_limited);
	one(t, "minidir_binds_refused_account_total", "counter",
	    "Binds answered 49: the account locked, disabled or expired (docs/replica.md).",
	    s->binds_refused_account);
	one(t, "minidir_binds_replayed_total", "counter",
	    "Binds replayed to the provider so that its password policy counts them "
	    "(chain_bind_failures).",
	    s->binds_replayed);
	one(t, "minidir_binds_replay_dropped_total", "counter",
	    "Binds not replayed to the provider: the forwarding pool was full.",
	    s->binds_replay_dropped);
	one(t, "minidir_proxy_refused_total", "counter",
	    "pldap(s):// connections closed: not from proxy_from.", s->proxy_refused);
	one(t, "minidir_proxy_bad_headers_total", "counter",
	    "pldap(s):// connections closed: a PROXY header malformed or not whole in time.",
	    s->proxy_malformed);
	one(t, "minidir_tls_connections_total", "counter",
	    "Connections that started TLS (ldaps:// or StartTLS).", s->tls.connections);
	one(t, "minidir_tls_handshakes_total", "counter", "TLS handshakes completed.",
	    s->tls.handshakes);
	one(t, "minidir_tls_handshakes_resumed_total", "counter",
	    "TLS handshakes completed by resuming a session (tickets).", s->tls.resumed);
	one(t, "minidir_tls_handshake_failures_total", "counter",
	    "TLS handshakes that failed or timed out.", s->tls.failures);
	one(t, "minidir_tls_starttls_total", "counter", "StartTLS operations that succeeded.",
	    s->tls.starttls);
	one(t, "minidir_tls_ktls_connections_total", "counter",
	    "Connections whose sends the kernel encrypts (tls_ktls).", s->tls.ktls);
}

/* Per send policy: one family per counter of struct send_stats, labelled policy. */
static void policies(struct text *t, const struct worker_stats *s)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} f[] = {
	    {"minidir_send_responses_total", "Complete responses sent.",
	     offsetof(struct send_stats, responses)},
	    {"minidir_send_pdus_total", "LDAPMessages queued for sending.",
	     offsetof(struct send_stats, pdus)},
	    {"minidir_send_bytes_total", "Bytes the kernel accepted.",
	     offsetof(struct send_stats, bytes)},
	    {"minidir_send_calls_total", "send and sendmsg system calls.",
	     offsetof(struct send_stats, send_calls)},
	    {"minidir_send_setsockopt_calls_total", "setsockopt system calls of the policy.",
	     offsetof(struct send_stats, setsockopt_calls)},
	    {"minidir_send_eagain_total", "Sends refused with EAGAIN.",
	     offsetof(struct send_stats, eagain)},
	    {"minidir_send_partial_total", "Sends that took only part of the bytes.",
	     offsetof(struct send_stats, partial)},
	    {"minidir_send_tls_records_total", "TLS records written.",
	     offsetof(struct send_stats, tls_records)},
	};
	head(t, "minidir_send_connections_total", "counter",
	     "Connections accepted, by send policy.");
	for (int p = 0; p < SEND_POLICY_N; p++)
		put(t, "minidir_send_connections_total{policy=\"%s\"} %llu\n",
		    config_policy_name((enum send_policy_id)p),
		    (unsigned long long)s->connections_by_policy[p]);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		head(t, f[i].name, "counter", f[i].help);
		for (int p = 0; p < SEND_POLICY_N; p++) {
			uint64_t v;
			memcpy(&v, (const char *)&s->send[p] + f[i].off, sizeof(v));
			put(t, "%s{policy=\"%s\"} %llu\n", f[i].name,
			    config_policy_name((enum send_policy_id)p), (unsigned long long)v);
		}
	}
	one(t, "minidir_io_sends_total", "counter", "Sends given to the kernel by the engine.",
	    s->io_sends);
	one(t, "minidir_io_sends_more_total", "counter", "Of those, sends with MSG_MORE.",
	    s->io_sends_more);
	one(t, "minidir_io_waits_total", "counter",
	    "epoll_wait or io_uring_enter calls of the event loops.", s->io_waits);
}

static const char *const states[] = {"refreshing", "persisting", "retrying", "idle", "stopped"};

static void replication(struct text *t, const struct replica_status *st, int64_t now_ms)
{
	head(t, "minidir_replication_state", "gauge",
	     "The syncrepl consumer's state: 1 for the current one.");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		put(t, "minidir_replication_state{state=\"%s\"} %d\n", states[i],
		    strcmp(st->state, states[i]) == 0);
	one(t, "minidir_replication_state_seconds", "gauge", "Time in the current state.",
	    (uint64_t)(now_ms - st->state_since_ms) / 1000);
	if (st->lag_ms >= 0) {
		head(t, "minidir_replication_lag_seconds", "gauge",
		     "From the provider's commit of the last change applied to this replica's.");
		put(t, "minidir_replication_lag_seconds %.3f\n", (double)st->lag_ms / 1000);
	}
	one(t, "minidir_replication_lag_entries", "gauge",
	    "Changes received from the provider and not yet committed.", st->lag_entries);
	if (st->lag_changes >= 0)
		one(t, "minidir_replication_lag_changes", "gauge",
		    "A 389-ds provider's last change number minus the committed cookie's.",
		    (uint64_t)st->lag_changes);
	head(t, "minidir_replication_staleness_seconds", "gauge",
	     "How far behind the replica may be now, as /readyz measures it.");
	put(t, "minidir_replication_staleness_seconds %.3f\n",
	    (double)metrics_staleness_ms(st, now_ms) / 1000);
	one(t, "minidir_replication_changes_total", "counter",
	    "Entries added, modified or deleted by the consumer.", st->changes);
	one(t, "minidir_replication_refreshes_total", "counter", "Refreshes completed.",
	    st->refreshes);
	one(t, "minidir_replication_skipped_entries_total", "counter",
	    "Entries the provider sent that could not be stored.", st->skipped);
	one(t, "minidir_replication_probes_total", "counter",
	    "Probes of the provider answered (metrics_listen on, persisting).", st->probes);
	if (st->last_change) {
		one(t, "minidir_replication_last_change_timestamp_seconds", "gauge",
		    "When a change was last committed (Unix time).", (uint64_t)st->last_change);
	}
}

int64_t metrics_staleness_ms(const struct replica_status *st, int64_t now_ms)
{
	if (strcmp(st->state, "refreshing") == 0 || strcmp(st->state, "retrying") == 0 ||
	    strcmp(st->state, "stopped") == 0)
		return now_ms - st->state_since_ms;
	if (strcmp(st->state, "persisting") == 0 && st->probe_sent_ms)
		return now_ms - st->probe_sent_ms;
	return 0;
}

bool metrics_ready(struct server *srv, struct readiness *r)
{
	struct db_gen *g = db_gen_current(srv);
	bool open = g != NULL;
	db_gen_release(g);
	char *why = r->why;
	size_t cap = sizeof(r->why);
	if (!open) {
		r->code = "no-database";
		snprintf(why, cap, "no database is open");
		return false;
	}
	struct replica_status st;
	if (!replica_status(srv, &st))
		return true;
	int64_t now = (int64_t)(clock_ns() / 1000000);
	int64_t stale = metrics_staleness_ms(&st, now), max = srv->cfg.ready_max_lag_ms;
	if (strcmp(st.state, "stopped") == 0) {
		r->code = "replication-stopped";
		snprintf(why, cap, "replication stopped: %s", st.last_error);
	} else if (st.refreshes == 0) {
		r->code = "replication-first-refresh";
		snprintf(why, cap, "replication: the first refresh has not committed (%s)",
		         st.state);
	} else if (stale > max && st.probe_sent_ms && strcmp(st.state, "persisting") == 0) {
		r->code = "replication-provider-silent";
		snprintf(why, cap,
		         "replication: the provider has not answered for %lld ms "
		         "(ready_max_lag_ms %lld)",
		         (long long)stale, (long long)max);
	} else if (stale > max) {
		r->code = "replication-behind";
		snprintf(why, cap, "replication %s for %lld ms (ready_max_lag_ms %lld)%s%s",
		         st.state, (long long)stale, (long long)max, st.last_error[0] ? ": " : "",
		         st.last_error);
	} else {
		return true;
	}
	return false;
}

/* The memos of the file served (storage/db.h, memo_bytes) and what they answered. */
static void memos(struct text *t, const struct db *db, const struct db_memo_counts *n)
{
	head(t, "minidir_memo_budget_bytes", "gauge",
	     "memo_bytes: the most the memos of the file served may take (+Inf: unlimited).");
	if (db->memo_budget == DB_MEMO_UNLIMITED)
		put(t, "minidir_memo_budget_bytes +Inf\n");
	else
		put(t, "minidir_memo_budget_bytes %zu\n", db->memo_budget);
	head(t, "minidir_memo_bytes", "gauge",
	     "The most each memo of the file served may take (its map or array).");
	put(t, "minidir_memo_bytes{memo=\"record\"} %zu\n", db_record_memo_bytes(db));
	put(t, "minidir_memo_bytes{memo=\"key\"} %zu\n", db->index_memo.bytes);
	size_t rec_in, key_in;
	db_memo_resident(db, &rec_in, &key_in);
	head(t, "minidir_memo_resident_bytes", "gauge",
	     "What each memo of the file served takes now: its pages written to.");
	put(t, "minidir_memo_resident_bytes{memo=\"record\"} %zu\n", rec_in);
	put(t, "minidir_memo_resident_bytes{memo=\"key\"} %zu\n", key_in);
	head(t, "minidir_memo_hits_total", "counter",
	     "Lookups a memo answered: records read, one-ID index keys found.");
	put(t, "minidir_memo_hits_total{memo=\"record\"} %llu\n",
	    (unsigned long long)n->record_hits);
	put(t, "minidir_memo_hits_total{memo=\"key\"} %llu\n", (unsigned long long)n->key_hits);
	head(t, "minidir_memo_misses_total", "counter",
	     "Lookups a memo did not answer (LMDB's B-tree did, and the memo remembered them).");
	put(t, "minidir_memo_misses_total{memo=\"record\"} %llu\n",
	    (unsigned long long)n->record_misses);
	put(t, "minidir_memo_misses_total{memo=\"key\"} %llu\n", (unsigned long long)n->key_misses);
}

int metrics_text(struct server *srv, const struct http_counts *hc, struct buf *out)
{
	struct text t = {.out = out};
	struct worker_stats *s = calloc(1, sizeof(*s)); /* 6 KiB: off the thread's stack */
	if (!s)
		return -1;
	stats_sum(srv, s);
	one(&t, "minidir_start_time_seconds", "gauge", "When the server started (Unix time).",
	    (uint64_t)srv->started);
	operations(&t, s);
	connections(&t, s);
	policies(&t, s);
	struct db_gen *g = db_gen_current(srv);
	if (g)
		memos(&t, &g->db, &s->memo);
	free(s);
	if (g) {
		one(&t, "minidir_database_generation", "gauge",
		    "The database generation served (1 at start-up, one more per reload).",
		    g->number);
		one(&t, "minidir_database_entries", "gauge", "Entries in the database served.",
		    __atomic_load_n(&g->db.entries, __ATOMIC_RELAXED));
	}
	db_gen_release(g);
	one(&t, "minidir_database_reloads_total", "counter",
	    "Database files picked up since start-up.",
	    __atomic_load_n(&srv->reloads, __ATOMIC_RELAXED));
	struct replica_status st;
	int64_t now = (int64_t)(clock_ns() / 1000000);
	if (replica_status(srv, &st))
		replication(&t, &st, now);
	struct readiness ready;
	one(&t, "minidir_ready", "gauge", "1 when /readyz answers 200.",
	    metrics_ready(srv, &ready));
	one(&t, "minidir_http_requests_total", "counter", "Requests the HTTP endpoint answered.",
	    hc->requests);
	one(&t, "minidir_http_busy_total", "counter",
	    "HTTP connections refused with 503: too many open, or out of descriptors.", hc->busy);
	one(&t, "minidir_http_timeouts_total", "counter",
	    "HTTP connections closed: the request did not arrive in time.", hc->timeouts);
	one(&t, "minidir_http_too_large_total", "counter",
	    "HTTP requests refused: request line and headers too large.", hc->too_large);
	return t.failed ? -1 : 0;
}
