/*
 * IP networks as the config writes them: proxy_from's sources (CIDR, "10.0.0.0/8", "::1")
 * and the access rules' peername.ip / peername.ipv6 (slapd's "IP%MASK", a dotted mask or,
 * for IPv6, a prefix length). A bare address is that one address. An IPv4-mapped IPv6
 * address (::ffff:a.b.c.d) is matched as the IPv4 address it maps, both in a network and
 * in the address asked about, as a dual-stack socket reports IPv4 clients so.
 *
 * Thread rules: no state.
 */
#ifndef MINIDIR_CONF_IP_NET_H
#define MINIDIR_CONF_IP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An address: family 4 or 6 (0: none, such as an ldapi:// peer), bytes in network order
 * (IPv4 in the first 4). */
struct ip_addr {
	uint8_t family;
	uint8_t bytes[16];
};

/* A network: addr with its first prefix bits significant. */
struct ip_net {
	struct ip_addr addr;
	uint8_t prefix; /* 0..32 for IPv4, 0..128 for IPv6 */
};

/* Reads a numeric address (IPv4 dotted or IPv6) into *a; false if s is not one. */
bool ip_addr_parse(const char *s, struct ip_addr *a);

/* An IPv4-mapped IPv6 address in *a becomes the IPv4 address it maps; others stay. */
void ip_addr_unmap(struct ip_addr *a);

/* Sets *a from a struct sockaddr (AF_INET or AF_INET6, v4-mapped taken as IPv4); any
 * other family leaves family 0. */
void ip_addr_from_sockaddr(struct ip_addr *a, const void *sa);

/* "ADDR" or "ADDR/PREFIX" (proxy_from). Returns 0, or -1 with the reason in why. */
int ip_net_parse_cidr(struct ip_net *n, const char *s, char *why, size_t whylen);

/* slapd's peername.ip / peername.ipv6 value: "ADDR" or "ADDR%MASK", MASK a dotted
 * IPv4 mask (contiguous ones) or, for IPv6, an address mask or a prefix length. A
 * trailing "{PORT}" is refused (not supported). Returns 0, or -1 with the reason in why. */
int ip_net_parse_mask(struct ip_net *n, const char *s, char *why, size_t whylen);

/* True if a is inside n (families must agree). */
bool ip_net_holds(const struct ip_net *n, const struct ip_addr *a);

#endif
