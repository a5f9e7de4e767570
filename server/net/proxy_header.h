/*
 * The HAProxy PROXY protocol header (versions 1 and 2, haproxy's doc/proxy-protocol.txt)
 * that a load balancer sends before the client's bytes on a pldap:// or pldaps://
 * listener: who the client is. Parsing only; the connection (conn_proxy.c) calls it on
 * what it has read, and decides what to do with the answer.
 *
 * Bounds: a v1 line is at most 107 bytes with its CRLF; a v2 header is 16 bytes and a
 * length of at most PROXY_HEADER_MAX - 16, so nothing past PROXY_HEADER_MAX is ever
 * looked at, and bytes that cannot begin either version are refused at once.
 *
 * Thread rules: no state.
 */
#ifndef MINIDIR_SERVER_NET_PROXY_HEADER_H
#define MINIDIR_SERVER_NET_PROXY_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "conf/ip_net.h"

/* The largest header taken: 16 + 520 (v2; addresses and some TLVs), and v1's 107. */
#define PROXY_HEADER_MAX 536

enum proxy_status {
	PROXY_NEED_MORE, /* a header's beginning: read more */
	PROXY_DONE,      /* a whole header, *used bytes */
	PROXY_MALFORMED, /* not a header, or one that breaks the rules: *why says which */
};

/* What the header says of the client. */
struct proxy_source {
	struct ip_addr addr; /* family 0: keep the connection's own (v2 LOCAL, v1 UNKNOWN,
	                        v2 AF_UNSPEC or AF_UNIX) */
	uint16_t port;       /* host order */
	int version;         /* 1 or 2 */
};

/*
 * Reads a header at the start of p[0..len). PROXY_DONE sets *used (its length, to be
 * consumed: the LDAP or TLS bytes follow) and *src; PROXY_MALFORMED sets *why (a static
 * string). p is borrowed for the call.
 */
enum proxy_status proxy_header_parse(const unsigned char *p, size_t len, size_t *used,
                                     struct proxy_source *src, const char **why);

#endif
