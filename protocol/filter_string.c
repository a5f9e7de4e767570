/* Filters in their RFC 4515 string form, for logs (filter.h). */
#include "protocol/filter.h"

#include <string.h>

/* A value: RFC 4515's escapes, and '"' too, so that the text fits in a quoted log field. */
static void put_escaped(struct buf *out, const char *v, size_t len)
{
	buf_append_escaped(out, v, len, "*()\"");
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
	default:
		if (f->attr)
			buf_append(out, f->attr, f->attr_len);
		buf_append(out, ops[f->kind], strlen(ops[f->kind]));
		if (f->value.val)
			put_escaped(out, f->value.val, f->value.len);
		break;
	}
	buf_append(out, ")", 1);
}

void filter_to_string(const struct filter *f, struct buf *out)
{
	to_string(f, out);
	if (buf_append(out, "", 1) == 0)
		out->len--;
}
