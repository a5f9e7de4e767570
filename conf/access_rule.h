/*
 * Access rules as the config file writes them (the access key): slapd's
 * "access to WHAT by WHO LEVEL ..." (slapd.access(5)), reduced to what a
 * read-only directory needs. This module reads the text into a struct with
 * the names and DNs as written; server/ops/access.h compiles it against the schema
 * and decides.
 *
 *   access = to WHAT [by WHO [LEVEL] [stop]]...
 *   WHAT   = "*" | any of dn[.STYLE]=DN  filter=FILTER  attrs=NAME[,NAME]...
 *   STYLE  = base (baseobject, exact: the default) | one (onelevel) | sub (subtree) | children
 *   NAME   = an attribute type (its subtypes too), "entry" (the entry itself),
 *            "children", or "@class" (the class's MUST and MAY types)
 *   WHO    = "*" | anonymous | users | self | dn[.STYLE]=DN |
 *            group[/CLASS[/ATTR]]=DN (default groupOfNames / member) |
 *            peername.ip=IPV4[%MASK] | peername.ipv6=IPV6[%MASK] (the client's address,
 *            after a PROXY header the one it carries; MASK dotted as slapd's, or a prefix
 *            length) | peername.path=PATH (an ldapi:// listener's socket path)
 *   LEVEL  = none | disclose | auth | compare | search | read (write, add, delete and
 *            manage grant read here); a missing level is none, as slapd's "+0"
 *
 * A value may be written in double quotes, and a filter's spaces inside its
 * parentheses need none. One rule may run over several lines: a line that
 * starts with "by" (libinih hands continuation lines over as a value of the
 * same key) adds to the rule before it.
 *
 * Thread rules: no global state.
 */
#ifndef MINIDIR_CONF_ACCESS_RULE_H
#define MINIDIR_CONF_ACCESS_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/ip_net.h"

/* slapd's levels; each implies those before it. */
enum access_level {
	ACCESS_NONE,
	ACCESS_DISCLOSE,
	ACCESS_AUTH,
	ACCESS_COMPARE,
	ACCESS_SEARCH,
	ACCESS_READ,
};

/* Which DNs a dn= clause covers, relative to its DN. */
enum access_scope {
	ACCESS_SCOPE_ANY, /* no dn= clause: every DN */
	ACCESS_SCOPE_BASE,
	ACCESS_SCOPE_ONE,
	ACCESS_SCOPE_SUBTREE,
	ACCESS_SCOPE_CHILDREN,
};

enum access_who_kind {
	ACCESS_WHO_ANY,
	ACCESS_WHO_ANONYMOUS,
	ACCESS_WHO_USERS,
	ACCESS_WHO_SELF,
	ACCESS_WHO_DN,
	ACCESS_WHO_GROUP,
	ACCESS_WHO_PEER_IP,   /* peername.ip=, peername.ipv6= */
	ACCESS_WHO_PEER_PATH, /* peername.path= */
};

struct access_who {
	enum access_who_kind kind;
	enum access_scope scope; /* ACCESS_WHO_DN */
	char *dn;                /* ACCESS_WHO_DN and _GROUP, as written */
	char *group_class;       /* ACCESS_WHO_GROUP: "groupOfNames" unless given */
	char *group_attr;        /* ACCESS_WHO_GROUP: "member" unless given */
	struct ip_net net;       /* ACCESS_WHO_PEER_IP */
	char *path;              /* ACCESS_WHO_PEER_PATH, as written */
	enum access_level level;
};

struct access_rule {
	int line;                /* its "to" line in the config file; 0 for a built-in rule */
	enum access_scope scope; /* of dn */
	char *dn;                /* NULL with ACCESS_SCOPE_ANY */
	char *filter;            /* RFC 4515 text, or NULL: every entry */
	char **attrs;            /* NULL-terminated names, or NULL: every attribute */
	struct access_who *who;
	int nwho;
};

/*
 * Reads one piece of a rule: text "to WHAT [by ...]" starts rule r (all zero
 * before the call), text "by ..." adds to r. Returns 0; -1 with the reason in
 * why (r then holds what was read and must still be freed with
 * access_rule_free). DNs and filters are checked for syntax only.
 */
int access_rule_parse(struct access_rule *r, const char *text, char *why, size_t whylen);

/* True if text starts a rule ("to ...") rather than continuing one ("by ..."). */
bool access_rule_starts(const char *text);

void access_rule_free(struct access_rule *r);

/* Longest config line access_rule_number reads whole (libinih's buffer, and room). */
#define ACCESS_RULE_LINE_MAX 256

/*
 * Numbers rules[0..nrules) with the lines of their "to" in the config file at path
 * (libinih does not tell its handler): "access = to" lines, and continuation lines of an
 * access key that start with "to", in file order, as the config reader made the rules.
 */
void access_rule_number(struct access_rule *rules, int nrules, const char *path);

/* "none", "disclose", ... "read". */
const char *access_level_name(enum access_level level);

#endif
