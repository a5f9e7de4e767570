#include "storage/entry_mods.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/schema.h"
#include "protocol/tlv.h"
#include "storage/entry_opattrs.h"

/* Longest attribute description decoded (the canonical form is written into 256 bytes). */
#define MODS_MAX_TYPE 255

void entry_mods_free(struct entry_mods *m)
{
	free(m->mod); /* the block every array lives in (entry_mods_decode) */
	buf_free(&m->names);
	memset(m, 0, sizeof(*m));
}

/* One attribute at *p: its type and the content of its SET OF values. */
static bool next_attr(const unsigned char **p, const unsigned char *end, const unsigned char **t,
                      size_t *tlen, const unsigned char **vals, size_t *vlen)
{
	const unsigned char *seq, *q;
	size_t slen;
	unsigned char tag;
	if (!tlv_read(p, end, &tag, &seq, &slen) || tag != 0x30)
		return false;
	q = seq;
	if (!tlv_read(&q, seq + slen, &tag, t, tlen) || tag != 0x04 || *tlen == 0 ||
	    *tlen > MODS_MAX_TYPE || memchr(*t, 0, *tlen))
		return false;
	return tlv_read(&q, seq + slen, &tag, vals, vlen) && tag == 0x31 && q == seq + slen;
}

/* Counts the attributes with values, their values and type bytes; false if malformed. */
static bool count(const unsigned char *p, const unsigned char *end, size_t *nattr, size_t *nval,
                  size_t *tbytes)
{
	const unsigned char *t, *vals, *v;
	size_t tlen, vlen, len;
	unsigned char tag;
	*nattr = *nval = *tbytes = 0;
	while (p < end) {
		if (!next_attr(&p, end, &t, &tlen, &vals, &vlen))
			return false;
		size_t n = 0;
		for (const unsigned char *r = vals; r < vals + vlen; n++)
			if (!tlv_read(&r, vals + vlen, &tag, &v, &len) || tag != 0x04)
				return false;
		if (n) {
			(*nattr)++;
			*nval += n;
			*tbytes += tlen + 1;
		}
	}
	return true;
}

int entry_mods_decode(struct entry_mods *m, const unsigned char *attrs, size_t len)
{
	entry_mods_free(m);
	const unsigned char *end = attrs + len, *p = attrs, *t, *vals, *v;
	size_t nattr, nval, tbytes, tlen, vlen, vl;
	unsigned char tag;
	if (!count(p, end, &nattr, &nval, &tbytes))
		return -1;
	/* One block: the LDAPMods, the values, the two pointer arrays, the type names (every
	 * part a multiple of the pointer size but the last, so each is aligned). */
	size_t mod_bytes = (nattr + 1) * sizeof(*m->mod), val_bytes = (nval + 1) * sizeof(*m->vals);
	size_t mods_bytes = (nattr + 1) * sizeof(*m->mods);
	size_t vptr_bytes = (nval + nattr + 1) * sizeof(*m->vptrs);
	char *block = calloc(1, mod_bytes + val_bytes + mods_bytes + vptr_bytes + tbytes + 1);
	if (!block)
		return -2;
	m->mod = (LDAPMod *)block;
	m->vals = (struct berval *)(block + mod_bytes);
	m->mods = (LDAPMod **)(block + mod_bytes + val_bytes);
	m->vptrs = (struct berval **)(block + mod_bytes + val_bytes + mods_bytes);
	m->types = block + mod_bytes + val_bytes + mods_bytes + vptr_bytes;
	size_t a = 0, nv = 0, np = 0, tb = 0;
	while (p < end && next_attr(&p, end, &t, &tlen, &vals, &vlen)) {
		if (vlen == 0)
			continue;
		LDAPMod *mod = &m->mod[a];
		mod->mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
		mod->mod_type = m->types + tb;
		memcpy(mod->mod_type, t, tlen);
		mod->mod_type[tlen] = '\0';
		tb += tlen + 1;
		mod->mod_bvalues = &m->vptrs[np];
		for (const unsigned char *r = vals; tlv_read(&r, vals + vlen, &tag, &v, &vl);) {
			m->vals[nv] = (struct berval){vl, (char *)v};
			m->vptrs[np++] = &m->vals[nv++];
		}
		m->vptrs[np++] = NULL;
		m->mods[a++] = mod;
	}
	m->mods[a] = NULL;
	return 0;
}

/*
 * Stores attribute types by their schema name ("commonName: x" is kept as "cn",
 * "CN;Lang-EN" as "cn;lang-en"). The names are written over the record's own
 * (libldap frees its blob, not these pointers) or, when longer, into names.
 */
int entry_mods_canonical(LDAPMod **mods, struct buf *names)
{
	return entry_mods_canonical_typed(mods, NULL, names);
}

int entry_mods_canonical_typed(LDAPMod **mods, const struct schema_attr *const *types,
                               struct buf *names)
{
	/* Operational attributes (slapcat writes them) are not stored in the record:
	 * entryUUID is taken apart before this and kept in the record header, the stamps in
	 * the opattrs table (storage/entry_opattrs.h). The types of
	 * the mods kept, in kept[] (when given and few enough to fit). */
	const struct schema_attr *kept_types[256];
	int kept = 0;
	for (int i = 0; mods && mods[i]; i++) {
		const struct schema_attr *at =
		    types ? types[i]
		          : schema_attr_find(mods[i]->mod_type, strlen(mods[i]->mod_type));
		/* (the stamps, operational in the schema, by name when none is loaded: at NULL) */
		if (at ? at->operational && strcasecmp(at->name, "entryUUID") != 0
		       : entry_opattrs_is_kept(mods[i]->mod_type))
			continue;
		if (kept < 256)
			kept_types[kept] = at;
		mods[kept++] = mods[i];
	}
	if (mods)
		mods[kept] = NULL;
	bool typed = types && kept <= 256;
	names->off = names->len = 0;
	size_t offs[256];
	int n = 0;
	for (int i = 0; mods && mods[i]; i++) {
		char canon[256];
		const char *t = mods[i]->mod_type;
		size_t tlen = strlen(t);
		size_t len = typed ? schema_desc_as(kept_types[i], t, tlen, canon, sizeof(canon))
		                   : schema_canonical_desc(t, tlen, canon, sizeof(canon));
		if (len == 0)
			continue;
		if (len <= tlen) {
			memcpy(mods[i]->mod_type, canon, len + 1);
		} else if (n < 256) {
			offs[n++] = names->len;
			if (buf_append(names, canon, len + 1) < 0)
				return -1;
			mods[i]->mod_type = NULL; /* set below, once names stops moving */
		}
	}
	int k = 0;
	for (int i = 0; mods && mods[i] && k < n; i++)
		if (!mods[i]->mod_type)
			mods[i]->mod_type = (char *)names->data + offs[k++];
	return 0;
}
