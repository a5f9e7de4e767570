/*
 * The access rules as compiled: private to access.c (deciding) and access_compile.c
 * (compiling them from the configuration's rules against the schema). Other files use
 * access.h.
 */
#ifndef MINIDIR_SERVER_OPS_ACCESS_RULES_H
#define MINIDIR_SERVER_OPS_ACCESS_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol/arena.h"
#include "protocol/buf.h"
#include "protocol/filter.h"
#include "conf/access_rule.h"

/* Group clauses have one bit each in struct access_op's membership cache. */
#define ACCESS_MAX_GROUPS 64

struct who {
	const struct access_who *src; /* kind, level, group class and attribute */
	struct buf key;               /* of the DN (who dn=, group=) */
	int group_slot;
};

struct rule {
	enum access_scope scope;
	struct buf key;          /* of the rule's dn= */
	struct arena filter_mem; /* where filter lives */
	struct filter *filter;
	bool filter_computed; /* the filter tests computed attributes (memberOf...) */
	bool all_attrs;       /* no attrs=: every attribute and the entry */
	bool entry;           /* attrs= names "entry" */
	const char **names;   /* attribute names attrs= covers (subtypes included) */
	size_t *name_lens;    /* their lengths: most types are told apart by length alone */
	size_t nnames;
	struct who *who;
	int nwho;
};

/*
 * One compiled set of rules: the start-up's, or a SIGHUP's (access_reload). Refcounted:
 * the server holds the current set (ops_impl.h's struct ops_shared, under its lock), each worker
 * the set it hands to operations that start (struct ops_worker's rules), and an operation that
 * began under a set its worker has since left holds that set itself (access.c, access_op_free). The
 * last release frees it.
 */
struct access_rules {
	unsigned long refs; /* atomic */
	struct rule *rule;
	int n;
	/* The configuration's rules, owned: the compiled ones point into them (who->src, names
	 * attrs= wrote). */
	struct access_rule *src;
	int nsrc;
	char *text; /* the file's access lines they came from (config_key_text); NULL: unknown */
	/* Each worker's anonymous decision under this set (access.c), by worker id: slot i is
	 * written and read by worker i's thread only, and freed with the set. */
	struct access_anonymous **anonymous;
	int nworkers;
	/* The level on "entry" the rules give everyone on every entry (the first rule that
	 * covers "entry" is for all DNs, with no filter, and starts "by *"), else none. */
	enum access_level entry_floor;
	/* Bit n set: some rule names an attribute of n bytes (bit 63: of 63 or more). A type
	 * whose length (before any options) has no bit is named by no rule. */
	uint64_t name_lens;
	/* No rule has a dn= scope or a filter: entries differ only by being the client's own
	 * (by self), so access_op caches the decision for the others. */
	bool entry_free;
	/* Some rule has a peername clause: anonymous clients differ by where they are, and
	 * the worker's one anonymous decision (access.c) is not kept. */
	bool by_peer;
};

static inline uint64_t length_bit(size_t len)
{
	return (uint64_t)1 << (len < 63 ? len : 63);
}

/* Whether some rule may name type[0..len) (options allowed), by the lengths rules name. */
static inline bool may_be_named(uint64_t name_lens, const char *type, size_t len)
{
	if (name_lens & length_bit(63))
		return true;
	for (uint64_t bits = name_lens; bits; bits &= bits - 1) {
		size_t n = (size_t)__builtin_ctzll(bits);
		if (n == len || (n < len && type[n] == ';'))
			return true;
	}
	return false;
}

#endif
