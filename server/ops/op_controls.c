/*
 * The controls minidir applies, one row each (ops.h, struct op_control): which operations
 * apply each one and whether the root DSE lists it. The critical-control check
 * (critical.c, ops_refuse_critical) and the root DSE's supportedControl (op_rootdse.c)
 * are both made from this table, so that neither can leave a control out of the other
 * (the root DSE's hand-kept list once left VLV out). tests/integration/controls_test.sh
 * checks every control server/ reads (request_control) has its row here.
 */
#include <ldap.h>

#include "protocol/controls.h"
#include "protocol/sync.h"
#include "server/ops/ops.h"

/*
 * A search of the database applies all six search controls; the root DSE and
 * cn=Subschema fewer: the assertion is tested on the entry, a page of one entry is the
 * whole answer, Matched Values filters its values, nothing sorts (search_builtin.c);
 * cn=monitor only manageDsaIT (op_search.c). A compare applies the assertion
 * (op_compare.c) and manageDsaIT (no entry is a referral here). The writes are refused
 * whatever they carry (read-only), so they take what slapd takes for them: those of a
 * compare. A bind applies the Password Policy request (op_bind.c); the extended
 * operations, Unbind and Abandon apply none. The rows are in the root DSE's order.
 */
const struct op_control op_controls[] = {
    {CONTROL_ASSERTION, "assertion",
     OP_APPLY_SEARCH | OP_APPLY_BUILTIN | OP_APPLY_COMPARE | OP_APPLY_WRITE, true},
    {CONTROL_MANAGE_DSA_IT, "manageDsaIT",
     OP_APPLY_SEARCH | OP_APPLY_BUILTIN | OP_APPLY_MONITOR | OP_APPLY_COMPARE | OP_APPLY_WRITE,
     true},
    {CONTROL_PAGED_RESULTS, "paged results", OP_APPLY_SEARCH | OP_APPLY_BUILTIN, true},
    {CONTROL_SORT_REQUEST, "server-side sorting", OP_APPLY_SEARCH, true},
    {CONTROL_MATCHED_VALUES, "matched values", OP_APPLY_SEARCH | OP_APPLY_BUILTIN, true},
    {CONTROL_VLV_REQUEST, "virtual list view", OP_APPLY_SEARCH, true},
    {CONTROL_PASSWORD_POLICY, "password policy", OP_APPLY_BIND, true},
    {SYNC_REQUEST_OID, "content synchronization", OP_APPLY_SEARCH, true},
};
const size_t op_ncontrols = sizeof(op_controls) / sizeof(op_controls[0]);
_Static_assert(sizeof(op_controls) / sizeof(op_controls[0]) <= OP_CONTROLS_MAX,
               "op_controls has more rows than OP_CONTROLS_MAX");

unsigned op_apply_of(ber_tag_t op)
{
	switch (op) {
	case LDAP_REQ_SEARCH:
		return OP_APPLY_SEARCH;
	case LDAP_REQ_BIND:
		return OP_APPLY_BIND;
	case LDAP_REQ_COMPARE:
		return OP_APPLY_COMPARE;
	case LDAP_REQ_ADD:
	case LDAP_REQ_MODIFY:
	case LDAP_REQ_DELETE:
	case LDAP_REQ_MODRDN:
		return OP_APPLY_WRITE;
	}
	return 0;
}

size_t op_controls_applied(unsigned apply, const char **oids)
{
	size_t n = 0;
	for (size_t i = 0; i < op_ncontrols; i++)
		if (op_controls[i].applies & apply)
			oids[n++] = op_controls[i].oid;
	return n;
}
