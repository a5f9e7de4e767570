/*
 * An attribute gate: which attribute types a client may use for one entry
 * (server/access.h builds them from the access rules). Filters treat an
 * attribute the gate refuses as Undefined, responses leave it out. A NULL gate
 * allows every attribute.
 *
 * The type handed to allows is as storage keeps it or as a filter names it: the
 * schema's primary name with options ("cn;lang-en"), or the name as given when
 * no schema is loaded. Not NUL-terminated.
 */
#ifndef MINIDIR_PROTOCOL_ATTR_GATE_H
#define MINIDIR_PROTOCOL_ATTR_GATE_H

#include <stdbool.h>
#include <stddef.h>

struct attr_gate {
	bool (*allows)(const struct attr_gate *g, const char *type, size_t len);
};

static inline bool attr_gate_allows(const struct attr_gate *g, const char *type, size_t len)
{
	return !g || g->allows(g, type, len);
}

#endif
