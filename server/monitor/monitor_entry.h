/*
 * The entries under cn=monitor, built for one search (monitor.c, monitor_slapd.c):
 * a snapshot of the workers' counters, an entry builder, and the growing list of
 * records the search then filters and sends. server/monitor/'s own header.
 *
 * Ownership: a mon_list owns its records (mon_list_free); a builder borrows the names
 * and copies the values (each cut to MON_VALUE_BYTES - 1 bytes).
 */
#ifndef MINIDIR_SERVER_MONITOR_MONITOR_ENTRY_H
#define MINIDIR_SERVER_MONITOR_MONITOR_ENTRY_H

#include <ldap.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "server/server.h"
#include "server/stats.h"

#define MON_MAX_ATTRS 64  /* cn=monitor has 43 */
#define MON_MAX_VALUES 72 /* in all, over its attributes */
#define MON_VALUE_BYTES 256

/* The workers' counters summed, read once before the entries are built. */
struct mon_snapshot {
	struct worker_stats total;
};
void mon_snapshot_take(struct server *srv, struct mon_snapshot *s);

/* One entry under construction. */
struct mon_builder {
	LDAPMod mods[MON_MAX_ATTRS];
	LDAPMod *list[MON_MAX_ATTRS + 1];
	struct berval vals[MON_MAX_VALUES];
	struct berval *vlist[MON_MAX_VALUES + MON_MAX_ATTRS];
	char text[MON_MAX_VALUES][MON_VALUE_BYTES];
	int n, nvals, nvlist;
};

/* Starts b empty. */
void mon_begin(struct mon_builder *b);
/* Adds attribute name (borrowed) with one value; mon_more adds a value to the last one.
 * Past the limits above the value is left out. */
__attribute__((format(printf, 3, 4))) void mon_add(struct mon_builder *b, const char *name,
                                                   const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void mon_more(struct mon_builder *b, const char *fmt, ...);
void mon_add_u64(struct mon_builder *b, const char *name, uint64_t v);
/* Adds name with a GeneralizedTime value for t (UTC). */
void mon_add_time(struct mon_builder *b, const char *name, time_t t);

/* The records built for one search. */
struct mon_list {
	struct buf *recs;
	int n, cap;
};

/*
 * Ends b as entry dn of l: with the operational attributes slapd gives every entry
 * of cn=Monitor (structuralObjectClass: structural, entryDN, subschemaSubentry,
 * hasSubordinates: subs, createTimestamp and modifyTimestamp: the start time).
 * Returns 0, or -1 when out of memory.
 */
int mon_finish(struct server *srv, struct mon_builder *b, const char *dn, const char *structural,
               bool subs, struct mon_list *l);
void mon_list_free(struct mon_list *l);

/* slapd's back-monitor tree beside minidir's own (monitor_slapd.c): appends its entries
 * to l. with_conns: the per-connection entries too (a search that can reach them).
 * Returns 0 or -1. */
int monitor_slapd_build(struct server *srv, const struct mon_snapshot *s, bool with_conns,
                        struct mon_list *l);

#endif
