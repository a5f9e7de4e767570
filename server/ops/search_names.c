/* Attribute names of a search request, spelled as stored entries spell them. */
#include "server/ops/search_names.h"

#include "protocol/schema.h"

/* The requested names with aliases and OIDs replaced by the schema's name, as
 * stored entries spell it (options kept); out[i] points into r or into space. */
void search_names_canonical(const struct search_request *r, struct berval *out, char *space,
                            size_t cap)
{
	for (int i = 0; i < r->nattrs; i++) {
		const struct berval *n = &r->attrs[i];
		size_t len = schema_canonical_desc(n->bv_val, n->bv_len, space, cap);
		if (len) {
			out[i].bv_val = space;
			out[i].bv_len = len;
			space += len + 1;
			cap -= len + 1;
		} else {
			out[i] = *n;
		}
	}
}

/* Room for the canonical names of r's attribute list: a schema name is short. */
size_t search_names_space(const struct search_request *r)
{
	size_t n = 1;
	for (int i = 0; i < r->nattrs; i++)
		n += r->attrs[i].bv_len + 80;
	return n;
}
