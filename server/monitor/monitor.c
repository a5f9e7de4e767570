/*
 * cn=monitor: the server's own counters as entries, read with ldapsearch
 * (like OpenLDAP's back-monitor and 389's cn=monitor).
 *
 *   cn=monitor                      uptime, threads, connections, operations, the
 *                                   database served (entries, import time,
 *                                   generation) and how many reloads, its memos
 *                                   (memo_bytes: bytes, hits, misses)
 *   cn=<policy>,cn=monitor          per send policy: what sending cost
 *   cn=tls,cn=monitor               TLS sessions and handshakes, and whether the
 *                                   kernel does the record work (kTLS)
 *   cn=latency,cn=monitor           how long operations took, as a histogram
 *   cn=limits,cn=monitor            the bind abuse limits and max_conns_per_ip
 *   cn=replication,cn=monitor       a replica's syncrepl consumer (replica.h): state,
 *                                   provider, changes, last change and error, cookie
 *
 * Entries are built from a snapshot taken before the response starts, so the
 * numbers a client reads never include the search that reads them. Who may
 * read is monitor_access (default: the rootdn only).
 */
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/version.h" /* MINIDIR_VERSION: monitoredInfo */
#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/response.h"
#include "server/bind_limit.h"
#include "server/clock.h"
#include "server/db/db.h"
#include "server/net/conn.h"
#include "server/net/reply.h"
#include "server/net/tls.h"
#include "server/net/net.h"
#include "server/monitor/monitor.h"
#include "server/monitor/monitor_entry.h"
#include "server/replica/replica.h"

#define MONITOR_DN "cn=monitor"

static int build_server_entry(struct server *srv, const struct db_gen *g,
                              const struct mon_snapshot *s, struct mon_list *out)
{
	struct mon_builder b;
	mon_begin(&b);
	char start[32];
	struct tm tm;
	gmtime_r(&srv->started, &tm);
	strftime(start, sizeof(start), "%Y%m%d%H%M%SZ", &tm);
	/* slapd's cn=Monitor is a monitorServer (monitor_slapd.c has the rest of its tree). */
	mon_add(&b, "objectClass", "monitorServer");
	mon_more(&b, "extensibleObject");
	mon_add(&b, "cn", "monitor");
	mon_add(&b, "description", "This subtree contains monitoring/managing objects.");
	mon_add(&b, "monitoredInfo", "minidir %s", MINIDIR_VERSION);
	mon_add(&b, "vendorName", "minidir");
	mon_add(&b, "startTime", "%s", start);
	mon_add_u64(&b, "uptime", (uint64_t)(time(NULL) - srv->started));
	mon_add(&b, "threads", "%d", srv->nworkers);
	mon_add(&b, "sendPolicy", "%s", policy_name(server_policy(srv)));
	mon_add(&b, "ioEngine", "%s", worker_engine_name(srv->workers[0]));
	mon_add_u64(&b, "ioSends", s->total.io_sends);
	mon_add_u64(&b, "ioSendsMore", s->total.io_sends_more);
	mon_add_u64(&b, "ioWaits", s->total.io_waits);
	mon_add_u64(&b, "batchBytes", server_batch_bytes(srv));
	mon_add_u64(&b, "maxPendingBytes", server_max_pending_bytes(srv));
	mon_add_u64(&b, "currentConnections", s->total.connections_current);
	mon_add_u64(&b, "totalConnections", s->total.connections_total);
	mon_add_u64(&b, "shedConnections", s->total.connections_shed);
	mon_add_u64(&b, "pduTimeouts", s->total.pdu_timeouts);
	mon_add_u64(&b, "inputShedConnections", s->total.input_shed);
	mon_add_u64(&b, "proxyRefused", s->total.proxy_refused);
	mon_add_u64(&b, "proxyBadHeaders", s->total.proxy_malformed);
	mon_add_u64(&b, "opsBind", s->total.ops[STAT_OP_BIND]);
	mon_add_u64(&b, "opsSearch", s->total.ops[STAT_OP_SEARCH]);
	mon_add_u64(&b, "opsUnbind", s->total.ops[STAT_OP_UNBIND]);
	mon_add_u64(&b, "opsAbandon", s->total.ops[STAT_OP_ABANDON]);
	uint64_t other = 0; /* what slapd counts as Compare, Modify, ... Extended */
	for (int o = STAT_OP_COMPARE; o <= STAT_OP_EXTENDED; o++)
		other += s->total.ops[o];
	mon_add_u64(&b, "opsOther", other);
	mon_add_u64(&b, "entriesSent", s->total.entries_sent);
	/* The database this worker serves now (a reload is taken between operations). */
	mon_add(&b, "databaseEntries", "%zu", __atomic_load_n(&g->db.entries, __ATOMIC_RELAXED));
	mon_add(&b, "databaseCreated", "%s", g->db.created);
	mon_add_u64(&b, "databaseGeneration", g->number);
	mon_add_u64(&b, "databaseReloads", __atomic_load_n(&srv->reloads, __ATOMIC_RELAXED));
	/* The memos of the file served (memo_bytes): the most their memory may take, and what
	 * they answered since start-up (all generations). */
	if (g->db.memo_budget == DB_MEMO_UNLIMITED)
		mon_add(&b, "memoBudgetBytes", "unlimited");
	else
		mon_add_u64(&b, "memoBudgetBytes", g->db.memo_budget);
	size_t rec_in, key_in;
	db_memo_resident(&g->db, &rec_in, &key_in);
	mon_add_u64(&b, "recordMemoBytes", db_record_memo_bytes(&g->db));
	mon_add_u64(&b, "recordMemoResidentBytes", rec_in);
	mon_add_u64(&b, "recordMemoHits", s->total.memo.record_hits);
	mon_add_u64(&b, "recordMemoMisses", s->total.memo.record_misses);
	mon_add_u64(&b, "keyMemoBytes", g->db.index_memo.bytes);
	mon_add_u64(&b, "keyMemoResidentBytes", key_in);
	mon_add_u64(&b, "keyMemoHits", s->total.memo.key_hits);
	mon_add_u64(&b, "keyMemoMisses", s->total.memo.key_misses);
	return mon_finish(srv, &b, MONITOR_DN, "monitorServer", true, out);
}

static int build_policy_entry(struct server *srv, enum send_policy_id p,
                              const struct mon_snapshot *s, struct mon_list *out)
{
	const struct send_stats *st = &s->total.send[p];
	const char *name = config_policy_name(p);
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "extensibleObject");
	mon_add(&b, "cn", "%s", name);
	mon_add_u64(&b, "connections", s->total.connections_by_policy[p]);
	mon_add_u64(&b, "responses", st->responses);
	mon_add_u64(&b, "pdus", st->pdus);
	mon_add_u64(&b, "bytes", st->bytes);
	mon_add_u64(&b, "sendCalls", st->send_calls);
	mon_add_u64(&b, "setsockoptCalls", st->setsockopt_calls);
	mon_add_u64(&b, "eagain", st->eagain);
	mon_add_u64(&b, "partialWrites", st->partial);
	mon_add_u64(&b, "tlsRecords", st->tls_records);
	if (st->responses) {
		mon_add(&b, "sendCallsPerResponse", "%.2f", (double)st->send_calls / st->responses);
		mon_add(&b, "setsockoptPerResponse", "%.2f",
		        (double)st->setsockopt_calls / st->responses);
	}
	char dn[64];
	snprintf(dn, sizeof(dn), "cn=%s," MONITOR_DN, name);
	return mon_finish(srv, &b, dn, "extensibleObject", false, out);
}

/* cn=tls,cn=monitor: TLS sessions, and whether the kernel does the record work (kTLS). */
static int build_tls_entry(struct server *srv, const struct mon_snapshot *s, struct mon_list *out)
{
	struct mon_builder b;
	mon_begin(&b);
	/* slapd's cn=TLS,cn=Monitor is this entry too: a monitorContainer. */
	mon_add(&b, "objectClass", "monitorContainer");
	mon_more(&b, "extensibleObject");
	mon_add(&b, "cn", "tls");
	mon_add(&b, "description", "This subsystem contains information about TLS.");
	mon_add(&b, "tlsEnabled", "%s", srv->tls ? "TRUE" : "FALSE");
	/* TRUE with tls_ktls = yes on a kernel with the tls ULP; else records are built in user
	 * space (see server/net/tls.h). */
	mon_add(&b, "kernelTls", "%s", tls_kernel(srv->tls) ? "TRUE" : "FALSE");
	mon_add_u64(&b, "kernelTlsConnections", s->total.tls.ktls);
	mon_add_u64(&b, "tlsConnections", s->total.tls.connections);
	mon_add_u64(&b, "handshakes", s->total.tls.handshakes);
	mon_add_u64(&b, "resumedHandshakes", s->total.tls.resumed);
	mon_add_u64(&b, "handshakeFailures", s->total.tls.failures);
	mon_add_u64(&b, "startTls", s->total.tls.starttls);
	return mon_finish(srv, &b, "cn=tls," MONITOR_DN, "monitorContainer", false, out);
}

/* cn=latency,cn=monitor: latencyUnder<N>us counts operations that took less than N
 * microseconds but not less than N/2 (empty buckets left out), latencyOver<N>us the
 * slowest, and latencyMaxMicroseconds the slowest of all. */
static int build_latency_entry(struct server *srv, const struct mon_snapshot *s,
                               struct mon_list *out)
{
	struct mon_builder b;
	mon_begin(&b);
	char names[STAT_LATENCY_BUCKETS][40];
	mon_add(&b, "objectClass", "extensibleObject");
	mon_add(&b, "cn", "latency");
	uint64_t ops = 0;
	for (int i = 0; i < STAT_LATENCY_BUCKETS; i++)
		ops += s->total.latency[i];
	mon_add_u64(&b, "operations", ops);
	mon_add_u64(&b, "latencyMaxMicroseconds", s->total.latency_max_ns / 1000);
	for (int i = 0; i < STAT_LATENCY_BUCKETS; i++) {
		if (!s->total.latency[i])
			continue;
		if (i < STAT_LATENCY_BUCKETS - 1)
			snprintf(names[i], sizeof(names[i]), "latencyUnder%lluus",
			         (unsigned long long)1 << i);
		else
			snprintf(names[i], sizeof(names[i]), "latencyOver%lluus",
			         (unsigned long long)1 << (i - 1));
		mon_add_u64(&b, names[i], s->total.latency[i]);
	}
	return mon_finish(srv, &b, "cn=latency," MONITOR_DN, "extensibleObject", false, out);
}

/* cn=limits,cn=monitor: the bind abuse limits (server/bind_limit.h) and max_conns_per_ip. */
static int build_limits_entry(struct server *srv, const struct mon_snapshot *s,
                              struct mon_list *out)
{
	struct mon_builder b;
	mon_begin(&b);
	struct bind_limit_counts bc = {0};
	if (srv->bind_limit)
		bind_limit_counts(srv->bind_limit, clock_seconds(), &bc);
	mon_add(&b, "objectClass", "extensibleObject");
	mon_add(&b, "cn", "limits");
	mon_add(&b, "bindFailLimit", "%d", srv->cfg.bind_fail_limit);
	mon_add(&b, "bindFailWindow", "%d", srv->cfg.bind_fail_window);
	mon_add_u64(&b, "bindsLimited", s->total.binds_limited);
	mon_add_u64(&b, "bindsRefusedAccount", s->total.binds_refused_account);
	mon_add_u64(&b, "bindsReplayed", s->total.binds_replayed);
	mon_add_u64(&b, "bindsReplayDropped", s->total.binds_replay_dropped);
	mon_add_u64(&b, "bindFailDNsOverLimit", bc.dns_over);
	mon_add_u64(&b, "bindFailAddressesOverLimit", bc.addrs_over);
	mon_add_u64(&b, "bindFailTracked", bc.tracked);
	mon_add_u64(&b, "bindFailEvicted", bc.evicted);
	mon_add_u64(&b, "bindFailUntracked", bc.untracked);
	mon_add(&b, "maxConnsPerIp", "%d", srv->cfg.max_conns_per_ip);
	mon_add_u64(&b, "connsPerIpRefused", s->total.conns_per_ip_refused);
	return mon_finish(srv, &b, "cn=limits," MONITOR_DN, "extensibleObject", false, out);
}

static int build_replication_entry(struct server *srv, const struct replica_status *st,
                                   struct mon_list *out)
{
	struct mon_builder b;
	mon_begin(&b);
	char when[32] = "";
	struct tm tm;
	if (st->last_change) {
		gmtime_r(&st->last_change, &tm);
		strftime(when, sizeof(when), "%Y%m%d%H%M%SZ", &tm);
	}
	mon_add(&b, "objectClass", "extensibleObject");
	mon_add(&b, "cn", "replication");
	mon_add(&b, "replicationState", "%s", st->state);
	mon_add(&b, "replicationProvider", "%s", st->provider);
	mon_add_u64(&b, "replicationChanges", st->changes);
	mon_add_u64(&b, "replicationRefreshes", st->refreshes);
	if (when[0])
		mon_add(&b, "replicationLastChange", "%s", when);
	if (st->last_error[0])
		mon_add(&b, "replicationLastError", "%s", st->last_error);
	if (st->cookie[0])
		mon_add(&b, "replicationCookie", "%s", st->cookie);
	if (st->context_csn[0])
		mon_add(&b, "contextCSN", "%s", st->context_csn);
	if (st->lag_ms >= 0)
		mon_add(&b, "replicationLagMilliseconds", "%lld", (long long)st->lag_ms);
	mon_add_u64(&b, "replicationLagEntries", st->lag_entries);
	if (st->lag_changes >= 0)
		mon_add(&b, "replicationLagChanges", "%lld", (long long)st->lag_changes);
	mon_add_u64(&b, "replicationSkippedEntries", st->skipped);
	if (st->last_skipped[0]) {
		mon_add(&b, "replicationLastSkipped", "%s", st->last_skipped);
		mon_add(&b, "replicationLastSkippedReason", "%s", st->last_skipped_why);
	}
	return mon_finish(srv, &b, "cn=replication," MONITOR_DN, "extensibleObject", false, out);
}

bool monitor_holds(const struct buf *key)
{
	static const char mkey[] = "cn=monitor"; /* its reversed key, NUL included */
	return dn_key_in_subtree(key->data, key->len, (const unsigned char *)mkey, sizeof(mkey));
}

/* Whether the entry with reversed DN key k[0..klen) lies in scope from the base key
 * b[0..blen), by the keys alone (the entries are built, not read from the database). */
static bool scope_holds_key(int scope, const unsigned char *b, size_t blen, const unsigned char *k,
                            size_t klen)
{
	if (!dn_key_in_subtree(k, klen, b, blen))
		return false;
	switch (scope) {
	case LDAP_SCOPE_BASE:
		return klen == blen;
	case LDAP_SCOPE_ONELEVEL:
		return klen > blen && dn_key_parent_len(k, klen) == blen;
	case LDAP_SCOPE_SUBORDINATE:
		return klen > blen;
	}
	return true;
}

/* True if a search of scope from base (its reversed key) can reach a connection's entry,
 * cn=Connection N,cn=Connections,cn=monitor: only then are they copied (conn_list.h). */
static bool reaches_connections(int scope, const struct buf *key)
{
	static const char conns[] = "cn=Connections," MONITOR_DN;
	struct buf ck = {0};
	if (dn_normalize(conns, sizeof(conns) - 1, NULL, &ck) < 0)
		return true; /* out of memory: the entries' own building fails the same way */
	bool at = key->len == ck.len && memcmp(key->data, ck.data, ck.len) == 0;
	bool under = dn_key_in_subtree(key->data, key->len, ck.data, ck.len);
	bool parent = dn_key_in_subtree(ck.data, ck.len, key->data, key->len);
	buf_free(&ck);
	if (scope == LDAP_SCOPE_BASE)
		return under && !at;
	if (scope == LDAP_SCOPE_ONELEVEL)
		return at;
	return under || parent;
}

static bool may_read(const struct conn *c)
{
	switch (server_monitor_access(c->w->srv)) {
	case MONITOR_ANONYMOUS:
		return true;
	case MONITOR_AUTHENTICATED:
		return c->auth != AUTH_ANONYMOUS;
	case MONITOR_ROOTDN:
		return c->auth == AUTH_ROOT;
	case MONITOR_NONE:
		break;
	}
	return false;
}

void monitor_search(struct conn *c, struct ldap_request *req, const struct buf *key)
{
	struct search_request *r = &req->u.search;
	struct server *srv = c->w->srv;
	if (!may_read(c)) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_INSUFFICIENT_ACCESS, NULL,
		           "cn=monitor is not readable by this identity (monitor_access)");
		return;
	}
	struct mon_snapshot snap;
	mon_snapshot_take(srv, &snap);
	struct mon_list l = {0};
	int rc = build_server_entry(srv, db_worker(c->w)->gen, &snap, &l);
	for (int p = 0; p < SEND_POLICY_N && rc == 0; p++)
		rc = build_policy_entry(srv, (enum send_policy_id)p, &snap, &l);
	if (rc == 0)
		rc = build_latency_entry(srv, &snap, &l);
	if (rc == 0)
		rc = build_tls_entry(srv, &snap, &l);
	if (rc == 0)
		rc = build_limits_entry(srv, &snap, &l);
	struct replica_status rs;
	if (rc == 0 && replica_status(srv, &rs))
		rc = build_replication_entry(srv, &rs, &l);
	if (rc == 0)
		rc = monitor_slapd_build(srv, &snap, reaches_connections(r->scope, key), &l);
	struct entry_view *e = rc == 0 ? calloc((size_t)l.n + 1, sizeof(*e)) : NULL;
	if (!e)
		rc = -1;
	int n = l.n;
	bool base_found = false;
	for (int i = 0; i < n && rc == 0; i++) {
		rc = entry_parse(l.recs[i].data, l.recs[i].len, &e[i]);
		if (rc == 0 && e[i].keylen == key->len &&
		    memcmp(e[i].key, key->data, key->len) == 0)
			base_found = true;
	}
	reply_begin(c);
	int result = rc ? LDAP_OTHER : base_found ? LDAP_SUCCESS : LDAP_NO_SUCH_OBJECT;
	struct attr_select sel;
	attr_select_init(&sel, r->attrs, r->nattrs, r->typesonly);
	/* The schema's operational attributes (slapd's monitor ones, structuralObjectClass,
	 * entryDN, vendorName, contextCSN ...) go out for "+" or by name, as slapd's do. */
	sel.check_operational = true;
	int sent = 0;
	for (int i = 0; i < n && result == LDAP_SUCCESS; i++) {
		if (!scope_holds_key(r->scope, key->data, key->len, e[i].key, e[i].keylen) ||
		    filter_eval(r->filter, e[i].attrs, e[i].attrslen, &c->w->scratch) !=
		        FILTER_TRUE)
			continue;
		if (r->sizelimit && sent == r->sizelimit) {
			result = LDAP_SIZELIMIT_EXCEEDED;
			break;
		}
		if (reply_entry(c, req->msgid, &ENTRY_STORED(&e[i]), &sel, NULL, 0) < 0)
			break;
		sent++;
	}
	reply_result(c, req->msgid, LDAP_RES_SEARCH_RESULT, result,
	             result == LDAP_NO_SUCH_OBJECT ? MONITOR_DN : NULL, NULL, NULL);
	free(e);
	mon_list_free(&l);
}
