/* Unit tests for conf/access_rule.c: reading "access = to ... by ..." text. */
#include <check.h>
#include <string.h>

#include "conf/access_rule.h"
#include "tests/check_run.h"

static struct access_rule rule;
static char why[400];

static void teardown(void)
{
	access_rule_free(&rule);
}

/* Parses text into a fresh rule; returns access_rule_parse's result. */
static int parse(const char *text)
{
	access_rule_free(&rule);
	why[0] = '\0';
	return access_rule_parse(&rule, text, why, sizeof(why));
}

static void fails(const char *text, const char *needle)
{
	ck_assert_msg(parse(text) == -1, "accepted: %s", text);
	ck_assert_msg(strstr(why, needle) != NULL, "\"%s\": reason \"%s\" lacks \"%s\"", text, why,
	              needle);
}

START_TEST(star_and_levels)
{
	ck_assert_int_eq(parse("to * by self read by anonymous auth by users compare by * none"),
	                 0);
	ck_assert_int_eq(rule.scope, ACCESS_SCOPE_ANY);
	ck_assert_ptr_null(rule.dn);
	ck_assert_ptr_null(rule.filter);
	ck_assert_ptr_null(rule.attrs);
	ck_assert_int_eq(rule.nwho, 4);
	ck_assert_int_eq(rule.who[0].kind, ACCESS_WHO_SELF);
	ck_assert_int_eq(rule.who[0].level, ACCESS_READ);
	ck_assert_int_eq(rule.who[1].kind, ACCESS_WHO_ANONYMOUS);
	ck_assert_int_eq(rule.who[1].level, ACCESS_AUTH);
	ck_assert_int_eq(rule.who[2].kind, ACCESS_WHO_USERS);
	ck_assert_int_eq(rule.who[2].level, ACCESS_COMPARE);
	ck_assert_int_eq(rule.who[3].kind, ACCESS_WHO_ANY);
	ck_assert_int_eq(rule.who[3].level, ACCESS_NONE);
	ck_assert_str_eq(access_level_name(rule.who[2].level), "compare");
}
END_TEST

START_TEST(what_clauses)
{
	ck_assert_int_eq(parse("to dn.subtree=\"ou=People, dc=example,dc=com\" "
	                       "filter=(&(objectClass=person)(cn=John Smith)) "
	                       "attrs=cn,userPassword,entry,@posixAccount by * read"),
	                 0);
	ck_assert_int_eq(rule.scope, ACCESS_SCOPE_SUBTREE);
	ck_assert_str_eq(rule.dn, "ou=People, dc=example,dc=com");
	ck_assert_str_eq(rule.filter, "(&(objectClass=person)(cn=John Smith))");
	ck_assert_str_eq(rule.attrs[0], "cn");
	ck_assert_str_eq(rule.attrs[1], "userPassword");
	ck_assert_str_eq(rule.attrs[2], "entry");
	ck_assert_str_eq(rule.attrs[3], "@posixAccount");
	ck_assert_ptr_null(rule.attrs[4]);

	static const struct {
		const char *text;
		enum access_scope scope;
	} styles[] = {
	    {"to dn=dc=x by * read", ACCESS_SCOPE_BASE},
	    {"to dn.exact=dc=x by * read", ACCESS_SCOPE_BASE},
	    {"to dn.baseObject=dc=x by * read", ACCESS_SCOPE_BASE},
	    {"to dn.one=dc=x by * read", ACCESS_SCOPE_ONE},
	    {"to dn.onelevel=dc=x by * read", ACCESS_SCOPE_ONE},
	    {"to dn.sub=dc=x by * read", ACCESS_SCOPE_SUBTREE},
	    {"to dn.children=dc=x by * read", ACCESS_SCOPE_CHILDREN},
	};
	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++) {
		ck_assert_int_eq(parse(styles[i].text), 0);
		ck_assert_int_eq(rule.scope, styles[i].scope);
		ck_assert_str_eq(rule.dn, "dc=x");
	}
}
END_TEST

START_TEST(who_clauses)
{
	ck_assert_int_eq(parse("to * by dn.children=\"ou=admins,dc=x\" read "
	                       "by group=\"cn=staff,dc=x\" search "
	                       "by group/groupOfUniqueNames/uniqueMember=cn=u,dc=x compare "
	                       "by dn=\"uid=a,dc=x\" disclose stop"),
	                 0);
	ck_assert_int_eq(rule.nwho, 4);
	ck_assert_int_eq(rule.who[0].kind, ACCESS_WHO_DN);
	ck_assert_int_eq(rule.who[0].scope, ACCESS_SCOPE_CHILDREN);
	ck_assert_str_eq(rule.who[0].dn, "ou=admins,dc=x");
	ck_assert_int_eq(rule.who[1].kind, ACCESS_WHO_GROUP);
	ck_assert_str_eq(rule.who[1].group_class, "groupOfNames");
	ck_assert_str_eq(rule.who[1].group_attr, "member");
	ck_assert_int_eq(rule.who[1].level, ACCESS_SEARCH);
	ck_assert_str_eq(rule.who[2].group_class, "groupOfUniqueNames");
	ck_assert_str_eq(rule.who[2].group_attr, "uniqueMember");
	ck_assert_str_eq(rule.who[2].dn, "cn=u,dc=x");
	ck_assert_int_eq(rule.who[3].scope, ACCESS_SCOPE_BASE);
	ck_assert_int_eq(rule.who[3].level, ACCESS_DISCLOSE);
}
END_TEST

/* slapd's peername forms: ip (dotted mask), ipv6, path. */
START_TEST(peername_clauses)
{
	ck_assert_int_eq(parse("to * by peername.ip=127.0.0.1 read "
	                       "by peername.ip=10.0.0.0%255.0.0.0 search "
	                       "by peername.ipv6=2001:db8::%32 compare "
	                       "by peername.path=/run/minidir/ldapi read by * none"),
	                 0);
	ck_assert_int_eq(rule.nwho, 5);
	ck_assert_int_eq(rule.who[0].kind, ACCESS_WHO_PEER_IP);
	struct ip_addr a;
	ck_assert(ip_addr_parse("127.0.0.1", &a) && ip_net_holds(&rule.who[0].net, &a));
	ck_assert(ip_addr_parse("127.0.0.2", &a) && !ip_net_holds(&rule.who[0].net, &a));
	ck_assert(ip_addr_parse("10.200.3.4", &a) && ip_net_holds(&rule.who[1].net, &a));
	ck_assert_int_eq(rule.who[1].level, ACCESS_SEARCH);
	ck_assert(ip_addr_parse("2001:db8:ffff::1", &a) && ip_net_holds(&rule.who[2].net, &a));
	ck_assert_int_eq(rule.who[3].kind, ACCESS_WHO_PEER_PATH);
	ck_assert_str_eq(rule.who[3].path, "/run/minidir/ldapi");
	fails("to * by peername.ip=::1 read", "not an IPv4 address");
	fails("to * by peername.ipv6=127.0.0.1 read", "not an IPv6 address");
	fails("to * by peername.ip=10.0.0.0%255.0.255.0 read", "contiguous");
	fails("to * by peername.ip=10.0.0.1{389} read", "{PORT} is not supported");
	fails("to * by peername.ip=localhost read", "not an IP address");
	fails("to * by peername=IP=127.0.0.1:389 read", "other peername styles");
	fails("to * by peername.regex=.* read", "other peername styles");
	fails("to * by peername.path=relative read", "absolute");
}
END_TEST

START_TEST(continuation_and_defaults)
{
	/* A rule over several lines: "to" first, then "by" pieces added to it. */
	ck_assert_int_eq(parse("to attrs=userPassword"), 0);
	ck_assert_int_eq(rule.nwho, 0);
	ck_assert_int_eq(access_rule_parse(&rule, "by self read", why, sizeof(why)), 0);
	ck_assert_int_eq(access_rule_parse(&rule, "  by anonymous", why, sizeof(why)), 0);
	ck_assert_int_eq(rule.nwho, 2);
	ck_assert_int_eq(rule.who[1].level, ACCESS_NONE); /* no level: none, slapd's +0 */
	ck_assert(access_rule_starts("to *"));
	ck_assert(access_rule_starts("  TO dn=dc=x"));
	ck_assert(!access_rule_starts("by * read"));
	ck_assert(!access_rule_starts("tomorrow"));
	/* write and manage grant reading on a read-only server */
	ck_assert_int_eq(parse("to * by users write by * manage"), 0);
	ck_assert_int_eq(rule.who[0].level, ACCESS_READ);
	ck_assert_int_eq(rule.who[1].level, ACCESS_READ);
}
END_TEST

START_TEST(errors)
{
	fails("", "expected \"to WHAT");
	fails("from * by * read", "expected \"to WHAT");
	fails("to by * read", "names nothing");
	fails("to dn.regex=.* by * read", "regular expressions are not supported");
	fails("to dn.subtree=notadn by * read", "not a valid DN");
	fails("to filter=(cn=x by * read", "not a valid LDAP filter");
	fails("to filter=((( by * read", "not a valid LDAP filter");
	fails("to attrs=cn,,sn by * read", "empty attribute name");
	fails("to attrs=!person by * read", "not supported");
	fails("to attrs=c*n by * read", "not an attribute name");
	fails("to attrs=cn val=x by * read", "value rules are not supported");
	fails("to colour=blue by * read", "expected dn=, filter= or attrs=");
	fails("to * by", "needs a who");
	fails("to * by everyone read", "expected *, anonymous");
	fails("to * by * rw", "expected a level");
	fails("to * by * =rsc", "privileges (=rscx) are not supported");
	fails("to * by * read break", "not supported: the first matching clause decides");
	fails("to * by * read continue", "not supported");
	fails("to * by * read junk", "expected \"by\"");
	fails("to * by group/=cn=x read", "expected group, group/CLASS");
	fails("to * by group/a/b/c=cn=x read", "expected group, group/CLASS");
	fails("to * by dn.subtree=\"cn=x read", "double quote is left open");
}
END_TEST

static Suite *access_rule_suite(void)
{
	Suite *s = suite_create("access_rule");
	TCase *tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, star_and_levels);
	tcase_add_test(tc, what_clauses);
	tcase_add_test(tc, who_clauses);
	tcase_add_test(tc, peername_clauses);
	tcase_add_test(tc, continuation_and_defaults);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(access_rule_suite());
}
