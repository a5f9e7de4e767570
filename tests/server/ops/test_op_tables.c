/* server/ops/op_controls.c and op_extended.c: the controls' and the extended operations'
 * tables, and the root DSE's supportedControl and supportedExtension made from them
 * (op_rootdse.c). What each operation applies and what the root DSE lists are pinned here
 * as clients see them, so that a row changed by mistake fails. */
#include <check.h>
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/sync.h"
#include "protocol/controls.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"
#include "storage/entry.h"
#include "tests/check_run.h"

/* Whether the controls with a bit of apply are exactly want[0..n), in any order. */
static bool applied_are(unsigned apply, const char *const *want, size_t n)
{
	const char *got[OP_CONTROLS_MAX];
	size_t k = op_controls_applied(apply, got);
	if (k != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t j = 0; j < k && !found; j++)
			found = strcmp(want[i], got[j]) == 0;
		if (!found)
			return false;
	}
	return true;
}
#define APPLIED_ARE(apply, ...)                                                                    \
	applied_are(apply, (const char *const[]){__VA_ARGS__},                                     \
	            sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

START_TEST(controls_each_operation_applies)
{
	ck_assert(APPLIED_ARE(op_apply_of(LDAP_REQ_SEARCH), CONTROL_PAGED_RESULTS,
	                      CONTROL_SORT_REQUEST, CONTROL_MANAGE_DSA_IT, CONTROL_ASSERTION,
	                      CONTROL_MATCHED_VALUES, CONTROL_VLV_REQUEST, SYNC_REQUEST_OID));
	ck_assert(APPLIED_ARE(OP_APPLY_BUILTIN, CONTROL_ASSERTION, CONTROL_MANAGE_DSA_IT,
	                      CONTROL_PAGED_RESULTS, CONTROL_MATCHED_VALUES));
	ck_assert(APPLIED_ARE(OP_APPLY_MONITOR, CONTROL_MANAGE_DSA_IT));
	ck_assert(
	    APPLIED_ARE(op_apply_of(LDAP_REQ_COMPARE), CONTROL_ASSERTION, CONTROL_MANAGE_DSA_IT));
	ber_tag_t writes[] = {LDAP_REQ_ADD, LDAP_REQ_MODIFY, LDAP_REQ_DELETE, LDAP_REQ_MODRDN};
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
		ck_assert(
		    APPLIED_ARE(op_apply_of(writes[i]), CONTROL_ASSERTION, CONTROL_MANAGE_DSA_IT));
	ck_assert(APPLIED_ARE(op_apply_of(LDAP_REQ_BIND), CONTROL_PASSWORD_POLICY));
	const char *none[1];
	ck_assert_uint_eq(op_controls_applied(op_apply_of(LDAP_REQ_EXTENDED), none), 0);
	ck_assert_uint_eq(op_controls_applied(op_apply_of(LDAP_REQ_UNBIND), none), 0);
	ck_assert_uint_eq(op_controls_applied(op_apply_of(LDAP_REQ_ABANDON), none), 0);
}
END_TEST

/* A search is refused by the dispatch for a critical control OP_APPLY_SEARCH lacks, before
 * the root DSE's or cn=monitor's own check: a row they apply but a search does not would
 * never be reached. And every OID is in one row only. */
START_TEST(rows_are_consistent)
{
	for (size_t i = 0; i < op_ncontrols; i++) {
		const struct op_control *r = &op_controls[i];
		if (r->applies & (OP_APPLY_BUILTIN | OP_APPLY_MONITOR))
			ck_assert_msg(r->applies & OP_APPLY_SEARCH, "%s", r->name);
		ck_assert_msg(r->applies != 0, "%s applied by nothing", r->name);
		for (size_t j = i + 1; j < op_ncontrols; j++)
			ck_assert_str_ne(r->oid, op_controls[j].oid);
	}
	for (size_t i = 0; i < op_nextensions; i++)
		for (size_t j = i + 1; j < op_nextensions; j++)
			ck_assert_str_ne(op_extensions[i].oid, op_extensions[j].oid);
}
END_TEST

/* The values of attribute name of the root DSE built for srv, joined by spaces. */
static void rootdse_values(struct server *srv, const char *name, char *out, size_t cap)
{
	struct buf *rootdse = &ops_shared(srv)->rootdse;
	buf_free(rootdse);
	*rootdse = (struct buf){0};
	ck_assert_int_eq(op_rootdse_build(srv), 0);
	struct entry_view e;
	ck_assert_int_eq(entry_parse(rootdse->data, rootdse->len, &e), 0);
	const unsigned char *vals, *v;
	size_t vlen, len;
	out[0] = '\0';
	if (!entry_find_attr(&e, name, strlen(name), &vals, &vlen))
		return;
	const unsigned char *p = vals;
	while (entry_next_value(&p, vals + vlen, &v, &len)) {
		size_t at = strlen(out);
		ck_assert_uint_lt(at + len + 2, cap);
		if (at)
			out[at++] = ' ';
		memcpy(out + at, v, len);
		out[at + len] = '\0';
	}
}

/* The root DSE lists the same OIDs in the same order as when it was written by hand. */
START_TEST(rootdse_lists_the_tables)
{
	struct server *srv = calloc(1, sizeof(*srv));
	ck_assert_ptr_nonnull(srv);
	ck_assert_ptr_nonnull(srv->ops = ops_shared_new());
	strcpy(srv->cfg.suffix, "dc=example,dc=com");
	char got[1024];
	rootdse_values(srv, "supportedControl", got, sizeof(got));
	ck_assert_str_eq(got, "1.3.6.1.1.12 2.16.840.1.113730.3.4.2 1.2.840.113556.1.4.319 "
	                      "1.2.840.113556.1.4.473 1.2.826.0.1.3344810.2.3 "
	                      "2.16.840.1.113730.3.4.9 1.3.6.1.4.1.42.2.27.8.5.1");
	srv->cfg.sync_provider = true; /* Content Synchronization listed only where answered */
	rootdse_values(srv, "supportedControl", got, sizeof(got));
	ck_assert(strstr(got, "1.2.840.113556.1.4.319 ") && strstr(got, " " SYNC_REQUEST_OID));
	srv->cfg.sync_provider = false;
	rootdse_values(srv, "supportedExtension", got, sizeof(got));
	ck_assert_str_eq(got, LDAP_EXOP_WHO_AM_I);
	srv->tls = (struct tls_server *)srv; /* only tested for NULL */
	rootdse_values(srv, "supportedExtension", got, sizeof(got));
	ck_assert_str_eq(got, LDAP_EXOP_WHO_AM_I " " LDAP_EXOP_START_TLS);
	srv->cfg.chain_passwd = true;
	rootdse_values(srv, "supportedExtension", got, sizeof(got));
	ck_assert_str_eq(got,
	                 LDAP_EXOP_WHO_AM_I " " LDAP_EXOP_START_TLS " " LDAP_EXOP_MODIFY_PASSWD);
	srv->tls = NULL;
	rootdse_values(srv, "supportedExtension", got, sizeof(got));
	ck_assert_str_eq(got, LDAP_EXOP_WHO_AM_I " " LDAP_EXOP_MODIFY_PASSWD);
	ops_shared_free(srv->ops);
	free(srv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("op_tables");
	TCase *tc = tcase_create("tables");
	tcase_add_test(tc, controls_each_operation_applies);
	tcase_add_test(tc, rows_are_consistent);
	tcase_add_test(tc, rootdse_lists_the_tables);
	suite_add_tcase(s, tc);
	return check_run(s);
}
