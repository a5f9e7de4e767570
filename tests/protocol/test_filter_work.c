/*
 * Unit tests for the work protocol/filter.c counts while it evaluates (struct filter_ctx's
 * work and work_limit, which a search slices and bounds itself by) and for filter_items
 * (what max_filter_items counts). Filters are parsed from their string form with libldap
 * (filter_from_string); the entry is stored as storage keeps it (storage/entry.c).
 */
#include <check.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/filter.h"
#include "storage/entry.h"
#include "tests/check_run.h"

static const char entry_dn[] = "uid=alice,ou=people,dc=example,dc=com";
static struct buf record, scratch;
static struct entry_view entry;
static struct arena mem;

/* uid=alice with four attributes: objectClass (2 values), uid, cn (2 values), member. */
static void build_entry(void)
{
	struct berval oc[] = {{3, "top"}, {6, "person"}}, uid[] = {{5, "alice"}},
	              cn[] = {{11, "Alice Smith"}, {3, "Ali"}},
	              member[] = {{strlen("uid=bob,ou=people,dc=example,dc=com"),
	                           "uid=bob,ou=people,dc=example,dc=com"}};
	struct berval *ocp[] = {&oc[0], &oc[1], NULL}, *uidp[] = {&uid[0], NULL},
	              *cnp[] = {&cn[0], &cn[1], NULL}, *memberp[] = {&member[0], NULL};
	LDAPMod mods[] = {{LDAP_MOD_ADD | LDAP_MOD_BVALUES, "objectClass", {.modv_bvals = ocp}},
	                  {LDAP_MOD_ADD | LDAP_MOD_BVALUES, "uid", {.modv_bvals = uidp}},
	                  {LDAP_MOD_ADD | LDAP_MOD_BVALUES, "cn", {.modv_bvals = cnp}},
	                  {LDAP_MOD_ADD | LDAP_MOD_BVALUES, "member", {.modv_bvals = memberp}}};
	LDAPMod *modp[] = {&mods[0], &mods[1], &mods[2], &mods[3], NULL};
	const char key[] = "dc=com\0dc=example\0ou=people\0uid=alice\0";
	struct berval dn = {strlen(entry_dn), (char *)entry_dn};
	memset(&record, 0, sizeof(record));
	memset(&scratch, 0, sizeof(scratch));
	memset(&mem, 0, sizeof(mem));
	ck_assert_int_eq(
	    entry_encode(&record, 7, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(record.data, record.len, &entry), 0);
}

static void free_entry(void)
{
	buf_free(&record);
	buf_free(&scratch);
	arena_free(&mem);
}

static struct filter *parse(const char *text)
{
	struct filter *f = filter_from_string(text, &mem);
	ck_assert_msg(f != NULL, "%s does not parse", text);
	return f;
}

/* Evaluates f with the entry's DN; *work in and out, limit as work_limit. */
static enum filter_result eval_work(const struct filter *f, uint64_t *work, uint64_t limit)
{
	struct filter_ctx ctx = {.dn = (const unsigned char *)entry_dn,
	                         .dnlen = strlen(entry_dn),
	                         .scratch = &scratch,
	                         .work = work,
	                         .work_limit = limit};
	return filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx);
}

/* An OR of n items "(:dn:caseIgnoreMatch:=nomatch.J)" and then last (or nothing). */
static struct filter *dn_or(int n, const char *last)
{
	size_t cap = (size_t)n * 48 + 64;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	size_t len = (size_t)snprintf(text, cap, "(|");
	for (int j = 0; j < n; j++)
		len +=
		    (size_t)snprintf(text + len, cap - len, "(:dn:caseIgnoreMatch:=nomatch.%d)", j);
	snprintf(text + len, cap - len, "%s)", last ? last : "");
	struct filter *f = parse(text);
	free(text);
	return f;
}

START_TEST(items_counts_every_node)
{
	ck_assert_uint_eq(filter_items(parse("(uid=alice)")), 1);
	ck_assert_uint_eq(filter_items(parse("(&(uid=a)(|(cn=b)(sn=c))(!(mail=d)))")), 7);
	ck_assert_uint_eq(filter_items(dn_or(2000, NULL)), 2001);
	ck_assert_uint_eq(filter_items(NULL), 0);
}
END_TEST

/* One unit per item tested and per value or DN AVA compared: an equality item on a
 * one-valued attribute is 2, an OR of them one more; counting adds to what *work held. */
START_TEST(work_counts_items_and_values)
{
	uint64_t work = 0;
	ck_assert_int_eq(eval_work(parse("(uid=alice)"), &work, 0), FILTER_TRUE);
	ck_assert_uint_eq(work, 2);
	work = 100;
	ck_assert_int_eq(eval_work(parse("(|(uid=bob)(uid=carol)(cn=ali))"), &work, 0),
	                 FILTER_TRUE);
	/* or 1, two uid items 2 each, cn 1 + its 2 values */
	ck_assert_uint_eq(work, 100 + 1 + 2 + 2 + 3);
	/* A typeless :dn: item compares every value (6) and every AVA of the DN (4). */
	work = 0;
	ck_assert_int_eq(eval_work(parse("(:dn:caseIgnoreMatch:=nomatch)"), &work, 0),
	                 FILTER_FALSE);
	ck_assert_uint_eq(work, 1 + 6 + 4);
	/* A value under a DN rule costs 12. */
	work = 0;
	ck_assert_int_eq(
	    eval_work(parse("(member=uid=carol,ou=people,dc=example,dc=com)"), &work, 0),
	    FILTER_FALSE);
	ck_assert_uint_eq(work, 1 + 12);
	/* Without a counter nothing is counted and nothing limits. */
	struct filter_ctx ctx = {.scratch = &scratch};
	ck_assert_int_eq(
	    filter_eval_ctx(dn_or(3000, "(uid=alice)"), entry.attrs, entry.attrslen, &ctx),
	    FILTER_TRUE);
}
END_TEST

/* Past work_limit evaluation stops: the rest of the OR is not tested (the match at its end
 * is not found), and the work ends within a value of the limit, not at the filter's end. */
START_TEST(work_limit_stops_evaluation)
{
	struct filter *f = dn_or(2000, "(uid=alice)");
	uint64_t work = 0;
	ck_assert_int_eq(eval_work(f, &work, 0), FILTER_TRUE);
	ck_assert_uint_eq(work, 1 + 2000 * 11 + 2);
	work = 0;
	ck_assert_int_eq(eval_work(f, &work, 5000), FILTER_UNDEFINED);
	ck_assert_uint_gt(work, 5000);
	ck_assert_uint_le(work, 5000 + 12); /* at most one value more */
	/* The limit counts from what *work held before: a search's work over its candidates. */
	work = 4995;
	ck_assert_int_eq(eval_work(parse("(|(uid=bob)(cn=x)(uid=alice))"), &work, 5000),
	                 FILTER_UNDEFINED);
	ck_assert_uint_eq(work, 5001);
	/* A NOT over a cut evaluation is Undefined too, not the inverse of it. */
	work = 0;
	ck_assert_int_eq(eval_work(parse("(!(|(uid=bob)(uid=carol)(uid=dave)))"), &work, 3),
	                 FILTER_UNDEFINED);
}
END_TEST

/* The DN parsed once for all :dn: items still gives each item its own answer. */
START_TEST(dn_items_share_one_parse)
{
	uint64_t work = 0;
	ck_assert_int_eq(eval_work(dn_or(50, "(ou:dn:=people)"), &work, 0), FILTER_TRUE);
	ck_assert_int_eq(eval_work(dn_or(50, "(ou:dn:=staff)"), &work, 0), FILTER_FALSE);
	ck_assert_int_eq(
	    eval_work(parse("(&(dc:dn:=example)(dc:dn:=com)(uid:dn:=alice))"), &work, 0),
	    FILTER_TRUE);
	ck_assert_int_eq(eval_work(parse("(&(dc:dn:=example)(!(dc:dn:=org)))"), &work, 0),
	                 FILTER_TRUE);
}
END_TEST

static Suite *filter_work_suite(void)
{
	Suite *s = suite_create("filter_work");
	TCase *tc = tcase_create("work");
	tcase_add_checked_fixture(tc, build_entry, free_entry);
	tcase_add_test(tc, items_counts_every_node);
	tcase_add_test(tc, work_counts_items_and_values);
	tcase_add_test(tc, work_limit_stops_evaluation);
	tcase_add_test(tc, dn_items_share_one_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(filter_work_suite());
}
