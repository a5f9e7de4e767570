/*
 * slapd's back-monitor tree, beside minidir's own entries under cn=monitor, for the
 * tools written for slapd (openldap_exporter, Zabbix and Nagios templates): the DNs,
 * object classes and attributes slapd 2.5 shows, from the same counters
 * (docs/monitoring.md lists what each means here and what differs).
 *
 *   cn=Connections   cn=Total, cn=Current, cn=Max File Descriptors (monitorCounter), and
 *                    cn=Connection N per open connection (conn_list.h)
 *   cn=Operations    cn=Bind ... cn=Extended: monitorOpInitiated, monitorOpCompleted
 *   cn=Statistics    cn=Bytes, cn=PDU, cn=Entries, cn=Referrals (monitorCounter)
 *   cn=Threads       cn=Max, cn=Open, cn=Active, ... (monitoredInfo)
 *   cn=Time          cn=Start, cn=Current (monitorTimestamp), cn=Uptime (monitoredInfo)
 *   cn=Listeners     cn=Listener N: monitorConnectionLocalAddress, labeledURI
 *   cn=Databases     cn=Database 0: the database served (namingContexts, monitoredInfo)
 *
 * cn=Monitor itself and cn=TLS are minidir's cn=monitor and cn=tls (monitor.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "server/net/conn_list.h"
#include "server/monitor/monitor_entry.h"

#define SLAPD_DN "cn=Monitor"
/* At most this many cn=Connection N entries in one search: what a search can make the
 * server copy and send is bounded (docs/reliability.md). */
#define MON_CONNS_MAX 1024

/* A container: monitorContainer with its description, and its children below it. */
static int container(struct server *srv, const char *cn, const char *what, struct mon_list *l)
{
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitorContainer");
	mon_add(&b, "cn", "%s", cn);
	mon_add(&b, "description", "This subsystem contains information about %s.", what);
	char dn[64];
	snprintf(dn, sizeof(dn), "cn=%s," SLAPD_DN, cn);
	return mon_finish(srv, &b, dn, "monitorContainer", true, l);
}

/* cn=<cn>,cn=<parent>,cn=Monitor as a monitorCounterObject of value v. */
static int counter(struct server *srv, const char *parent, const char *cn, uint64_t v,
                   struct mon_list *l)
{
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitorCounterObject");
	mon_add(&b, "cn", "%s", cn);
	mon_add_u64(&b, "monitorCounter", v);
	char dn[96];
	snprintf(dn, sizeof(dn), "cn=%s,cn=%s," SLAPD_DN, cn, parent);
	return mon_finish(srv, &b, dn, "monitorCounterObject", false, l);
}

/* cn=<cn>,cn=Threads as a monitoredObject: monitoredInfo and a description. */
static int thread_info(struct server *srv, const char *cn, const char *info, const char *desc,
                       struct mon_list *l)
{
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitoredObject");
	mon_add(&b, "cn", "%s", cn);
	mon_add(&b, "monitoredInfo", "%s", info);
	mon_add(&b, "description", "%s", desc);
	char dn[96];
	snprintf(dn, sizeof(dn), "cn=%s,cn=Threads," SLAPD_DN, cn);
	return mon_finish(srv, &b, dn, "monitoredObject", false, l);
}

static int connection(struct server *srv, const struct conn_info *ci, struct mon_list *l)
{
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitorConnection");
	mon_add(&b, "cn", "Connection %llu", (unsigned long long)ci->id);
	mon_add_u64(&b, "monitorConnectionNumber", ci->id);
	mon_add(&b, "monitorConnectionProtocol", "3"); /* LDAPv3 only */
	uint64_t executing = ci->ops_taken - ci->ops_answered;
	mon_add_u64(&b, "monitorConnectionOpsReceived", ci->ops_taken);
	mon_add_u64(&b, "monitorConnectionOpsExecuting", executing);
	mon_add_u64(&b, "monitorConnectionOpsPending", 0); /* taken in order, none queued */
	mon_add_u64(&b, "monitorConnectionOpsCompleted", ci->ops_answered);
	mon_add_u64(&b, "monitorConnectionOpsAsync", 0);
	/* slapd's counts of its connection_get/read/write calls; here the requests read (a
	 * loop round may read several) and the operations answered. */
	mon_add_u64(&b, "monitorConnectionGet", ci->ops_taken);
	mon_add_u64(&b, "monitorConnectionRead", ci->ops_taken);
	mon_add_u64(&b, "monitorConnectionWrite", ci->ops_answered);
	mon_add(&b, "monitorConnectionAuthzDN", "%s", ci->authz);
	mon_add(&b, "monitorConnectionListener", "%s", ci->listener);
	mon_add(&b, "monitorConnectionPeerDomain", "unknown"); /* no reverse lookups */
	mon_add(&b, "monitorConnectionPeerAddress", "%s", ci->peer);
	if (ci->local[0])
		mon_add(&b, "monitorConnectionLocalAddress", "%s", ci->local);
	mon_add_time(&b, "monitorConnectionStartTime", ci->accepted);
	mon_add_time(&b, "monitorConnectionActivityTime", ci->active);
	char dn[96];
	snprintf(dn, sizeof(dn), "cn=Connection %llu,cn=Connections," SLAPD_DN,
	         (unsigned long long)ci->id);
	return mon_finish(srv, &b, dn, "monitorConnection", false, l);
}

static int connections(struct server *srv, const struct mon_snapshot *s, bool with_conns,
                       struct mon_list *l)
{
	struct rlimit rl;
	uint64_t fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (uint64_t)rl.rlim_cur : 0;
	int rc = container(srv, "Connections", "connections", l);
	if (rc == 0)
		rc = counter(srv, "Connections", "Max File Descriptors", fds, l);
	if (rc == 0)
		rc = counter(srv, "Connections", "Total", s->total.connections_total, l);
	if (rc == 0)
		rc = counter(srv, "Connections", "Current", s->total.connections_current, l);
	if (rc || !with_conns)
		return rc;
	struct conn_info *ci = malloc(MON_CONNS_MAX * sizeof(*ci));
	if (!ci)
		return -1;
	size_t n = conn_list(srv, ci, MON_CONNS_MAX);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = connection(srv, &ci[i], l);
	free(ci);
	return rc;
}

static int operations(struct server *srv, const struct mon_snapshot *s, struct mon_list *l)
{
	/* In slapd's order, each with the counter it is counted in (stats.h). */
	static const struct {
		const char *cn;
		enum stat_op op;
	} ops[] = {
	    {"Bind", STAT_OP_BIND},       {"Unbind", STAT_OP_UNBIND},
	    {"Search", STAT_OP_SEARCH},   {"Compare", STAT_OP_COMPARE},
	    {"Modify", STAT_OP_MODIFY},   {"Modrdn", STAT_OP_MODRDN},
	    {"Add", STAT_OP_ADD},         {"Delete", STAT_OP_DELETE},
	    {"Abandon", STAT_OP_ABANDON}, {"Extended", STAT_OP_EXTENDED},
	};
	uint64_t in = 0, done = 0;
	for (int o = 0; o < STAT_OP_N; o++) {
		in += s->total.ops[o];
		done += s->total.ops_done[o];
	}
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitorContainer");
	mon_add(&b, "cn", "Operations");
	mon_add(&b, "description",
	        "This subsystem contains information about performed operations.");
	mon_add_u64(&b, "monitorOpInitiated", in);
	mon_add_u64(&b, "monitorOpCompleted", done);
	int rc = mon_finish(srv, &b, "cn=Operations," SLAPD_DN, "monitorContainer", true, l);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && rc == 0; i++) {
		mon_begin(&b);
		mon_add(&b, "objectClass", "monitorOperation");
		mon_add(&b, "cn", "%s", ops[i].cn);
		mon_add_u64(&b, "monitorOpInitiated", s->total.ops[ops[i].op]);
		mon_add_u64(&b, "monitorOpCompleted", s->total.ops_done[ops[i].op]);
		char dn[64];
		snprintf(dn, sizeof(dn), "cn=%s,cn=Operations," SLAPD_DN, ops[i].cn);
		rc = mon_finish(srv, &b, dn, "monitorOperation", false, l);
	}
	return rc;
}

static int statistics(struct server *srv, const struct mon_snapshot *s, struct mon_list *l)
{
	uint64_t bytes = 0, pdus = 0;
	for (int p = 0; p < SEND_POLICY_N; p++) {
		bytes += s->total.send[p].bytes;
		pdus += s->total.send[p].pdus;
	}
	int rc = container(srv, "Statistics", "statistics", l);
	if (rc == 0)
		rc = counter(srv, "Statistics", "Bytes", bytes, l);
	if (rc == 0)
		rc = counter(srv, "Statistics", "PDU", pdus, l);
	if (rc == 0)
		rc = counter(srv, "Statistics", "Entries", s->total.entries_sent, l);
	if (rc == 0) /* minidir sends no search references */
		rc = counter(srv, "Statistics", "Referrals", 0, l);
	return rc;
}

static int threads(struct server *srv, struct mon_list *l)
{
	/* Workers are event loops, each running from start to stop: configured, open and
	 * active are one number (NULL below), and none waits to start. */
	static const struct {
		const char *cn, *info, *desc;
	} t[] = {
	    {"Max", NULL, "Maximum number of threads as configured"},
	    {"Max Pending", "0", "Maximum number of pending threads"},
	    {"Open", NULL, "Number of open threads"},
	    {"Starting", "0", "Number of threads being started"},
	    {"Active", NULL, "Number of active threads"},
	    {"Pending", "0", "Number of pending threads"},
	    {"Backload", NULL, "Number of active plus pending threads"},
	    {"State", "running", "Thread pool state"},
	};
	char nw[16];
	snprintf(nw, sizeof(nw), "%d", srv->nworkers);
	int rc = container(srv, "Threads", "threads", l);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]) && rc == 0; i++)
		rc = thread_info(srv, t[i].cn, t[i].info ? t[i].info : nw, t[i].desc, l);
	return rc;
}

static int times(struct server *srv, struct mon_list *l)
{
	time_t now = time(NULL);
	struct mon_builder b;
	int rc = container(srv, "Time", "time", l);
	const char *cn[] = {"Start", "Current", "Uptime"};
	for (int i = 0; i < 3 && rc == 0; i++) {
		mon_begin(&b);
		mon_add(&b, "objectClass", "monitoredObject");
		mon_add(&b, "cn", "%s", cn[i]);
		if (i < 2)
			mon_add_time(&b, "monitorTimestamp", i == 0 ? srv->started : now);
		else
			mon_add(&b, "monitoredInfo", "%lld", (long long)(now - srv->started));
		char dn[64];
		snprintf(dn, sizeof(dn), "cn=%s,cn=Time," SLAPD_DN, cn[i]);
		rc = mon_finish(srv, &b, dn, "monitoredObject", false, l);
	}
	return rc;
}

static int listeners(struct server *srv, struct mon_list *l)
{
	int rc = container(srv, "Listeners", "active listeners", l);
	for (int i = 0; i < srv->cfg.nlisten && rc == 0; i++) {
		const struct listen_addr *a = &srv->cfg.listen[i];
		/* The URL as bound (a port 0 resolved): scheme://host:port/ */
		const char *url = srv->listen_urls[i], *hp = strstr(url, "://");
		hp = hp ? hp + 3 : url;
		struct mon_builder b;
		mon_begin(&b);
		mon_add(&b, "objectClass", "monitoredObject");
		mon_add(&b, "cn", "Listener %d", i);
		if (a->scheme == LISTEN_LDAPI)
			mon_add(&b, "monitorConnectionLocalAddress", "PATH=%s", a->path);
		else
			mon_add(&b, "monitorConnectionLocalAddress", "IP=%.*s",
			        (int)(strlen(hp) - (hp[0] && hp[strlen(hp) - 1] == '/')), hp);
		mon_add(&b, "labeledURI", "%s", url);
		char dn[64];
		snprintf(dn, sizeof(dn), "cn=Listener %d,cn=Listeners," SLAPD_DN, i);
		rc = mon_finish(srv, &b, dn, "monitoredObject", false, l);
	}
	return rc;
}

static int databases(struct server *srv, struct mon_list *l)
{
	struct mon_builder b;
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitorContainer");
	mon_add(&b, "cn", "Databases");
	mon_add(&b, "description",
	        "This subsystem contains information about configured databases.");
	mon_add(&b, "readOnly", "TRUE");
	mon_add(&b, "namingContexts", "%s", srv->cfg.suffix);
	mon_add(&b, "monitorContext", SLAPD_DN);
	int rc = mon_finish(srv, &b, "cn=Databases," SLAPD_DN, "monitorContainer", true, l);
	if (rc)
		return rc;
	/* The one database: an LMDB file, as slapd's back-mdb; a shadow on a replica. */
	mon_begin(&b);
	mon_add(&b, "objectClass", "monitoredObject");
	mon_add(&b, "cn", "Database 0");
	mon_add(&b, "monitoredInfo", "mdb");
	mon_add(&b, "monitorIsShadow", "%s",
	        __atomic_load_n(&srv->replica, __ATOMIC_ACQUIRE) ? "TRUE" : "FALSE");
	mon_add(&b, "namingContexts", "%s", srv->cfg.suffix);
	mon_add(&b, "readOnly", "TRUE");
	return mon_finish(srv, &b, "cn=Database 0,cn=Databases," SLAPD_DN, "monitoredObject", false,
	                  l);
}

int monitor_slapd_build(struct server *srv, const struct mon_snapshot *s, bool with_conns,
                        struct mon_list *l)
{
	int rc = connections(srv, s, with_conns, l);
	if (rc == 0)
		rc = operations(srv, s, l);
	if (rc == 0)
		rc = statistics(srv, s, l);
	if (rc == 0)
		rc = threads(srv, l);
	if (rc == 0)
		rc = times(srv, l);
	if (rc == 0)
		rc = listeners(srv, l);
	if (rc == 0)
		rc = databases(srv, l);
	return rc;
}
