/*
 * cn=monitor: the server's own counters as entries, read with ldapsearch
 * (like OpenLDAP's back-monitor and 389's cn=monitor).
 *
 *   cn=monitor                      uptime, threads, connections, operations, the
 *                                   database served (entries, import time,
 *                                   generation) and how many reloads
 *   cn=<policy>,cn=monitor          per send policy: what sending cost
 *   cn=tls,cn=monitor               TLS sessions and handshakes, and whether the
 *                                   kernel does the record work (kTLS)
 *   cn=latency,cn=monitor           how long operations took, as a histogram
 *   cn=replication,cn=monitor       a replica's syncrepl consumer (replica.h): state,
 *                                   provider, changes, last change and error, cookie
 *
 * Entries are built from a snapshot taken before the response starts, so the
 * numbers a client reads never include the search that reads them. Who may
 * read is monitor_access (default: the rootdn only).
 */
#include <ldap.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "protocol/response.h"
#include "server/db/db.h"
#include "server/net/net.h"
#include "server/ops/ops.h"
#include "server/replica/replica.h"
#include "server/ops/search_plan.h"

#define MONITOR_DN "cn=monitor"
#define MONITOR_MAX_ATTRS 48
#define MONITOR_ENTRIES (4 + SEND_POLICY_N)

/* One entry under construction: attributes with a single value each. */
struct mon_builder {
	LDAPMod mods[MONITOR_MAX_ATTRS];
	LDAPMod *list[MONITOR_MAX_ATTRS + 1];
	struct berval vals[MONITOR_MAX_ATTRS];
	struct berval *vlist[MONITOR_MAX_ATTRS][2];
	char text[MONITOR_MAX_ATTRS][256];
	int n;
};

__attribute__((format(printf, 3, 4))) static void add(struct mon_builder *b, const char *name,
                                                      const char *fmt, ...)
{
	if (b->n == MONITOR_MAX_ATTRS)
		return;
	int i = b->n++;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->text[i], sizeof(b->text[i]), fmt, ap);
	va_end(ap);
	b->vals[i].bv_val = b->text[i];
	b->vals[i].bv_len = strlen(b->text[i]);
	b->vlist[i][0] = &b->vals[i];
	b->vlist[i][1] = NULL;
	b->mods[i].mod_op = LDAP_MOD_BVALUES;
	b->mods[i].mod_type = (char *)name;
	b->mods[i].mod_bvalues = b->vlist[i];
	b->list[i] = &b->mods[i];
	b->list[i + 1] = NULL;
}

static void add_u64(struct mon_builder *b, const char *name, uint64_t v)
{
	add(b, name, "%llu", (unsigned long long)v);
}

/* Appends the record of entry dn built from b to out. */
static int finish(struct mon_builder *b, const char *dn, struct buf *out)
{
	struct buf key = {0};
	struct berval bdn = {strlen(dn), (char *)dn};
	int rc = dn_normalize(dn, strlen(dn), NULL, &key) < 0 ||
	                 entry_encode(out, 0, key.data, key.len, &bdn, b->list) < 0
	             ? -1
	             : 0;
	buf_free(&key);
	return rc;
}

struct snapshot {
	struct worker_stats total;
};

static void take_snapshot(struct server *srv, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	struct worker_stats *t = &s->total;
	for (int i = 0; i < srv->nworkers; i++) {
		struct worker_stats *w = &srv->workers[i]->stats;
		for (int p = 0; p < SEND_POLICY_N; p++) {
			struct send_stats *a = &t->send[p], *b = &w->send[p];
			a->responses += STAT_READ(b->responses);
			a->pdus += STAT_READ(b->pdus);
			a->bytes += STAT_READ(b->bytes);
			a->send_calls += STAT_READ(b->send_calls);
			a->setsockopt_calls += STAT_READ(b->setsockopt_calls);
			a->eagain += STAT_READ(b->eagain);
			a->partial += STAT_READ(b->partial);
			a->tls_records += STAT_READ(b->tls_records);
			t->connections_by_policy[p] += STAT_READ(w->connections_by_policy[p]);
		}
		for (int o = 0; o < STAT_OP_N; o++)
			t->ops[o] += STAT_READ(w->ops[o]);
		t->connections_total += STAT_READ(w->connections_total);
		t->connections_current += STAT_READ(w->connections_current);
		t->connections_shed += STAT_READ(w->connections_shed);
		t->pdu_timeouts += STAT_READ(w->pdu_timeouts);
		t->input_shed += STAT_READ(w->input_shed);
		t->proxy_refused += STAT_READ(w->proxy_refused);
		t->proxy_malformed += STAT_READ(w->proxy_malformed);
		t->tls.connections += STAT_READ(w->tls.connections);
		t->tls.handshakes += STAT_READ(w->tls.handshakes);
		t->tls.resumed += STAT_READ(w->tls.resumed);
		t->tls.failures += STAT_READ(w->tls.failures);
		t->tls.starttls += STAT_READ(w->tls.starttls);
		t->tls.ktls += STAT_READ(w->tls.ktls);
		t->entries_sent += STAT_READ(w->entries_sent);
		t->io_sends += STAT_READ(w->io_sends);
		t->io_sends_more += STAT_READ(w->io_sends_more);
		t->io_waits += STAT_READ(w->io_waits);
		for (int b = 0; b < STAT_LATENCY_BUCKETS; b++)
			t->latency[b] += STAT_READ(w->latency[b]);
		uint64_t max = STAT_READ(w->latency_max_ns);
		if (max > t->latency_max_ns)
			t->latency_max_ns = max;
	}
}

static int build_server_entry(struct server *srv, const struct db_gen *g, const struct snapshot *s,
                              struct buf *out)
{
	struct mon_builder b = {.n = 0};
	char start[32];
	struct tm tm;
	gmtime_r(&srv->started, &tm);
	strftime(start, sizeof(start), "%Y%m%d%H%M%SZ", &tm);
	add(&b, "objectClass", "extensibleObject");
	add(&b, "cn", "monitor");
	add(&b, "vendorName", "minidir");
	add(&b, "startTime", "%s", start);
	add_u64(&b, "uptime", (uint64_t)(time(NULL) - srv->started));
	add(&b, "threads", "%d", srv->nworkers);
	add(&b, "sendPolicy", "%s", config_policy_name(server_policy(srv)->id));
	add(&b, "ioEngine", "%s", net_worker(srv->workers[0])->engine->name);
	add_u64(&b, "ioSends", s->total.io_sends);
	add_u64(&b, "ioSendsMore", s->total.io_sends_more);
	add_u64(&b, "ioWaits", s->total.io_waits);
	add_u64(&b, "batchBytes", server_batch_bytes(srv));
	add_u64(&b, "maxPendingBytes", server_max_pending_bytes(srv));
	add_u64(&b, "currentConnections", s->total.connections_current);
	add_u64(&b, "totalConnections", s->total.connections_total);
	add_u64(&b, "shedConnections", s->total.connections_shed);
	add_u64(&b, "pduTimeouts", s->total.pdu_timeouts);
	add_u64(&b, "inputShedConnections", s->total.input_shed);
	add_u64(&b, "proxyRefused", s->total.proxy_refused);
	add_u64(&b, "proxyBadHeaders", s->total.proxy_malformed);
	add_u64(&b, "opsBind", s->total.ops[STAT_OP_BIND]);
	add_u64(&b, "opsSearch", s->total.ops[STAT_OP_SEARCH]);
	add_u64(&b, "opsUnbind", s->total.ops[STAT_OP_UNBIND]);
	add_u64(&b, "opsAbandon", s->total.ops[STAT_OP_ABANDON]);
	add_u64(&b, "opsOther", s->total.ops[STAT_OP_OTHER]);
	add_u64(&b, "entriesSent", s->total.entries_sent);
	/* The database this worker serves now (a reload is taken between operations). */
	add(&b, "databaseEntries", "%zu", g->db.entries);
	add(&b, "databaseCreated", "%s", g->db.created);
	add_u64(&b, "databaseGeneration", g->number);
	add_u64(&b, "databaseReloads", __atomic_load_n(&srv->reloads, __ATOMIC_RELAXED));
	return finish(&b, MONITOR_DN, out);
}

static int build_policy_entry(enum send_policy_id p, const struct snapshot *s, struct buf *out)
{
	const struct send_stats *st = &s->total.send[p];
	const char *name = config_policy_name(p);
	struct mon_builder b = {.n = 0};
	add(&b, "objectClass", "extensibleObject");
	add(&b, "cn", "%s", name);
	add_u64(&b, "connections", s->total.connections_by_policy[p]);
	add_u64(&b, "responses", st->responses);
	add_u64(&b, "pdus", st->pdus);
	add_u64(&b, "bytes", st->bytes);
	add_u64(&b, "sendCalls", st->send_calls);
	add_u64(&b, "setsockoptCalls", st->setsockopt_calls);
	add_u64(&b, "eagain", st->eagain);
	add_u64(&b, "partialWrites", st->partial);
	add_u64(&b, "tlsRecords", st->tls_records);
	if (st->responses) {
		add(&b, "sendCallsPerResponse", "%.2f", (double)st->send_calls / st->responses);
		add(&b, "setsockoptPerResponse", "%.2f",
		    (double)st->setsockopt_calls / st->responses);
	}
	char dn[64];
	snprintf(dn, sizeof(dn), "cn=%s," MONITOR_DN, name);
	return finish(&b, dn, out);
}

/* cn=tls,cn=monitor: TLS sessions, and whether the kernel does the record work (kTLS). */
static int build_tls_entry(struct server *srv, const struct snapshot *s, struct buf *out)
{
	struct mon_builder b = {.n = 0};
	add(&b, "objectClass", "extensibleObject");
	add(&b, "cn", "tls");
	add(&b, "tlsEnabled", "%s", srv->tls ? "TRUE" : "FALSE");
	/* TRUE with tls_ktls = yes on a kernel with the tls ULP; else records are built in user
	 * space (see server/net/tls.h). */
	add(&b, "kernelTls", "%s", tls_kernel(srv->tls) ? "TRUE" : "FALSE");
	add_u64(&b, "kernelTlsConnections", s->total.tls.ktls);
	add_u64(&b, "tlsConnections", s->total.tls.connections);
	add_u64(&b, "handshakes", s->total.tls.handshakes);
	add_u64(&b, "resumedHandshakes", s->total.tls.resumed);
	add_u64(&b, "handshakeFailures", s->total.tls.failures);
	add_u64(&b, "startTls", s->total.tls.starttls);
	return finish(&b, "cn=tls," MONITOR_DN, out);
}

/* cn=latency,cn=monitor: latencyUnder<N>us counts operations that took less than N
 * microseconds but not less than N/2 (empty buckets left out), latencyOver<N>us the
 * slowest, and latencyMaxMicroseconds the slowest of all. */
static int build_latency_entry(const struct snapshot *s, struct buf *out)
{
	struct mon_builder b = {.n = 0};
	char names[STAT_LATENCY_BUCKETS][40];
	add(&b, "objectClass", "extensibleObject");
	add(&b, "cn", "latency");
	uint64_t ops = 0;
	for (int i = 0; i < STAT_LATENCY_BUCKETS; i++)
		ops += s->total.latency[i];
	add_u64(&b, "operations", ops);
	add_u64(&b, "latencyMaxMicroseconds", s->total.latency_max_ns / 1000);
	for (int i = 0; i < STAT_LATENCY_BUCKETS; i++) {
		if (!s->total.latency[i])
			continue;
		if (i < STAT_LATENCY_BUCKETS - 1)
			snprintf(names[i], sizeof(names[i]), "latencyUnder%lluus",
			         (unsigned long long)1 << i);
		else
			snprintf(names[i], sizeof(names[i]), "latencyOver%lluus",
			         (unsigned long long)1 << (i - 1));
		add_u64(&b, names[i], s->total.latency[i]);
	}
	return finish(&b, "cn=latency," MONITOR_DN, out);
}

static int build_replication_entry(const struct replica_status *st, struct buf *out)
{
	struct mon_builder b = {.n = 0};
	char when[32] = "";
	struct tm tm;
	if (st->last_change) {
		gmtime_r(&st->last_change, &tm);
		strftime(when, sizeof(when), "%Y%m%d%H%M%SZ", &tm);
	}
	add(&b, "objectClass", "extensibleObject");
	add(&b, "cn", "replication");
	add(&b, "replicationState", "%s", st->state);
	add(&b, "replicationProvider", "%s", st->provider);
	add_u64(&b, "replicationChanges", st->changes);
	add_u64(&b, "replicationRefreshes", st->refreshes);
	if (when[0])
		add(&b, "replicationLastChange", "%s", when);
	if (st->last_error[0])
		add(&b, "replicationLastError", "%s", st->last_error);
	if (st->cookie[0])
		add(&b, "replicationCookie", "%s", st->cookie);
	if (st->context_csn[0])
		add(&b, "contextCSN", "%s", st->context_csn);
	if (st->lag_ms >= 0)
		add(&b, "replicationLagMilliseconds", "%lld", (long long)st->lag_ms);
	add_u64(&b, "replicationLagEntries", st->lag_entries);
	add_u64(&b, "replicationSkippedEntries", st->skipped);
	if (st->last_skipped[0]) {
		add(&b, "replicationLastSkipped", "%s", st->last_skipped);
		add(&b, "replicationLastSkippedReason", "%s", st->last_skipped_why);
	}
	return finish(&b, "cn=replication," MONITOR_DN, out);
}

bool op_monitor_holds(const struct buf *key)
{
	static const char mkey[] = "cn=monitor"; /* its reversed key, NUL included */
	return dn_key_in_subtree(key->data, key->len, (const unsigned char *)mkey, sizeof(mkey));
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

void op_monitor_search(struct conn *c, struct ldap_request *req, const struct buf *key)
{
	struct search_request *r = &req->u.search;
	struct server *srv = c->w->srv;
	if (!may_read(c)) {
		reply_done(c, req->msgid, LDAP_RES_SEARCH_RESULT, LDAP_INSUFFICIENT_ACCESS, NULL,
		           "cn=monitor is not readable by this identity (monitor_access)");
		return;
	}
	struct snapshot snap;
	take_snapshot(srv, &snap);
	struct buf recs[MONITOR_ENTRIES] = {{0}};
	int rc = build_server_entry(srv, db_worker(c->w)->gen, &snap, &recs[0]);
	for (int p = 0; p < SEND_POLICY_N && rc == 0; p++)
		rc = build_policy_entry((enum send_policy_id)p, &snap, &recs[1 + p]);
	if (rc == 0)
		rc = build_latency_entry(&snap, &recs[1 + SEND_POLICY_N]);
	if (rc == 0)
		rc = build_tls_entry(srv, &snap, &recs[2 + SEND_POLICY_N]);
	int n = MONITOR_ENTRIES - 1; /* the replication entry: a replica's only */
	struct replica_status rs;
	if (rc == 0 && replica_status(srv, &rs))
		rc = build_replication_entry(&rs, &recs[n++]);
	struct entry_view e[MONITOR_ENTRIES];
	bool base_found = false;
	for (int i = 0; i < n && rc == 0; i++) {
		rc = entry_parse(recs[i].data, recs[i].len, &e[i]);
		if (rc == 0 && e[i].keylen == key->len &&
		    memcmp(e[i].key, key->data, key->len) == 0)
			base_found = true;
	}
	reply_begin(c);
	int result = rc ? LDAP_OTHER : base_found ? LDAP_SUCCESS : LDAP_NO_SUCH_OBJECT;
	struct attr_select sel;
	attr_select_init(&sel, r->attrs, r->nattrs, r->typesonly);
	int sent = 0;
	for (int i = 0; i < n && result == LDAP_SUCCESS; i++) {
		if (!search_scope_holds_key(r->scope, key->data, key->len, e[i].key, e[i].keylen) ||
		    filter_eval(r->filter, e[i].attrs, e[i].attrslen, &c->w->scratch) !=
		        FILTER_TRUE)
			continue;
		if (r->sizelimit && sent == r->sizelimit) {
			result = LDAP_SIZELIMIT_EXCEEDED;
			break;
		}
		if (reply_entry(c, req->msgid, e[i].op, e[i].oplen, &sel, NULL, 0) < 0)
			break;
		sent++;
	}
	reply_result(c, req->msgid, LDAP_RES_SEARCH_RESULT, result,
	             result == LDAP_NO_SUCH_OBJECT ? MONITOR_DN : NULL, NULL, NULL);
	for (int i = 0; i < MONITOR_ENTRIES; i++)
		buf_free(&recs[i]);
}
