/*
 * Unit tests for the work protocol/filter_eval.c counts while it evaluates (struct filter_ctx's
 * work and work_limit, which a search slices and bounds itself by) and for filter_items
 * (what max_filter_items counts). Filters are parsed from their string form with libldap
 * (filter_from_string); the entry is stored as storage keeps it (storage/entry.c).
 */
#include <check.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
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

/* max_filter_items counts each substrings piece beyond an item's first as an item more. */
START_TEST(weight_counts_substring_pieces)
{
	ck_assert_uint_eq(filter_weight(parse("(uid=alice)")), 1);
	ck_assert_uint_eq(filter_weight(parse("(cn=*a*)")), 1);
	ck_assert_uint_eq(filter_weight(parse("(cn=a*b*c)")), 3);
	ck_assert_uint_eq(filter_weight(parse("(&(cn=a*b*c*d*)(!(sn=x*y)))")), 1 + 4 + 1 + 2);
	ck_assert_uint_eq(filter_items(parse("(&(cn=a*b*c*d*)(!(sn=x*y)))")), 4);
	ck_assert_uint_eq(filter_weight(NULL), 0);
}
END_TEST

/* A substrings item costs a unit more per value for each piece beyond its first and for
 * each 64 bytes of its pieces: the value is searched once a piece. */
START_TEST(work_counts_substring_pieces)
{
	uint64_t work = 0;
	ck_assert_int_eq(eval_work(parse("(uid=al*)"), &work, 0), FILTER_TRUE);
	ck_assert_uint_eq(work, 1 + 1);
	/* cn has 2 values; 4 pieces: 1 + 3 more a value */
	work = 0;
	ck_assert_int_eq(eval_work(parse("(cn=*q*r*s*t*)"), &work, 0), FILTER_FALSE);
	ck_assert_uint_eq(work, 1 + 2 * (1 + 3));
	/* one piece of 130 bytes: 2 units more a value */
	char text[160];
	snprintf(text, sizeof(text), "(cn=*%0130d*)", 7);
	work = 0;
	ck_assert_int_eq(eval_work(parse(text), &work, 0), FILTER_FALSE);
	ck_assert_uint_eq(work, 1 + 2 * (1 + 2));
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

/* Leaves for random filters: true, false and Undefined ones (an unknown rule), :dn: ones. */
static const char *const leaves[] = {"(uid=alice)",
                                     "(uid=bob)",
                                     "(cn=ali*)",
                                     "(cn=*smith)",
                                     "(objectClass=*)",
                                     "(sn=*)",
                                     "(member=uid=bob,ou=people,dc=example,dc=com)",
                                     "(:dn:caseIgnoreMatch:=people)",
                                     "(ou:dn:=people)",
                                     "(ou:dn:=staff)",
                                     "(cn:caseExactMatch:=Ali)",
                                     "(cn:1.2.3.4:=x)",
                                     "(uid>=b)",
                                     "(:dn:caseIgnoreMatch:=nomatch)"};

/* Appends a random filter of at most depth levels to text (rand_r with *seed). */
static void random_filter(char *text, size_t cap, unsigned *seed, int depth)
{
	size_t len = strlen(text);
	int pick = depth > 0 ? rand_r(seed) % 4 : 3;
	if (pick == 3) {
		snprintf(text + len, cap - len, "%s",
		         leaves[rand_r(seed) % (sizeof(leaves) / sizeof(leaves[0]))]);
		return;
	}
	snprintf(text + len, cap - len, "(%c", "&|!"[pick]);
	int n = pick == 2 ? 1 : 1 + rand_r(seed) % 5;
	for (int i = 0; i < n; i++)
		random_filter(text, cap, seed, depth - 1);
	len = strlen(text);
	snprintf(text + len, cap - len, ")");
}

/* Evaluates f with memo m, yielding step units past where it starts, until done; returns the
 * result and the calls it took in *calls. */
static enum filter_result eval_resumed(const struct filter *f, struct filter_memo *m, uint64_t step,
                                       int *calls)
{
	uint64_t work = 0;
	enum filter_result r;
	*calls = 0;
	filter_memo_clear(m);
	do {
		m->yield = work + step;
		struct filter_ctx ctx = {.dn = (const unsigned char *)entry_dn,
		                         .dnlen = strlen(entry_dn),
		                         .scratch = &scratch,
		                         .work = &work,
		                         .memo = m};
		r = filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx);
		++*calls;
		ck_assert_int_le(*calls, (int)m->n + 1); /* each call decides a node more */
	} while (!filter_memo_done(m, f));
	return r;
}

/* Resuming with the memo under tiny budgets gives what one evaluation without limits gives,
 * for random nested filters; the budget really cuts (more than one call for some). */
START_TEST(memo_resumes_to_the_same_result)
{
	unsigned seed = 23;
	int cut = 0;
	for (int i = 0; i < 2000; i++) {
		char text[8192] = "";
		random_filter(text, sizeof(text), &seed, 1 + i % 4);
		struct filter *f = parse(text);
		struct filter_ctx plain = {.dn = (const unsigned char *)entry_dn,
		                           .dnlen = strlen(entry_dn),
		                           .scratch = &scratch};
		enum filter_result want = filter_eval_ctx(f, entry.attrs, entry.attrslen, &plain);
		struct filter_memo m;
		ck_assert_int_eq(filter_memo_init(&m, f, &mem), 0);
		if (m.n == 0) {
			ck_assert_uint_lt(filter_items(f), FILTER_MEMO_MIN_ITEMS);
			continue;
		}
		for (uint64_t step = 1; step <= 13; step += 3) {
			int calls;
			ck_assert_msg(eval_resumed(f, &m, step, &calls) == want, "%s, step %llu",
			              text, (unsigned long long)step);
			cut += calls > 1;
		}
	}
	ck_assert_int_gt(cut, 1000);
}
END_TEST

/* An OR too costly for one budget ends across calls, each a few units past its yield point
 * but for the one leaf it must finish, and a cut call's result is not taken as the answer. */
START_TEST(memo_splits_one_entry)
{
	struct filter *f = dn_or(200, "(uid=alice)");
	struct filter_memo m;
	ck_assert_int_eq(filter_memo_init(&m, f, &mem), 0);
	ck_assert_uint_eq(m.n, 202);
	uint64_t work = 0;
	int calls = 0;
	enum filter_result r;
	do {
		uint64_t before = work;
		m.yield = work + 400;
		struct filter_ctx ctx = {.dn = (const unsigned char *)entry_dn,
		                         .dnlen = strlen(entry_dn),
		                         .scratch = &scratch,
		                         .work = &work,
		                         .memo = &m};
		r = filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx);
		if (!filter_memo_done(&m, f))
			ck_assert_int_eq(r, FILTER_UNDEFINED);
		ck_assert_uint_le(work - before, 400 + 2 * 12); /* the known ones cost 1 each */
		calls++;
	} while (!filter_memo_done(&m, f) && calls < 1000);
	ck_assert_int_eq(r, FILTER_TRUE);
	ck_assert_int_gt(calls, 5); /* 2,203 units without limits */
	ck_assert_int_lt(calls, 20);
	/* Cleared, the memo starts again: the first call is cut. */
	filter_memo_clear(&m);
	work = 0;
	m.yield = 100;
	struct filter_ctx ctx = {.scratch = &scratch, .work = &work, .memo = &m};
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_UNDEFINED);
	ck_assert(!filter_memo_done(&m, f));
	/* work_limit still bounds the whole: past it nothing more is decided. */
	filter_memo_clear(&m);
	work = 0;
	m.yield = 0;
	ctx.work_limit = 50;
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_UNDEFINED);
	ck_assert_uint_le(work, 50 + 12);
	/* A one-item filter gets no memo. */
	ck_assert_int_eq(filter_memo_init(&m, parse("(uid=alice)"), &mem), 0);
	ck_assert_uint_eq(m.n, 0);
	ck_assert(filter_memo_done(&m, f));
}
END_TEST

static Suite *filter_work_suite(void)
{
	Suite *s = suite_create("filter_work");
	TCase *tc = tcase_create("work");
	tcase_add_checked_fixture(tc, build_entry, free_entry);
	tcase_add_test(tc, items_counts_every_node);
	tcase_add_test(tc, weight_counts_substring_pieces);
	tcase_add_test(tc, work_counts_substring_pieces);
	tcase_add_test(tc, work_counts_items_and_values);
	tcase_add_test(tc, work_limit_stops_evaluation);
	tcase_add_test(tc, dn_items_share_one_parse);
	tcase_add_test(tc, memo_resumes_to_the_same_result);
	tcase_add_test(tc, memo_splits_one_entry);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(filter_work_suite());
}
