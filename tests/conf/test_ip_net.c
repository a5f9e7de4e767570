/* Unit tests for conf/ip_net.c: proxy_from's CIDR networks and peername.ip's IP%MASK. */
#include <check.h>
#include <string.h>

#include "conf/ip_net.h"
#include "tests/check_run.h"

static bool holds(const struct ip_net *n, const char *addr)
{
	struct ip_addr a;
	ck_assert_msg(ip_addr_parse(addr, &a), "%s", addr);
	return ip_net_holds(n, &a);
}

START_TEST(cidr)
{
	struct ip_net n;
	char why[200];
	ck_assert_int_eq(ip_net_parse_cidr(&n, "10.0.0.0/8", why, sizeof(why)), 0);
	ck_assert(holds(&n, "10.255.1.2"));
	ck_assert(!holds(&n, "11.0.0.1"));
	ck_assert(!holds(&n, "::1"));
	ck_assert(holds(&n, "::ffff:10.1.2.3")); /* v4-mapped is IPv4 */
	ck_assert_int_eq(ip_net_parse_cidr(&n, "127.0.0.1", why, sizeof(why)), 0);
	ck_assert(holds(&n, "127.0.0.1"));
	ck_assert(!holds(&n, "127.0.0.2"));
	ck_assert_int_eq(ip_net_parse_cidr(&n, "192.168.1.77/28", why, sizeof(why)), 0);
	ck_assert(holds(&n, "192.168.1.64") && holds(&n, "192.168.1.79"));
	ck_assert(!holds(&n, "192.168.1.80"));
	ck_assert_int_eq(ip_net_parse_cidr(&n, "::1", why, sizeof(why)), 0);
	ck_assert(holds(&n, "::1") && !holds(&n, "::2") && !holds(&n, "127.0.0.1"));
	ck_assert_int_eq(ip_net_parse_cidr(&n, "2001:db8::/33", why, sizeof(why)), 0);
	ck_assert(holds(&n, "2001:db8:7fff::1") && !holds(&n, "2001:db8:8000::1"));
	ck_assert_int_eq(ip_net_parse_cidr(&n, "0.0.0.0/0", why, sizeof(why)), 0);
	ck_assert(holds(&n, "203.0.113.9"));
	static const char *const bad[] = {"10.0.0.0/33", "::/129",     "10.0.0/8", "host.example",
	                                  "10.0.0.0/",   "10.0.0.0/x", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(ip_net_parse_cidr(&n, bad[i], why, sizeof(why)) < 0, "%s", bad[i]);
		ck_assert(why[0] != '\0');
	}
}
END_TEST

START_TEST(slapd_mask)
{
	struct ip_net n;
	char why[200];
	ck_assert_int_eq(ip_net_parse_mask(&n, "10.0.0.0%255.0.0.0", why, sizeof(why)), 0);
	ck_assert(holds(&n, "10.9.9.9") && !holds(&n, "11.0.0.0"));
	ck_assert_int_eq(ip_net_parse_mask(&n, "192.168.1.16%255.255.255.240", why, sizeof(why)),
	                 0);
	ck_assert(holds(&n, "192.168.1.31") && !holds(&n, "192.168.1.32"));
	ck_assert_int_eq(ip_net_parse_mask(&n, "127.0.0.1", why, sizeof(why)), 0);
	ck_assert(holds(&n, "127.0.0.1") && !holds(&n, "127.0.0.3"));
	ck_assert_int_eq(ip_net_parse_mask(&n, "2001:db8::%ffff:ffff::", why, sizeof(why)), 0);
	ck_assert(holds(&n, "2001:db8:1::1") && !holds(&n, "2001:db9::1"));
	ck_assert_int_eq(ip_net_parse_mask(&n, "2001:db8::%32", why, sizeof(why)), 0);
	ck_assert(holds(&n, "2001:db8:1::1"));
	static const char *const bad[] = {"10.0.0.0%255.0.255.0",
	                                  "10.0.0.0%ffff::", "192.168.1.16%255.255.255.240{9009}",
	                                  "10.0.0.0%33", "x%255.0.0.0"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ip_net_parse_mask(&n, bad[i], why, sizeof(why)) < 0, "%s", bad[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ip_net");
	TCase *tc = tcase_create("ip_net");
	tcase_add_test(tc, cidr);
	tcase_add_test(tc, slapd_mask);
	suite_add_tcase(s, tc);
	return check_run(s);
}
