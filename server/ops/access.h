/*
 * Access rules: what a connection's identity may do with an entry of the
 * database. One place for search, compare, sorting, filters and bind, so that
 * they cannot disagree. The rules are the config's access keys
 * (conf/access_rule.h), compiled once against the schema; they follow slapd's
 * model: the first rule whose WHAT holds for the entry and attribute decides,
 * and in it the first "by" whose WHO holds for the client; no rule, or no such
 * "by", is none. The rootdn reads everything. The root DSE, cn=Subschema and
 * cn=monitor are outside the rules (monitor_access governs cn=monitor).
 *
 * What each operation needs, as in slapd (back-mdb): a search, search on the
 * base entry ("entry"); a filter item, search on its attribute (else the item
 * is Undefined); an entry returned, read on "entry"; each attribute returned,
 * read; a compare, compare on the attribute; a simple bind, auth on
 * userPassword for an anonymous client (the identity before the bind).
 *
 * The rules are compiled at start-up and again at each SIGHUP that changes them
 * (access_publish): an operation decides by the set that was current when it started
 * (a search, to its last entry; a paged search, page by page).
 *
 * Thread rules: access_compile and access_publish in the main thread; access_rules_release
 * anywhere; the rest in a worker, for one operation of its own.
 */
#ifndef MINIDIR_SERVER_OPS_ACCESS_H
#define MINIDIR_SERVER_OPS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/access_rule.h"
#include "protocol/attr_gate.h"
#include "protocol/buf.h"
#include "conf/config.h"
#include "server/net/conn.h"
#include "server/server.h"
#include "storage/entry.h"

/*
 * Compiles cfg's rules against the schema loaded (DNs to keys, filters, attribute names)
 * into a set with one reference, the caller's, for a server of nworkers workers. The set
 * takes cfg's rules (cfg->access is NULL afterwards). Returns NULL after logging
 * "config:line: access: reason" (cfg keeps its rules then), or on running out of memory.
 */
struct access_rules *access_compile(struct config *cfg, int nworkers);
/* Drops a reference to rules (NULL: nothing); the last frees the set. Any thread. */
void access_rules_release(struct access_rules *rules);
/*
 * Makes rules (the caller's reference passes to the server) the set operations that start
 * from now on decide by, on every worker, and releases the server's reference to the
 * previous one: operations already running finish under the set they began with. Main
 * thread (start-up, SIGHUP).
 */
void access_publish(struct server *srv, struct access_rules *rules);
/* True if cfg's access lines differ from those rules was compiled from. */
bool access_rules_differ(const struct access_rules *rules, const struct config *cfg);
/* The number of rules in the set (the built-in ones when the file has none). */
int access_rules_count(const struct access_rules *rules);

/* False when c is anonymous and allow_anonymous is off. */
bool access_may_read(const struct conn *c);

struct access_entry;
struct access_op;

/* A gate (attr_gate.h) that lets through what needs at least level need. */
struct access_gate {
	struct attr_gate gate;
	const struct access_entry *ae;
	enum access_level need;
};

/* One entry as op's identity sees it. */
struct access_entry {
	struct access_op *op;
	const struct entry_view *e;
	/* Where the per-attribute decision lies (n, rule, level, the gates): this struct, or
	 * op's cache when the rules cannot tell this entry from others (access_op). */
	const struct access_entry *d;
	int n;                            /* rules whose WHAT holds for the entry */
	uint8_t rule[CONFIG_MAX_ACCESS];  /* their indexes, in order */
	uint8_t level[CONFIG_MAX_ACCESS]; /* the level each grants op's identity */
	enum access_level entry;          /* on the entry itself */
	enum access_level unnamed;        /* on attributes no rule names (the first rule for all) */
	bool search_all, read_all;        /* every attribute searchable, readable */
	struct access_gate search, read, compare;
};

/* Who asks, for one operation of c; its group memberships are looked up once. */
struct access_op {
	struct access_rules *rules; /* the worker's (borrowed) or, once it moved on, its own */
	struct worker *w;           /* the worker it runs on */
	struct conn *c;
	bool bypass; /* the rootdn */
	uint64_t groups_known, groups_member;
	struct buf extra; /* computed attributes for a rule's filter */
	/* What group rules and rule filters read: the worker's generation and read
	 * transaction, unless the operation reads its own (a search across a reload). */
	const struct db *db;
	struct db_read *txn;
	/* When no rule has a dn= scope or a filter, an entry decides only whether it is the
	 * client's own (by self): the decision for all the others is made once, here. */
	bool cached;
	struct access_entry cache;
	/* The children of id this client may see (read on their entry), counted; with
	 * first_only, 0 or 1. Set by access_op_init. The computed attributes
	 * (numSubordinates, hasSubordinates: computed_attrs.c) ask through this pointer, the
	 * one call from computed_attrs.c back into the rules, so that the two files, each
	 * calling the other, make no circle (docs/ARCHITECTURE.md, "Callbacks"). */
	size_t (*visible_children)(struct access_op *op, const struct db *db, struct db_read *txn,
	                           entry_id id, bool first_only);
};

/* Who asks, under the rules current now (the worker takes a newly published set here),
 * reading the worker's database generation (see db and txn above); the cache starts
 * empty. Each init is followed by one access_op_free, on the same worker. */
void access_op_init(struct access_op *op, struct conn *c);

/* Lets go of the rules w holds (after its thread stopped). */
void access_worker_free(struct worker *w);

/* True if op's client has at least need on every entry itself ("entry"), whatever the
 * entry: a fast answer that spares looking the entry up; false means "look". */
bool access_entry_granted(const struct access_op *op, enum access_level need);
/* Ends op: lets go of its rules (a second call does nothing). */
void access_op_free(struct access_op *op);

/*
 * Works out what op may do with entry id (viewed as e, borrowed until ae is done
 * with): inside the worker's read transaction, which group rules and computed
 * attributes in rule filters read.
 */
void access_entry_init(struct access_entry *ae, struct access_op *op, entry_id id,
                       const struct entry_view *e);

/* The level ae grants on attribute type[0..len) (the schema's name, options allowed). */
enum access_level access_attr_level(const struct access_entry *ae, const char *type, size_t len);

/* Gates for filters (search), responses (read) and compare; NULL when all pass. */
const struct attr_gate *access_search_gate(const struct access_entry *ae);
const struct attr_gate *access_read_gate(const struct access_entry *ae);
const struct attr_gate *access_compare_gate(const struct access_entry *ae);

#endif
