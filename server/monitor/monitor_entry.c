/*
 * The pieces every cn=monitor entry is built with (monitor_entry.h): the counters'
 * snapshot, the builder, and the list of records one search filters and sends.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/dn.h"
#include "server/monitor/monitor_entry.h"
#include "server/stats_sum.h"

void mon_snapshot_take(struct server *srv, struct mon_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	stats_sum(srv, &s->total);
}

void mon_begin(struct mon_builder *b)
{
	b->n = b->nvals = b->nvlist = 0;
	b->list[0] = NULL;
}

/* The next value's slot, filled from fmt; NULL when b is full. */
__attribute__((format(printf, 2, 0))) static struct berval *value(struct mon_builder *b,
                                                                  const char *fmt, va_list ap)
{
	if (b->nvals == MON_MAX_VALUES)
		return NULL;
	int i = b->nvals++;
	vsnprintf(b->text[i], sizeof(b->text[i]), fmt, ap);
	b->vals[i].bv_val = b->text[i];
	b->vals[i].bv_len = strlen(b->text[i]);
	return &b->vals[i];
}

void mon_add(struct mon_builder *b, const char *name, const char *fmt, ...)
{
	/* One slot of vlist for the value and one for the NULL ending the attribute's list. */
	if (b->n == MON_MAX_ATTRS || b->nvlist + 2 > MON_MAX_VALUES + MON_MAX_ATTRS)
		return;
	va_list ap;
	va_start(ap, fmt);
	struct berval *v = value(b, fmt, ap);
	va_end(ap);
	if (!v)
		return;
	struct berval **vl = &b->vlist[b->nvlist];
	vl[0] = v;
	vl[1] = NULL;
	b->nvlist += 2;
	int i = b->n++;
	b->mods[i].mod_op = LDAP_MOD_BVALUES;
	b->mods[i].mod_type = (char *)name;
	b->mods[i].mod_bvalues = vl;
	b->list[i] = &b->mods[i];
	b->list[i + 1] = NULL;
}

void mon_more(struct mon_builder *b, const char *fmt, ...)
{
	/* The last attribute's list ends the used part of vlist: its NULL moves one on. */
	if (b->n == 0 || b->nvlist + 1 > MON_MAX_VALUES + MON_MAX_ATTRS)
		return;
	va_list ap;
	va_start(ap, fmt);
	struct berval *v = value(b, fmt, ap);
	va_end(ap);
	if (!v)
		return;
	b->vlist[b->nvlist - 1] = v;
	b->vlist[b->nvlist++] = NULL;
}

void mon_add_u64(struct mon_builder *b, const char *name, uint64_t v)
{
	mon_add(b, name, "%llu", (unsigned long long)v);
}

void mon_add_time(struct mon_builder *b, const char *name, time_t t)
{
	char when[32];
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%d%H%M%SZ", &tm);
	mon_add(b, name, "%s", when);
}

int mon_finish(struct server *srv, struct mon_builder *b, const char *dn, const char *structural,
               bool subs, struct mon_list *l)
{
	mon_add(b, "structuralObjectClass", "%s", structural);
	mon_add_time(b, "createTimestamp", srv->started);
	mon_add_time(b, "modifyTimestamp", srv->started);
	mon_add(b, "entryDN", "%s", dn);
	mon_add(b, "subschemaSubentry", "%s", SUBSCHEMA_DN);
	mon_add(b, "hasSubordinates", "%s", subs ? "TRUE" : "FALSE");
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 64;
		struct buf *r = realloc(l->recs, (size_t)cap * sizeof(*r));
		if (!r)
			return -1;
		memset(r + l->cap, 0, (size_t)(cap - l->cap) * sizeof(*r));
		l->recs = r;
		l->cap = cap;
	}
	struct buf key = {0};
	struct berval bdn = {strlen(dn), (char *)dn};
	struct buf *out = &l->recs[l->n];
	int rc = dn_normalize(dn, strlen(dn), NULL, &key) < 0 ||
	                 entry_encode(out, 0, key.data, key.len, &bdn, b->list) < 0
	             ? -1
	             : 0;
	buf_free(&key);
	if (rc == 0)
		l->n++;
	else
		buf_free(out);
	return rc;
}

void mon_list_free(struct mon_list *l)
{
	for (int i = 0; i < l->n; i++)
		buf_free(&l->recs[i]);
	free(l->recs);
	l->recs = NULL;
	l->n = l->cap = 0;
}
