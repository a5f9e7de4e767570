/* Unit tests for server/net/proxy_header.c: PROXY protocol v1 and v2 headers as HAProxy
 * writes them (haproxy's doc/proxy-protocol.txt), cut short, malformed and oversized. */
#include <check.h>
#include <string.h>

#include "server/net/proxy_header.h"
#include "tests/check_run.h"

static enum proxy_status parse(const void *p, size_t len, size_t *used, struct proxy_source *s)
{
	const char *why = NULL;
	enum proxy_status st = proxy_header_parse(p, len, used, s, &why);
	ck_assert(st != PROXY_MALFORMED || why != NULL);
	return st;
}

static const unsigned char sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                      0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

/* A v2 header into out: cmd (0 LOCAL, 1 PROXY), fam_proto byte, body. Returns its length. */
static size_t v2(unsigned char *out, unsigned cmd, unsigned char famproto, const void *body,
                 size_t blen)
{
	memcpy(out, sig, 12);
	out[12] = (unsigned char)(0x20 | cmd);
	out[13] = famproto;
	out[14] = (unsigned char)(blen >> 8);
	out[15] = (unsigned char)blen;
	memcpy(out + 16, body, blen);
	return 16 + blen;
}

START_TEST(v1_tcp4_then_ldap)
{
	const char *h = "PROXY TCP4 192.0.2.7 127.0.0.1 40123 389\r\n0\x0c\x02\x01\x01";
	size_t used;
	struct proxy_source s;
	ck_assert_int_eq(parse(h, strlen(h), &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, strlen("PROXY TCP4 192.0.2.7 127.0.0.1 40123 389\r\n"));
	ck_assert_int_eq(s.version, 1);
	ck_assert_int_eq(s.addr.family, 4);
	ck_assert_mem_eq(s.addr.bytes, "\xc0\x00\x02\x07", 4);
	ck_assert_uint_eq(s.port, 40123);
}
END_TEST

START_TEST(v1_tcp6_and_unknown)
{
	const char *h = "PROXY TCP6 2001:db8::5 ::1 65535 636\r\n";
	size_t used;
	struct proxy_source s;
	ck_assert_int_eq(parse(h, strlen(h), &used, &s), PROXY_DONE);
	ck_assert_int_eq(s.addr.family, 6);
	ck_assert_uint_eq(s.addr.bytes[0], 0x20);
	ck_assert_uint_eq(s.addr.bytes[15], 5);
	ck_assert_uint_eq(s.port, 65535);
	const char *u = "PROXY UNKNOWN\r\n";
	ck_assert_int_eq(parse(u, strlen(u), &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, strlen(u));
	ck_assert_int_eq(s.addr.family, 0);
	u = "PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n";
	ck_assert_int_eq(parse(u, strlen(u), &used, &s), PROXY_DONE);
	ck_assert_int_eq(s.addr.family, 0);
}
END_TEST

/* Every prefix of a good header asks for more; none is taken as a whole. */
START_TEST(prefixes_need_more)
{
	const char *h = "PROXY TCP4 192.0.2.7 127.0.0.1 40123 389\r\n";
	size_t used;
	struct proxy_source s;
	for (size_t i = 0; i < strlen(h); i++)
		ck_assert_int_eq(parse(h, i, &used, &s), PROXY_NEED_MORE);
	unsigned char b[64], body[12] = {127, 0, 0, 9, 127, 0, 0, 1, 0x9c, 0x40, 1, 0x85};
	size_t n = v2(b, 1, 0x11, body, sizeof(body));
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(parse(b, i, &used, &s), PROXY_NEED_MORE);
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, n);
	ck_assert_mem_eq(s.addr.bytes, "\x7f\x00\x00\x09", 4);
	ck_assert_uint_eq(s.port, 40000);
}
END_TEST

START_TEST(v1_malformed)
{
	static const char *const bad[] = {
	    "PROXY TCP4 192.0.2.7 127.0.0.1 40123 389\n",         /* no CR */
	    "PROXY TCP4 192.0.2.7 127.0.0.1 40123\r\n",           /* a port missing */
	    "PROXY TCP4 192.0.2.7 127.0.0.1 40123 389 x\r\n",     /* one word too many */
	    "PROXY TCP4  192.0.2.7 127.0.0.1 40123 389\r\n",      /* two spaces */
	    "PROXY TCP4 2001:db8::1 127.0.0.1 40123 389\r\n",     /* v6 as TCP4 */
	    "PROXY TCP6 192.0.2.7 ::1 40123 389\r\n",             /* v4 as TCP6 */
	    "PROXY TCP4 192.0.2.300 127.0.0.1 40123 389\r\n",     /* not an address */
	    "PROXY TCP4 192.0.2.7 127.0.0.1 65536 389\r\n",       /* port too big */
	    "PROXY TCP4 192.0.2.7 127.0.0.1 040123 389\r\n",      /* leading zero */
	    "PROXY UDP4 192.0.2.7 127.0.0.1 40123 389\r\n",       /* not TCP */
	    "PROXX TCP4",                                         /* not the signature */
	    "0\x0c\x02\x01\x01`\x07\x02\x01\x03\x04\x00\x80\x00", /* LDAP without a header */
	};
	size_t used;
	struct proxy_source s;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(bad[i], strlen(bad[i]), &used, &s) == PROXY_MALFORMED, "%s",
		              bad[i]);
	/* 107 bytes and no LF: too long, whatever follows. */
	char longline[200];
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "PROXY TCP4 ", 11);
	ck_assert_int_eq(parse(longline, 107, &used, &s), PROXY_MALFORMED);
	ck_assert_int_eq(parse(longline, 106, &used, &s), PROXY_NEED_MORE);
	/* A NUL inside the line. */
	const char nul[] = "PROXY TCP4 1.2.3.4\0 127.0.0.1 1 2\r\n";
	ck_assert_int_eq(parse(nul, sizeof(nul) - 1, &used, &s), PROXY_MALFORMED);
}
END_TEST

START_TEST(v2_proxy_v6_local_unspec)
{
	unsigned char b[PROXY_HEADER_MAX + 32], body[36 + 8];
	memset(body, 0, sizeof(body));
	body[0] = 0x20, body[1] = 0x01, body[15] = 0x42; /* 2001::42 */
	body[31] = 1;                                    /* ::1 */
	body[32] = 0x12, body[33] = 0x34;
	/* A TLV after the addresses (PP2_TYPE_NOOP, 5 bytes) is skipped with the length. */
	body[36] = 0x04, body[37] = 0, body[38] = 2;
	size_t used;
	struct proxy_source s;
	size_t n = v2(b, 1, 0x21, body, 36 + 5);
	memcpy(b + n, "0\x05", 2);
	ck_assert_int_eq(parse(b, n + 2, &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, n);
	ck_assert_int_eq(s.version, 2);
	ck_assert_int_eq(s.addr.family, 6);
	ck_assert_uint_eq(s.addr.bytes[15], 0x42);
	ck_assert_uint_eq(s.port, 0x1234);
	/* An IPv4-mapped source is IPv4. */
	memset(body, 0, 16);
	body[10] = body[11] = 0xff, body[12] = 10, body[15] = 3;
	n = v2(b, 1, 0x21, body, 36);
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_DONE);
	ck_assert_int_eq(s.addr.family, 4);
	ck_assert_mem_eq(s.addr.bytes, "\x0a\x00\x00\x03", 4);
	/* LOCAL (HAProxy's health checks): no address, whatever the family says. */
	n = v2(b, 0, 0x11, body, 12);
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, 28);
	ck_assert_int_eq(s.addr.family, 0);
	n = v2(b, 0, 0x00, body, 0);
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, 16);
	/* PROXY over AF_UNSPEC or AF_UNIX: nothing to take. */
	n = v2(b, 1, 0x00, body, 0);
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_DONE);
	ck_assert_int_eq(s.addr.family, 0);
	/* The largest length taken, and one more. */
	static unsigned char big[PROXY_HEADER_MAX];
	n = v2(b, 0, 0x11, big, PROXY_HEADER_MAX - 16);
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_DONE);
	ck_assert_uint_eq(used, PROXY_HEADER_MAX);
	b[15]++;
	ck_assert_int_eq(parse(b, 16, &used, &s), PROXY_MALFORMED); /* known from 16 bytes */
}
END_TEST

START_TEST(v2_malformed)
{
	unsigned char b[64], body[36] = {0};
	size_t used;
	struct proxy_source s;
	size_t n = v2(b, 1, 0x11, body, 8); /* shorter than two IPv4 addresses and ports */
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_MALFORMED);
	n = v2(b, 1, 0x12, body, 12); /* UDP */
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_MALFORMED);
	n = v2(b, 2, 0x11, body, 12); /* command 2 */
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_MALFORMED);
	n = v2(b, 1, 0x41, body, 12); /* family 4 */
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_MALFORMED);
	n = v2(b, 1, 0x11, body, 12);
	b[12] = 0x11; /* version 1 in a binary header */
	ck_assert_int_eq(parse(b, n, &used, &s), PROXY_MALFORMED);
	b[12] = 0x21;
	b[7] = 'X'; /* the signature broken */
	ck_assert_int_eq(parse(b, 8, &used, &s), PROXY_MALFORMED);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proxy_header");
	TCase *tc = tcase_create("proxy_header");
	tcase_add_test(tc, v1_tcp4_then_ldap);
	tcase_add_test(tc, v1_tcp6_and_unknown);
	tcase_add_test(tc, prefixes_need_more);
	tcase_add_test(tc, v1_malformed);
	tcase_add_test(tc, v2_proxy_v6_local_unspec);
	tcase_add_test(tc, v2_malformed);
	suite_add_tcase(s, tc);
	return check_run(s);
}
