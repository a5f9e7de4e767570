/*
 * A parsed LDIF record (ldif/ldif_parse.h fills it): its DN and its attributes as the
 * LDAPMod arrays libldap's parser would give, in buffers reused from one record to the
 * next. The parser keeps each attribute line in e->lines (struct attr_line); this file
 * groups them by type into one mod per type (e->groups, e->arrays, e->hash) and says
 * which line each value came from.
 *
 * Thread rules: a struct ldif_entry belongs to one thread at a time.
 */
#ifndef MINIDIR_LDIF_LDIF_ENTRY_H
#define MINIDIR_LDIF_LDIF_ENTRY_H

#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>
#include <strings.h>

#include "protocol/buf.h"

/* A parsed record and the buffers it lives in (reused from one record to the next). A
 * zeroed struct is empty, and refuses URL values. */
struct ldif_entry {
	/* Set by the caller: 0, a "type:< URL" value is an error; else the most bytes a
	 * record's URL values may read (ENTRY_MAX_BYTES: no more can be stored). */
	size_t url_max;
	struct berval dn;      /* NUL-terminated */
	LDAPMod **mods;        /* NULL-terminated; LDAP_MOD_ADD | LDAP_MOD_BVALUES */
	unsigned long dn_line; /* the physical line of "dn:" */
	/* Owned buffers: the types and values (NUL-terminated), the attribute lines, the
	 * types, the LDAPMod arrays with each value's line, a hash of the types, the files
	 * URL values were read from. */
	struct buf bytes, lines, groups, arrays, hash, files;
	const unsigned long *value_lines; /* per mod: its values' lines (see below) */
	const size_t *value_first;        /* index in value_lines of each mod's first */
	const LDAPMod *mod0;              /* the LDAPMod array mods points into */
};

/* An attribute line after "dn:" (in ldif_entry.lines). */
struct attr_line {
	const char *type; /* NUL-terminated, in ldif_entry.bytes */
	size_t tlen;
	struct berval
	    val; /* for a URL value: the URL, then the file's bytes (ldif_parse.c's fetch_urls) */
	unsigned long line;
	size_t group;
	bool url;
	size_t file_off; /* a URL value's bytes, at this offset of ldif_entry.files */
};

/* A distinct type of the entry (in ldif_entry.groups). */
struct attr_group {
	const char *type;
	size_t tlen, count, fill;
};

/* Whether two attribute descriptions are one (their characters fold with 0x20). */
static inline bool same_type(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || ((a[0] ^ b[0]) & ~0x20) == 0) &&
	       strncasecmp(a, b, alen) == 0;
}

/*
 * Groups the first nl lines of e->lines by type and points e->mods, e->mod0,
 * e->value_lines and e->value_first at the arrays built in e->arrays: one mod per type,
 * in order of first appearance, with every value of that type in file order. The lines
 * stay e's; the mods point into them. Returns 0, or -1 out of memory.
 */
int ldif_entry_build_mods(struct ldif_entry *e, size_t nl);

/* The physical line of the n-th value (from 0) of mod, one of the last ENTRY's mods
 * (even after mods was reordered); 0 when there is no such value. */
unsigned long ldif_entry_value_line(const struct ldif_entry *e, const LDAPMod *mod, int n);

void ldif_entry_free(struct ldif_entry *e);

#endif
