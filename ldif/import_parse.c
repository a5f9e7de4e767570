#include "ldif/import_parse.h"

#include <errno.h>
#include <ldap.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>

#include "protocol/dn.h"
#include "protocol/schema.h"
#include "storage/entry_index.h"
#include "storage/entry_mods.h"
#include "storage/entry_opattrs.h"
#include "storage/entry_rdn.h"
#include "storage/entry_schema.h"
#include "storage/memberof.h"

int import_parser_open(struct import_parser *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->first = true;
	if (ldif_reader_open(&p->rd, path) < 0)
		return -1;
	struct stat st;
	p->size = fstat(p->rd.fd, &st) == 0 ? (long long)st.st_size : 0;
	return 0;
}

void import_parser_close(struct import_parser *p)
{
	ldif_reader_close(&p->rd);
}

void import_worker_init(struct import_worker *w, const struct db *db, bool skip_schema,
                        bool url_values)
{
	memset(w, 0, sizeof(*w));
	w->db = db;
	w->skip_schema = skip_schema;
	/* No more can be stored: an entry is at most ENTRY_MAX_BYTES encoded. */
	w->entry.url_max = url_values ? ENTRY_MAX_BYTES : 0;
}

void import_worker_free(struct import_worker *w)
{
	struct buf *bufs[] = {&w->raw, &w->lib, &w->ndn, &w->names, &w->val};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		buf_free(bufs[i]);
	ldif_entry_free(&w->entry);
	entry_rdn_free(&w->rdn);
	entry_schema_memo_free(&w->schema);
	entry_index_memo_free(&w->index);
}

/* Empties (free false) or frees every buffer of it. */
static void item_bufs(struct import_item *it, bool free)
{
	struct buf *bufs[] = {&it->text, &it->msg,  &it->dn,      &it->key,
	                      &it->rec,  &it->keys, &it->members, &it->opattrs};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
		if (free)
			buf_free(bufs[i]);
		bufs[i]->off = bufs[i]->len = 0;
	}
}

void import_item_free(struct import_item *it)
{
	item_bufs(it, true);
}

/* Records a problem of it (the first one counts); returns -1. */
__attribute__((format(printf, 4, 5))) static int
item_fault(struct import_item *it, enum import_fault f, unsigned long line, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	it->fault = f;
	it->fault_line = line;
	it->msg.off = it->msg.len = 0;
	if (buf_append(&it->msg, text, strlen(text) + 1) < 0)
		it->msg.len = 0; /* reported as "out of memory" */
	return -1;
}

static bool has_objectclass(LDAPMod **mods)
{
	for (int i = 0; mods && mods[i]; i++)
		if ((mods[i]->mod_type[0] | 0x20) == 'o' &&
		    strcasecmp(mods[i]->mod_type, "objectClass") == 0 && mods[i]->mod_bvalues &&
		    mods[i]->mod_bvalues[0])
			return true;
	return false;
}

/*
 * The entry's entryUUID: from the LDIF (an export keeps it) or a new one, RFC 9562
 * version 7: the time in milliseconds (48 bits, big-endian) and 74 random bits from the
 * parser's pool of random bytes (one getrandom call per so many entries). Entries imported
 * together get neighbouring uuid2id keys, so that table grows at its end: with random
 * (version 4) UUIDs each entry's key fell on a random page of it, 2.5-3 s more CPU for
 * 1,000,000 entries (bench/gen-ldif.sh, the writer's cache misses).
 */
static int take_uuid(struct import_worker *p, struct import_item *it, LDAPMod **mods)
{
	for (int i = 0; mods && mods[i]; i++) {
		if ((mods[i]->mod_type[0] | 0x20) != 'e' ||
		    strcasecmp(mods[i]->mod_type, "entryUUID") != 0)
			continue;
		struct berval *v = mods[i]->mod_bvalues[0];
		if (!v || mods[i]->mod_bvalues[1] ||
		    entry_uuid_parse(v->bv_val, v->bv_len, it->uuid) < 0)
			return item_fault(it, IMPORT_FAULT_ENTRY, it->line,
			                  "entryUUID must be one RFC 4122 UUID");
		return 0;
	}
	if (p->random_left < 16) {
		if (getrandom(p->random, sizeof(p->random), 0) != (ssize_t)sizeof(p->random))
			return item_fault(it, IMPORT_FAULT_ENTRY, it->line,
			                  "no random bytes for entryUUID: %s", strerror(errno));
		p->random_left = sizeof(p->random);
	}
	p->random_left -= 16;
	memcpy(it->uuid, p->random + p->random_left, 16);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	for (int i = 0; i < 6; i++)
		it->uuid[i] = (unsigned char)(ms >> (40 - 8 * i));
	it->uuid[6] = (unsigned char)((it->uuid[6] & 0x0f) | 0x70); /* version 7 */
	it->uuid[8] = (unsigned char)((it->uuid[8] & 0x3f) | 0x80); /* RFC 9562 variant */
	return 0;
}

/* Where list_key appends. */
struct key_list {
	struct import_item *it;
	const struct db *db;
	size_t n; /* keys listed */
};

/* Keys of an entry checked for duplicates (see list_key). */
#define IMPORT_DEDUP_KEYS 64

/* An entry_index_fn appending each key to the item's list: u8 position of ix in
 * db->index (ix points into that array), u16 length, the key. */
static int list_key(void *arg, const struct db_index *ix, const void *key, size_t len)
{
	struct key_list *kl = arg;
	uint8_t at = (uint8_t)(ix - kl->db->index);
	uint16_t n = (uint16_t)len;
	struct buf *b = &kl->it->keys;
	/* A key the entry has already (a class and the superclass of another): once. Only
	 * among the first keys, so that a group of many members costs no quadratic scan. */
	size_t scan = b->data && kl->n < IMPORT_DEDUP_KEYS ? b->len : 0;
	for (const unsigned char *p = b->data, *end = scan ? p + scan : p; p < end;) {
		uint16_t plen;
		memcpy(&plen, p + 1, sizeof(plen));
		if (p[0] == at && plen == n && memcmp(p + 3, key, len) == 0)
			return 0;
		p += 3 + plen;
	}
	kl->n++;
	if (buf_reserve(b, 3 + len) < 0)
		return ENOMEM;
	unsigned char *w = b->data + b->len;
	w[0] = at;
	memcpy(w + 1, &n, sizeof(n));
	memcpy(w + 3, key, len);
	b->len += 3 + len;
	return 0;
}

/* The DN checks: its syntax and its place under the suffix. */
static int parse_dn(struct import_worker *p, struct import_item *it, const struct berval *dn)
{
	p->ndn.len = p->ndn.off = 0;
	if (buf_append(&it->dn, dn->bv_val, dn->bv_len) < 0 || buf_append(&it->dn, "", 1) < 0)
		return item_fault(it, IMPORT_FAULT_FIRST, it->line, "out of memory");
	if (dn_normalize(dn->bv_val, dn->bv_len, &p->ndn, &it->key) < 0 || it->key.len == 0)
		return item_fault(it, IMPORT_FAULT_FIRST, it->line, "invalid DN \"%s\"",
		                  dn->bv_val);
	if (it->key.len > db_max_dn_key(p->db))
		return item_fault(
		    it, IMPORT_FAULT_FIRST, it->line,
		    "DN \"%.200s...\" is %zu bytes as a key, more than the %zu minidir "
		    "can store (LMDB's key size: a DN of about 510 bytes)",
		    dn->bv_val, it->key.len, db_max_dn_key(p->db));
	const struct buf *sk = &p->db->suffix_key;
	if (!dn_key_in_subtree(it->key.data, it->key.len, sk->data, sk->len))
		return item_fault(it, IMPORT_FAULT_FIRST, it->line,
		                  "DN \"%s\" is outside the suffix \"%.*s\"", dn->bv_val,
		                  (int)p->db->suffix.len, (char *)p->db->suffix.data);
	return 0;
}

/* The entry of a record: its DN and attributes, from ldif/ldif_parse.h or (raw not
 * NULL: the record's text, first_line its first line) from libldap. */
struct parsed {
	const struct berval *dn;
	LDAPMod **mods;
	const char *raw;
	unsigned long first_line;
};

/* The physical line of the n-th value of mod, or 0. */
static unsigned long value_line(const struct import_worker *p, const struct parsed *e,
                                const LDAPMod *mod, int n)
{
	if (e->raw)
		return ldif_record_type_line(e->raw, e->first_line, mod->mod_type, n);
	/* A value the RDN added has no line of its own (0: the "dn:" line stands for it). */
	const LDAPMod *orig = entry_rdn_original(&p->rdn, mod);
	return orig ? ldif_entry_value_line(&p->entry, orig, n) : 0;
}

/* Checks and encodes one parsed entry into it. */
static int parse_entry(struct import_worker *p, struct import_item *it, const struct parsed *e)
{
	const char *dn = e->dn->bv_val;
	LDAPMod **mods = e->mods;
	if (parse_dn(p, it, e->dn) < 0)
		return -1;
	if (!has_objectclass(mods))
		return item_fault(it, IMPORT_FAULT_ENTRY, it->line,
		                  "entry \"%s\" has no objectClass", dn);
	char why[512];
	struct schema_fault sf;
	/* The RDN's values the attributes lack, added as slapadd adds them (not with -s). */
	if (!p->skip_schema && entry_rdn_complete(&p->rdn, dn, e->mods, &mods) < 0)
		return item_fault(it, IMPORT_FAULT_ENTRY, it->line, "entry \"%s\": out of memory",
		                  dn);
	if (!p->skip_schema &&
	    entry_schema_memo_check(&p->schema, mods, &sf, why, sizeof(why)) < 0) {
		/* At the line of the value at fault when there is one, else at "dn:". */
		unsigned long at = sf.mod ? value_line(p, e, sf.mod, sf.value) : 0;
		return item_fault(it, IMPORT_FAULT_ENTRY, at ? at : it->line, "entry \"%s\": %s",
		                  dn, why);
	}
	if (take_uuid(p, it, mods) < 0)
		return -1;
	/* Kept as slapadd keeps them, before the operational attributes leave mods. */
	if (entry_opattrs_encode(mods, it->uuid, &it->opattrs) < 0)
		return item_fault(it, IMPORT_FAULT_ENTRY, it->line, "out of memory");
	/* The schema check's memo holds the types of this entry's mods once it passed. */
	size_t nmods = 0;
	while (mods && mods[nmods])
		nmods++;
	bool typed = !p->skip_schema && schema_loaded() && nmods > 0 && p->schema.ntypes == nmods;
	if (entry_mods_canonical_typed(mods, typed ? p->schema.types : NULL, &p->names) < 0)
		return item_fault(it, IMPORT_FAULT_ENTRY, it->line, "out of memory");
	if (entry_encode_uuid(&it->rec, 0, it->uuid, it->key.data, it->key.len, e->dn, mods) < 0)
		return item_fault(it, IMPORT_FAULT_ENTRY, it->line,
		                  "entry \"%s\" is too large to encode", dn);
	if (it->rec.len > ENTRY_MAX_BYTES)
		return item_fault(
		    it, IMPORT_FAULT_ENTRY, it->line,
		    "entry \"%s\" is too large: %zu bytes encoded, more than %d (16 MiB)", dn,
		    it->rec.len, ENTRY_MAX_BYTES);
	struct entry_view ev;
	struct key_list kl = {it, p->db, 0};
	int rc = entry_parse(it->rec.data, it->rec.len, &ev) < 0
	             ? ENTRY_INDEX_BAD_VALUE
	             : entry_index_keys_memo(p->db, &ev, list_key, &kl, &p->index, &p->val, why,
	                                     sizeof(why));
	if (rc)
		return item_fault(it, IMPORT_FAULT_INDEX, it->line, "%s",
		                  rc == ENTRY_INDEX_BAD_VALUE ? why : "out of memory");
	const unsigned char *pw;
	if (entry_find_attr(&ev, "userPassword", 12, &pw, &it->pw_len))
		it->pw_off = (size_t)(pw - it->rec.data);
	if (memberof_collect(mods, &it->members, &p->val) < 0)
		return item_fault(it, IMPORT_FAULT_INDEX, it->line, "out of memory");
	return 0;
}

/* Parses a record ldif/ldif_parse.h left to libldap (checked already) into it. */
static void parse_with_libldap(struct import_worker *p, struct import_item *it)
{
	/* Kept as read, to find an attribute's line if the entry breaks the schema. */
	p->raw.len = p->raw.off = p->lib.len = p->lib.off = 0;
	if (ldif_record_text((const char *)it->text.data, it->text.len - 1, &p->raw) < 0 ||
	    buf_append(&p->lib, p->raw.data, p->raw.len) < 0) {
		item_fault(it, IMPORT_FAULT_FIRST, it->line, "out of memory");
		return;
	}
	struct berval bv = {p->lib.len - 1, (char *)p->lib.data};
	LDIFRecord lr;
	memset(&lr, 0, sizeof(lr));
	if (ldap_parse_ldif_record(&bv, it->line, &lr, "minidir-import",
	                           LDIF_DEFAULT_ADD | LDIF_NO_CONTROLS) != 0) {
		item_fault(it, IMPORT_FAULT_FIRST, it->line, "LDIF syntax error");
	} else if (lr.lr_op == 0 && lr.lr_dn.bv_val == NULL) {
		it->kind = IMPORT_ITEM_NONE; /* a "version: 1" line or comments only */
	} else if (lr.lr_op != LDAP_REQ_ADD) {
		item_fault(it, IMPORT_FAULT_FIRST, it->line,
		           "changetype records are not supported (minidir imports entries only)");
	} else {
		struct parsed e = {&lr.lr_dn, lr.lrop_mods, (const char *)p->raw.data,
		                   it->first_line};
		parse_entry(p, it, &e);
	}
	ldap_ldif_record_done(&lr);
}

bool import_frame(struct import_parser *p, struct import_item *it)
{
	it->kind = IMPORT_ITEM_ENTRY;
	it->fault = IMPORT_FAULT_NONE;
	item_bufs(it, false);
	it->pw_off = it->pw_len = 0;
	struct ldif_record rec;
	unsigned long bad = 0;
	char why[256];
	int got = ldif_reader_next(&p->rd, &rec, &bad, why, sizeof(why));
	it->offset = p->rd.offset;
	if (got <= 0) {
		it->kind = IMPORT_ITEM_END;
		it->line = p->rd.line;
		if (got < 0)
			item_fault(it, IMPORT_FAULT_FIRST, bad, "%s", why);
		return true;
	}
	if (buf_reserve(&it->text, rec.len + 1) < 0) {
		item_fault(it, IMPORT_FAULT_FIRST, rec.first_line, "out of memory");
		return true;
	}
	memcpy(it->text.data, rec.text, rec.len);
	it->text.data[rec.len] = '\0';
	it->text.len = rec.len + 1;
	it->first_line = rec.first_line;
	it->last_line = rec.last_line;
	it->cut = rec.cut;
	it->first = p->first;
	p->first = false;
	return false;
}

void import_parse(struct import_worker *w, struct import_item *it)
{
	if (it->kind == IMPORT_ITEM_END || it->fault != IMPORT_FAULT_NONE)
		return;
	unsigned long bad = 0;
	char why[512];
	struct ldif_entry *le = &w->entry;
	enum ldif_parse_result rc =
	    ldif_parse_record(le, (const char *)it->text.data, it->text.len - 1, it->first_line,
	                      it->cut, it->first, &bad, why, sizeof(why));
	it->line = le->dn_line ? le->dn_line : it->first_line;
	if (rc == LDIF_PARSE_ERROR) {
		item_fault(it, IMPORT_FAULT_FIRST, bad, "%s", why);
	} else if (rc == LDIF_PARSE_NONE) {
		it->kind = IMPORT_ITEM_NONE; /* a "version: 1" line or comments only */
	} else if (rc == LDIF_PARSE_LIBLDAP) {
		parse_with_libldap(w, it);
	} else {
		struct parsed e = {&le->dn, le->mods, NULL, it->first_line};
		parse_entry(w, it, &e);
	}
}
