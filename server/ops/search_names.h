/*
 * The attribute list of a search request in the spelling stored entries use:
 * aliases and OIDs replaced by the schema's primary name ("commonName" and
 * "2.5.4.3" become "cn"), options kept, so that selecting attributes from a
 * stored entry is a byte comparison.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_NAMES_H
#define MINIDIR_SERVER_OPS_SEARCH_NAMES_H

#include <stddef.h>

#include "protocol/request.h"

/* Bytes of space search_names_canonical needs for r's list (schema names are short). */
size_t search_names_space(const struct search_request *r);

/*
 * Fills out[0..r->nattrs) with r's names: each points into r (a name the schema
 * does not know, kept as sent) or into space[0..cap) (at least
 * search_names_space(r) bytes), so both must outlive out.
 */
void search_names_canonical(const struct search_request *r, struct berval *out, char *space,
                            size_t cap);

#endif
