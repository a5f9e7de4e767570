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
#include <string.h>

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

/*
 * A summary of one entry's attribute types, so that a gate with the shortcut can pass the
 * whole entry without asking for each type: bit 0 says it is known (0: no summary, ask for
 * each), bit n (1 <= n < 31) that some type is n bytes long or has ';' at byte n, bit 31 the
 * same for any n from 31 to 62. A type the shortcut decides whose length and ';' positions
 * are none of the lengths the gate may tell apart (named_lens) gets others, so an entry
 * whose summary misses them all gets others for every type. attr_types_add adds
 * type[0..len) to *summary (start from ATTR_TYPES_KNOWN); a type the shortcut does not
 * decide (empty, 63 bytes or more, or ';' first) makes the summary unknown for good.
 */
#define ATTR_TYPES_KNOWN UINT32_C(1)

static inline uint32_t attr_types_bit(size_t n)
{
	return UINT32_C(1) << (n < 31 ? n : 31);
}

static inline void attr_types_add(uint32_t *summary, const char *type, size_t len)
{
	if (len == 0 || len >= 63 || type[0] == ';') {
		*summary &= ~ATTR_TYPES_KNOWN;
		return;
	}
	*summary |= attr_types_bit(len);
	for (const char *p = memchr(type, ';', len); p;
	     p = memchr(p + 1, ';', len - (size_t)(p + 1 - type)))
		*summary |= attr_types_bit((size_t)(p - type));
}

/* Whether g allows every type of an entry whose summary is summary (false when unknown). */
static inline bool attr_gate_allows_all(const struct attr_gate *g, uint32_t summary)
{
	if (!g)
		return true;
	if (!(summary & ATTR_TYPES_KNOWN) || !g->has_shortcut || !g->others)
		return false;
	/* named_lens folded as the summary is: bits 1..30 as they are, 31 for any of 31..63 */
	uint32_t named = (uint32_t)(g->named_lens & UINT32_C(0x7ffffffe)) |
	                 (g->named_lens >> 31 ? UINT32_C(1) << 31 : 0);
	return (summary & named) == 0;
}

#endif
