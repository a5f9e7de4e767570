/* The PROXY protocol header, v1 and v2: see proxy_header.h. */
#include "server/net/proxy_header.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/keyval.h"

static const unsigned char v2_sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                         0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
#define V1_MAX 107

static enum proxy_status bad(const char **why, const char *text)
{
	*why = text;
	return PROXY_MALFORMED;
}

/* A port in decimal, 0..65535, no leading zero but for "0". */
static bool v1_port(const char *s, uint16_t *port)
{
	long v;
	if (!s[0] || (s[0] == '0' && s[1]) || !kv_long(s, 0, 65535, &v))
		return false;
	*port = (uint16_t)v;
	return true;
}

/* "PROXY TCP4|TCP6 SRC DST SPORT DPORT\r\n" or "PROXY UNKNOWN ...\r\n". */
static enum proxy_status parse_v1(const unsigned char *p, size_t len, size_t *used,
                                  struct proxy_source *src, const char **why)
{
	size_t n = len < V1_MAX ? len : V1_MAX;
	const unsigned char *lf = memchr(p, '\n', n);
	if (!lf)
		return len >= V1_MAX ? bad(why, "PROXY v1 line longer than 107 bytes")
		                     : PROXY_NEED_MORE;
	size_t linelen = (size_t)(lf - p) + 1;
	if (linelen < 2 || lf[-1] != '\r')
		return bad(why, "PROXY v1 line does not end in CRLF");
	char line[V1_MAX + 1];
	memcpy(line, p, linelen - 2);
	line[linelen - 2] = '\0';
	if (memchr(line, '\0', linelen - 2))
		return bad(why, "PROXY v1 line holds a NUL");
	*used = linelen;
	src->version = 1;
	if (strncmp(line, "PROXY UNKNOWN", 13) == 0 && (line[13] == '\0' || line[13] == ' '))
		return PROXY_DONE; /* the connection's own address is kept */
	char proto[8], sa[48], da[48], sp[8], dp[8], extra[2];
	if (sscanf(line, "PROXY %7s %47s %47s %7s %7s %1s", proto, sa, da, sp, dp, extra) != 5)
		return bad(why, "PROXY v1 line: expected PROXY TCP4|TCP6 SRC DST SPORT DPORT");
	/* Exactly one space between the words (the spec's form, which sscanf does not check). */
	char again[128]; /* the longest the words allow: 6 + 7 + 47 + 47 + 7 + 7 + 4 spaces + NUL */
	snprintf(again, sizeof(again), "PROXY %s %s %s %s %s", proto, sa, da, sp, dp);
	if (strcmp(again, line) != 0)
		return bad(why, "PROXY v1 line: expected single spaces between its words");
	int fam = strcmp(proto, "TCP4") == 0 ? 4 : strcmp(proto, "TCP6") == 0 ? 6 : 0;
	if (!fam)
		return bad(why, "PROXY v1 line: the protocol must be TCP4, TCP6 or UNKNOWN");
	struct ip_addr dst;
	uint16_t dport;
	if (!ip_addr_parse(sa, &src->addr) || !ip_addr_parse(da, &dst) ||
	    (fam == 6) != (strchr(sa, ':') != NULL) || (fam == 6) != (strchr(da, ':') != NULL))
		return bad(why, "PROXY v1 line: an address not of its protocol");
	if (!v1_port(sp, &src->port) || !v1_port(dp, &dport))
		return bad(why, "PROXY v1 line: a port not in 0..65535");
	return PROXY_DONE;
}

/* The binary header: the signature, version and command, family, length, addresses. */
static enum proxy_status parse_v2(const unsigned char *p, size_t len, size_t *used,
                                  struct proxy_source *src, const char **why)
{
	if (len < 16)
		return PROXY_NEED_MORE;
	if ((p[12] >> 4) != 2)
		return bad(why, "PROXY v2 header: the version is not 2");
	unsigned cmd = p[12] & 0x0f, fam = p[13] >> 4, proto = p[13] & 0x0f;
	size_t body = (size_t)p[14] << 8 | p[15];
	if (cmd > 1)
		return bad(why, "PROXY v2 header: the command is neither LOCAL nor PROXY");
	if (16 + body > PROXY_HEADER_MAX)
		return bad(why, "PROXY v2 header longer than 536 bytes");
	if (len < 16 + body)
		return PROXY_NEED_MORE;
	*used = 16 + body;
	src->version = 2;
	if (cmd == 0)
		return PROXY_DONE; /* LOCAL: the proxy's own connection (a health check) */
	const unsigned char *a = p + 16;
	if (fam == 1 || fam == 2) { /* AF_INET, AF_INET6 */
		size_t alen = fam == 1 ? 4 : 16;
		if (proto != 1)
			return bad(why, "PROXY v2 header: not a STREAM (TCP) connection");
		if (body < 2 * alen + 4)
			return bad(why, "PROXY v2 header: shorter than its addresses");
		src->addr.family = fam == 1 ? 4 : 6;
		memcpy(src->addr.bytes, a, alen);
		src->port = (uint16_t)(a[2 * alen] << 8 | a[2 * alen + 1]);
		ip_addr_unmap(&src->addr); /* an IPv4-mapped source is the IPv4 client */
		return PROXY_DONE;
	}
	if (fam > 3)
		return bad(why, "PROXY v2 header: an unknown address family");
	return PROXY_DONE; /* AF_UNSPEC or AF_UNIX: no address to take */
}

enum proxy_status proxy_header_parse(const unsigned char *p, size_t len, size_t *used,
                                     struct proxy_source *src, const char **why)
{
	memset(src, 0, sizeof(*src));
	*used = 0;
	static const char v1_sig[] = "PROXY ";
	if (len > 0 && p[0] == 'P') {
		size_t n = len < 6 ? len : 6;
		if (memcmp(p, v1_sig, n) != 0)
			return bad(why, "not a PROXY protocol header");
		return len < 6 ? PROXY_NEED_MORE : parse_v1(p, len, used, src, why);
	}
	if (len == 0)
		return PROXY_NEED_MORE;
	if (memcmp(p, v2_sig, len < sizeof(v2_sig) ? len : sizeof(v2_sig)) != 0)
		return bad(why, "not a PROXY protocol header");
	return parse_v2(p, len, used, src, why);
}
