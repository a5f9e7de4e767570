/* IP networks: parsing and matching (see ip_net.h). */
#include "conf/ip_net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf/keyval.h"

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void ip_addr_unmap(struct ip_addr *a)
{
	if (a->family == 6 && memcmp(a->bytes, v4_mapped, 12) == 0) {
		memmove(a->bytes, a->bytes + 12, 4);
		memset(a->bytes + 4, 0, 12);
		a->family = 4;
	}
}

bool ip_addr_parse(const char *s, struct ip_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->bytes) == 1) {
		a->family = 4;
		return true;
	}
	if (inet_pton(AF_INET6, s, a->bytes) == 1) {
		a->family = 6;
		ip_addr_unmap(a);
		return true;
	}
	return false;
}

void ip_addr_from_sockaddr(struct ip_addr *a, const void *sa)
{
	memset(a, 0, sizeof(*a));
	sa_family_t fam;
	memcpy(&fam, (const char *)sa + offsetof(struct sockaddr, sa_family), sizeof(fam));
	if (fam == AF_INET) {
		const struct sockaddr_in *in = sa;
		memcpy(a->bytes, &in->sin_addr, 4);
		a->family = 4;
	} else if (fam == AF_INET6) {
		const struct sockaddr_in6 *in6 = sa;
		memcpy(a->bytes, &in6->sin6_addr, 16);
		a->family = 6;
		ip_addr_unmap(a);
	}
}

/* The address part s[0..len) into n->addr. */
static int take_addr(struct ip_net *n, const char *s, size_t len, const char *whole, char *why,
                     size_t whylen)
{
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return kv_fail(why, whylen, "\"%s\": expected an IP address", whole);
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!ip_addr_parse(buf, &n->addr))
		return kv_fail(why, whylen, "\"%s\": \"%s\" is not an IP address", whole, buf);
	return 0;
}

static int take_prefix(struct ip_net *n, const char *s, const char *whole, char *why, size_t whylen)
{
	long max = n->addr.family == 4 ? 32 : 128, p;
	if (!kv_long(s, 0, max, &p))
		return kv_fail(why, whylen, "\"%s\": the prefix length must be 0..%ld", whole, max);
	n->prefix = (uint8_t)p;
	return 0;
}

/* Bits beyond the prefix are cleared, so that holds compares the significant bits only. */
static void clear_host_bits(struct ip_net *n)
{
	unsigned bytes = n->addr.family == 4 ? 4 : 16;
	for (unsigned i = 0; i < bytes; i++) {
		unsigned from = i * 8;
		if (from >= n->prefix)
			n->addr.bytes[i] = 0;
		else if (n->prefix - from < 8)
			n->addr.bytes[i] &= (uint8_t)(0xff << (8 - (n->prefix - from)));
	}
}

int ip_net_parse_cidr(struct ip_net *n, const char *s, char *why, size_t whylen)
{
	memset(n, 0, sizeof(*n));
	const char *slash = strchr(s, '/');
	if (take_addr(n, s, slash ? (size_t)(slash - s) : strlen(s), s, why, whylen) < 0)
		return -1;
	n->prefix = n->addr.family == 4 ? 32 : 128;
	if (slash && take_prefix(n, slash + 1, s, why, whylen) < 0)
		return -1;
	clear_host_bits(n);
	return 0;
}

/* A mask written as an address: its ones must be contiguous; their count into n->prefix. */
static int mask_prefix(struct ip_net *n, const char *mask, const char *whole, char *why,
                       size_t whylen)
{
	struct ip_addr m;
	int fam = n->addr.family == 4 ? AF_INET : AF_INET6;
	memset(&m, 0, sizeof(m));
	if (inet_pton(fam, mask, m.bytes) != 1)
		return kv_fail(why, whylen, "\"%s\": \"%s\" is not a mask of that address family",
		               whole, mask);
	unsigned bytes = fam == AF_INET ? 4 : 16, ones = 0;
	bool zero_seen = false;
	for (unsigned i = 0; i < bytes * 8; i++) {
		bool bit = m.bytes[i / 8] & (0x80 >> (i % 8));
		if (bit && zero_seen)
			return kv_fail(why, whylen, "\"%s\": the mask's ones must be contiguous",
			               whole);
		if (bit)
			ones++;
		else
			zero_seen = true;
	}
	n->prefix = (uint8_t)ones;
	return 0;
}

int ip_net_parse_mask(struct ip_net *n, const char *s, char *why, size_t whylen)
{
	memset(n, 0, sizeof(*n));
	if (strchr(s, '{'))
		return kv_fail(why, whylen, "\"%s\": a {PORT} is not supported", s);
	const char *pct = strchr(s, '%');
	if (take_addr(n, s, pct ? (size_t)(pct - s) : strlen(s), s, why, whylen) < 0)
		return -1;
	n->prefix = n->addr.family == 4 ? 32 : 128;
	if (pct) {
		const char *mask = pct + 1;
		int rc = strchr(mask, '.') || strchr(mask, ':')
		             ? mask_prefix(n, mask, s, why, whylen)
		             : take_prefix(n, mask, s, why, whylen);
		if (rc < 0)
			return -1;
	}
	clear_host_bits(n);
	return 0;
}

bool ip_net_holds(const struct ip_net *n, const struct ip_addr *a)
{
	if (a->family == 0 || a->family != n->addr.family)
		return false;
	unsigned full = n->prefix / 8, rest = n->prefix % 8;
	if (memcmp(n->addr.bytes, a->bytes, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t m = (uint8_t)(0xff << (8 - rest));
	return (a->bytes[full] & m) == n->addr.bytes[full];
}
