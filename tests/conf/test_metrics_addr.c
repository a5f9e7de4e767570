/* Unit tests for conf/metrics_addr.c: metrics_listen's ADDRESS:PORT, the loopback test,
 * and the refusals (each with its reason). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <string.h>

#include "conf/metrics_addr.h"
#include "tests/check_run.h"

START_TEST(ipv4_and_ipv6)
{
	struct metrics_addr a;
	char why[256];
	ck_assert_int_eq(metrics_addr_parse(&a, "127.0.0.1:9100", why, sizeof(why)), 0);
	ck_assert(a.set && a.loopback);
	ck_assert_int_eq(a.sa.ss_family, AF_INET);
	ck_assert_int_eq(ntohs(((struct sockaddr_in *)&a.sa)->sin_port), 9100);
	ck_assert_str_eq(a.text, "127.0.0.1:9100");
	ck_assert_int_eq(metrics_addr_parse(&a, "127.3.4.5:1", why, sizeof(why)), 0);
	ck_assert(a.loopback); /* all of 127.0.0.0/8 */
	ck_assert_int_eq(metrics_addr_parse(&a, "[::1]:9100", why, sizeof(why)), 0);
	ck_assert(a.set && a.loopback);
	ck_assert_int_eq(a.sa.ss_family, AF_INET6);
	ck_assert_int_eq(ntohs(((struct sockaddr_in6 *)&a.sa)->sin6_port), 9100);
	ck_assert_str_eq(a.text, "[::1]:9100");
	ck_assert_int_eq(metrics_addr_parse(&a, "0.0.0.0:9100", why, sizeof(why)), 0);
	ck_assert(a.set && !a.loopback);
	ck_assert_int_eq(metrics_addr_parse(&a, "[::]:9100", why, sizeof(why)), 0);
	ck_assert(a.set && !a.loopback);
	ck_assert_int_eq(metrics_addr_parse(&a, "192.0.2.1:80", why, sizeof(why)), 0);
	ck_assert(!a.loopback);
}
END_TEST

START_TEST(refused)
{
	static const struct {
		const char *in, *why;
	} bad[] = {
	    {"127.0.0.1", "expected ADDRESS:PORT"},
	    {"127.0.0.1:", "expected ADDRESS:PORT"},
	    {":9100", "expected ADDRESS:PORT"},
	    {"::1:9100", "expected ADDRESS:PORT"}, /* a bare IPv6 address: brackets needed */
	    {"[::1]9100", "expected ADDRESS:PORT"},
	    {"127.0.0.1:91x0", "expected ADDRESS:PORT"},
	    {"127.0.0.1:123456", "expected ADDRESS:PORT"},
	    {"127.0.0.1:0", "not in 1..65535"},
	    {"127.0.0.1:65536", "not in 1..65535"},
	    {"localhost:9100", "not an IP address"}, /* no name is looked up */
	    {"[localhost]:9100", "not an IP address"},
	    {"", "expected ADDRESS:PORT"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct metrics_addr a;
		char why[256] = "";
		ck_assert_msg(metrics_addr_parse(&a, bad[i].in, why, sizeof(why)) == -1,
		              "\"%s\" taken", bad[i].in);
		ck_assert_msg(strstr(why, bad[i].why), "\"%s\": %s", bad[i].in, why);
		ck_assert(!a.set);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics_addr");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, ipv4_and_ipv6);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return check_run(s);
}
