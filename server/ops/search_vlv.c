#include "server/ops/search_vlv.h"

#include <ldap.h>

#include "protocol/match.h"

/* The 1-based position of the first item not before value in the first key's order
 * (an item without the key sorts last: it is not before any value); n + 1 when none.
 * -1 when value does not normalize. */
static long first_not_before(const struct sorted *s, const struct sort_spec *spec,
                             const struct berval *value, struct buf *scratch)
{
	scratch->off = scratch->len = 0;
	if (match_normalize(spec->key[0].rule, value->bv_val, value->bv_len, scratch) < 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const struct sort_item *it = &s->items[i];
		if (!it->present[0])
			return (long)i + 1;
		int c = match_compare(spec->key[0].rule, it->keys, it->len[0], scratch->data,
		                      scratch->len);
		if (spec->key[0].reverse ? c <= 0 : c >= 0)
			return (long)i + 1;
	}
	return (long)s->n + 1;
}

void vlv_window(const struct sorted *s, const struct sort_spec *spec, const struct vlv_request *v,
                struct buf *scratch, struct vlv_window *w)
{
	long n = (long)s->n, target;
	*w = (struct vlv_window){.count = (int32_t)n, .result = LDAP_SUCCESS};
	if (n == 0)
		return; /* as sssvlv: nothing to place, position 0, success */
	if (v->by_value) {
		target = first_not_before(s, spec, &v->value, scratch);
		if (target < 0) {
			w->result = LDAP_INAPPROPRIATE_MATCHING;
			return;
		}
	} else if (v->offset == v->count) {
		target = n; /* the last entry (offset 0 with contentCount 0 too, as sssvlv) */
	} else if (v->offset == 1) {
		target = 1;
	} else if (v->count && v->count != n) {
		/* The client's estimate of the list's length: the same fraction of ours. */
		if (v->offset > v->count) {
			w->result = VLV_OFFSET_RANGE_ERROR;
			return;
		}
		target = (long)((int64_t)n * v->offset / v->count);
	} else {
		if (v->offset > n) {
			w->result = VLV_OFFSET_RANGE_ERROR;
			return;
		}
		target = v->offset;
	}
	w->target = (int32_t)target;
	/* The entry the window is around: a target past the end stands on the last entry,
	 * which then counts as one of the beforeCount (sssvlv); a target 0 on the first. */
	long at = target > n ? n : target < 1 ? 1 : target;
	long before = target > n ? (v->before > 0 ? v->before - 1 : 0) : v->before;
	long first = at - before < 1 ? 1 : at - before;
	long last = target > n ? n : at + v->after > n ? n : at + v->after;
	w->start = (size_t)(first - 1);
	w->end = (size_t)last;
}
