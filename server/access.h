/*
 * Access rules: what a connection's identity may read. One place for search,
 * compare, sorting and filters, so that they cannot disagree.
 *
 * Today's rules: anonymous clients may read only when allow_anonymous is on;
 * userPassword is readable by the rootdn and by the entry itself only.
 */
#ifndef MINIDIR_SERVER_ACCESS_H
#define MINIDIR_SERVER_ACCESS_H

#include <stdbool.h>

#include "server/conn.h"
#include "storage/entry.h"

/* False when c is anonymous and allow_anonymous is off. */
bool access_may_read(const struct conn *c);

/*
 * The attribute c may not see in entry e ("userPassword" unless c is the rootdn
 * or bound as e itself), or NULL: a static string, never freed. Filters treat
 * it as absent (Undefined), searches leave it out, compare answers as if absent.
 */
const char *access_hidden_attr(const struct conn *c, const struct entry_view *e);

#endif
