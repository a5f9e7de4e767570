/*
 * Virtual List View (draft-ietf-ldapext-ldapv3-vlv-09) over a sorted search
 * (search_sort.h): which part of the sorted list a VLV request's window covers,
 * computed as slapd's sssvlv computes it. minidir keeps no VLV context: each
 * request searches and sorts again (bounded as a sorted search is, by the size
 * limit and max_search_work), so a contextID sent is ignored and none is returned.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_VLV_H
#define MINIDIR_SERVER_OPS_SEARCH_VLV_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"
#include "protocol/controls.h"
#include "server/ops/search_sort.h"

/* virtualListViewResult codes of the draft (section 6.2). */
#define VLV_SORT_CONTROL_MISSING 60
#define VLV_OFFSET_RANGE_ERROR 61

/* What the response control says, and the window [start, end) of the sorted items. */
struct vlv_window {
	int32_t target;    /* targetPosition, 1-based */
	int32_t count;     /* contentCount: the sorted list's length */
	int result;        /* virtualListViewResult: LDAP_SUCCESS or why not */
	size_t start, end; /* the items to send, in s's sorted order */
};

/*
 * Computes w for request v over the sorted items s (sorted with spec; scratch is
 * the caller's, for normalizing a greaterThanOrEqual value). w->result is
 * LDAP_SUCCESS, VLV_OFFSET_RANGE_ERROR (an offset past contentCount, or past the
 * list when contentCount is 0 or the list's length), or LDAP_INAPPROPRIATE_MATCHING
 * (a value the first key's rule cannot normalize); the window is then empty.
 */
void vlv_window(const struct sorted *s, const struct sort_spec *spec, const struct vlv_request *v,
                struct buf *scratch, struct vlv_window *w);

#endif
