/* Filters in their RFC 4515 string form: written for logs, read for the config (filter.h). */
#include "protocol/buf.h"
#include "protocol/filter.h"

#include <string.h>
#include <strings.h>

/*
 * libldap's RFC 4515 parser, the one ldap_search_ext uses. It is exported (symbol version
 * OPENLDAP_2.5) and used by OpenLDAP's own tools, but declared only in a header libldap-dev
 * does not ship.
 */
int ldap_pvt_put_filter(BerElement *ber, const char *str);

/* A value: RFC 4515's escapes, and '"' too, so that the text fits in a quoted log field. */
static void put_escaped(struct buf *out, const char *v, size_t len)
{
	buf_append_escaped(out, v, len, "*()\"");
}

/*
 * The value to write for an objectClass item: its normal form under objectIdentifierMatch is
 * the class's OID ("1.3.6.1.1.1.2.0"), which tells a reader of the log less than the name;
 * the class's first NAME in the schema ("posixAccount"), as slapd logs it. Looked up here,
 * when the log is written, so that decoding (on the search path) keeps only the OID. NULL:
 * write the value as it is (another attribute or rule, a class the schema does not know).
 */
static const char *class_name(const struct filter *f)
{
	if (f->rule != MATCH_OID || !f->value.val || !f->attr ||
	    strcasecmp(f->attr, "objectClass") != 0)
		return NULL;
	const struct schema_oc *oc = f->oc ? f->oc : schema_oc_find(f->value.val, f->value.len);
	return oc ? oc->name : NULL;
}

static void to_string(const struct filter *f, struct buf *out)
{
	static const char *const ops[] = {[FILTER_EQ] = "=",
	                                  [FILTER_GE] = ">=",
	                                  [FILTER_LE] = "<=",
	                                  [FILTER_APPROX] = "~=",
	                                  [FILTER_EXT] = ":="};
	buf_append(out, "(", 1);
	switch (f->kind) {
	case FILTER_AND:
	case FILTER_OR:
	case FILTER_NOT:
		buf_append(out, f->kind == FILTER_AND ? "&" : f->kind == FILTER_OR ? "|" : "!", 1);
		for (const struct filter *c = f->child; c; c = c->next)
			to_string(c, out);
		break;
	case FILTER_PRESENT:
		buf_append(out, f->attr, f->attr_len);
		buf_append(out, "=*", 2);
		break;
	case FILTER_SUBSTR:
		buf_append(out, f->attr, f->attr_len);
		buf_append(out, "=", 1);
		if (f->initial.val)
			put_escaped(out, f->initial.val, f->initial.len);
		buf_append(out, "*", 1);
		for (size_t i = 0; i < f->nany; i++) {
			put_escaped(out, f->any[i].val, f->any[i].len);
			buf_append(out, "*", 1);
		}
		if (f->final.val)
			put_escaped(out, f->final.val, f->final.len);
		break;
	default: {
		if (f->attr)
			buf_append(out, f->attr, f->attr_len);
		if (f->chain != FILTER_CHAIN_NONE)
			buf_append(out, ":" FILTER_IN_CHAIN_OID, sizeof(FILTER_IN_CHAIN_OID));
		buf_append(out, ops[f->kind], strlen(ops[f->kind]));
		const char *name = class_name(f);
		if (name)
			put_escaped(out, name, strlen(name));
		else if (f->value.val)
			put_escaped(out, f->value.val, f->value.len);
		break;
	}
	}
	buf_append(out, ")", 1);
}

void filter_to_string(const struct filter *f, struct buf *out)
{
	to_string(f, out);
	if (buf_append(out, "", 1) == 0)
		out->len--;
}

struct filter *filter_from_string(const char *text, struct arena *mem)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	if (!ber)
		return NULL;
	struct filter *f = NULL;
	struct berval *bv = NULL;
	if (ldap_pvt_put_filter(ber, text) != -1 && ber_flatten(ber, &bv) == 0) {
		struct ber_in in = ber_in_make(bv->bv_val, bv->bv_len);
		struct buf scratch = {0};
		f = filter_decode(&in, mem, &scratch);
		if (!ber_in_end(&in))
			f = NULL; /* trailing bytes mean the parser stopped early: not one filter */
		buf_free(&scratch);
	}
	ber_bvfree(bv);
	ber_free(ber, 1);
	return f;
}

bool filter_string_valid(const char *text)
{
	struct arena mem = {0};
	bool ok = filter_from_string(text, &mem) != NULL;
	arena_free(&mem);
	return ok;
}
