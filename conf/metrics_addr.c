/* metrics_listen's value: see metrics_addr.h. */
#include "conf/metrics_addr.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int metrics_addr_parse(struct metrics_addr *a, const char *s, char *why, size_t cap)
{
	memset(a, 0, sizeof(*a));
	const char *text = s;
	char host[64];
	const char *port;
	size_t n;
	if (s[0] == '[') { /* [v6]:port */
		const char *end = strchr(s, ']');
		n = end ? (size_t)(end - s - 1) : 0;
		port = end && end[1] == ':' ? end + 2 : NULL;
		s++;
	} else {
		port = strrchr(s, ':');
		n = port ? (size_t)(port - s) : 0;
		port = port ? port + 1 : NULL;
		if (port && memchr(s, ':', n)) /* a bare IPv6 address: its port is ambiguous */
			port = NULL;
	}
	if (!port || n == 0 || n >= sizeof(host) || !port[0] ||
	    strspn(port, "0123456789") != strlen(port) || strlen(port) > 5) {
		snprintf(why, cap,
		         "expected ADDRESS:PORT (127.0.0.1:9100, [::1]:9100), got \"%.200s\"",
		         text);
		return -1;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
	                         .ai_socktype = SOCK_STREAM},
	                *res = NULL;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0 || !res || res->ai_addrlen > sizeof(a->sa)) {
		snprintf(why, cap, "\"%s\" is not an IP address with a port (%s)", host,
		         rc ? gai_strerror(rc) : "no address");
		if (res)
			freeaddrinfo(res);
		return -1;
	}
	long p = strtol(port, NULL, 10);
	if (p < 1 || p > 65535) {
		snprintf(why, cap, "port %s is not in 1..65535", port);
		freeaddrinfo(res);
		return -1;
	}
	memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
	a->salen = res->ai_addrlen;
	freeaddrinfo(res);
	if (a->sa.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&a->sa;
		a->loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->sa;
		a->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	snprintf(a->text, sizeof(a->text), "%s", text);
	a->set = true;
	return 0;
}
