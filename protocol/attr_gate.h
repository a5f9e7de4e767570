/*
 * An attribute gate: which attribute types a client may use for one entry
 * (server/ops/access.c builds them from the access rules). Filters treat an
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
#include <stdint.h>

struct attr_gate {
	bool (*allows)(const struct attr_gate *g, const char *type, size_t len);
	/* Optional shortcut, so that most types are decided without the call: with
	 * has_shortcut, a type of len < 63 bytes gets others unless bit len of named_lens is
	 * set or a bit n < len with ';' at type[n] (bit n: the gate may tell apart types whose
	 * name, before any options, is n bytes long). A zeroed shortcut calls allows for
	 * every type. */
	bool has_shortcut;
	bool others;
	uint64_t named_lens;
};

static inline bool attr_gate_allows(const struct attr_gate *g, const char *type, size_t len)
{
	if (!g)
		return true;
	if (g->has_shortcut && len < 63) {
		/* named_lens bits up to len: a name as long as the type, or one it starts with
		 * before options (";"), may name it; else it is one of the others */
		uint64_t m = g->named_lens & ((UINT64_C(2) << len) - 1);
		if (m & (UINT64_C(1) << len))
			return g->allows(g, type, len);
		for (; m; m &= m - 1)
			if (type[__builtin_ctzll(m)] == ';')
				return g->allows(g, type, len);
		return g->others;
	}
	return g->allows(g, type, len);
}

#endif
