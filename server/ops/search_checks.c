#include "server/ops/search_checks.h"

#include <ldap.h>

#include "protocol/controls.h"
#include "server/db/db.h"
#include "server/ops/ops.h"

int search_base_access(struct access_op *aop, struct worker *w, entry_id base)
{
	if (access_entry_granted(aop, ACCESS_SEARCH))
		return LDAP_SUCCESS;
	struct entry_view e;
	if (db_get_entry(&db_worker(w)->gen->db, db_worker(w)->txn, base, &e) != 0)
		return LDAP_OTHER;
	struct access_entry ae;
	access_entry_init(&ae, aop, base, &e);
	return ae.entry >= ACCESS_SEARCH     ? LDAP_SUCCESS
	       : ae.entry >= ACCESS_DISCLOSE ? LDAP_INSUFFICIENT_ACCESS
	                                     : LDAP_NO_SUCH_OBJECT;
}

/* The filter of a control's value, the whole value, into mem (NULL when malformed, absent or
 * out of memory). */
static struct filter *control_filter(const struct request_control *ctl, bool values_list,
                                     struct arena *mem, struct buf *scratch)
{
	if (!ctl->has_value)
		return NULL;
	struct ber_in in = ber_in_make(ctl->value.bv_val, ctl->value.bv_len);
	struct filter *f = values_list ? filter_decode_values(&in, mem, scratch)
	                               : filter_decode(&in, mem, scratch);
	return ber_in_end(&in) ? f : NULL;
}

/* The assertion filter on e, as ctx lets the client search it: LDAP_SUCCESS (it holds),
 * LDAP_ASSERTION_FAILED, or LDAP_PROTOCOL_ERROR (f NULL: the control was malformed). */
static int assert_on(const struct filter *f, const struct entry_view *e,
                     const struct filter_ctx *ctx)
{
	if (!f)
		return LDAP_PROTOCOL_ERROR;
	return filter_eval_ctx(f, e->attrs, e->attrslen, ctx) == FILTER_TRUE
	           ? LDAP_SUCCESS
	           : LDAP_ASSERTION_FAILED;
}

int search_assertion_on(const struct ldap_request *req, const struct entry_view *e,
                        const struct filter_ctx *ctx)
{
	const struct request_control *ctl = request_control(req, CONTROL_ASSERTION);
	if (!ctl)
		return LDAP_SUCCESS;
	unsigned char space[1024]; /* an assertion of a few items needs no malloc */
	struct arena mem;
	arena_init(&mem, space, sizeof(space));
	int rc = assert_on(control_filter(ctl, false, &mem, ctx->scratch), e, ctx);
	arena_free(&mem);
	return rc;
}

int search_assertion(const struct ldap_request *req, struct access_op *aop, struct worker *w,
                     entry_id base)
{
	const struct request_control *ctl = request_control(req, CONTROL_ASSERTION);
	if (!ctl)
		return LDAP_SUCCESS;
	unsigned char space[1024];
	struct arena mem;
	arena_init(&mem, space, sizeof(space));
	struct filter *f = control_filter(ctl, false, &mem, &w->scratch);
	struct entry_view e;
	int rc = LDAP_OTHER;
	if (db_get_entry(&db_worker(w)->gen->db, db_worker(w)->txn, base, &e) == 0) {
		struct access_entry ae;
		access_entry_init(&ae, aop, base, &e);
		struct filter_ctx fctx = {.dn = e.dn,
		                          .dnlen = e.dnlen,
		                          .gate = access_search_gate(&ae),
		                          .scratch = &w->scratch};
		ops_worker(w)->extra.off = ops_worker(w)->extra.len = 0;
		if (f && computed_attrs_in_filter(f) &&
		    computed_attrs_all(&ops_worker(w)->extra, &db_worker(w)->gen->db,
		                       db_worker(w)->txn, base, &e, aop) == 0) {
			fctx.extra = ops_worker(w)->extra.data;
			fctx.extra_len = ops_worker(w)->extra.len;
		}
		rc = assert_on(f, &e, &fctx);
	}
	arena_free(&mem);
	return rc;
}

int search_matched_values(const struct ldap_request *req, struct arena *mem, struct buf *scratch,
                          struct filter **values)
{
	const struct request_control *ctl = request_control(req, CONTROL_MATCHED_VALUES);
	*values = NULL;
	if (!ctl)
		return 0;
	*values = control_filter(ctl, true, mem, scratch);
	return *values ? 0 : -1;
}
